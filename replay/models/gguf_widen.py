"""Widening a GGUF file's Q4_1 weights to Q8_0, once, for llama.cpp's faster CPU kernels.

llama.cpp's CPU backend multiplies Q8_0 (and Q4_0) matrices with its tiled kernels (llamafile's
sgemm and the repacked AVX2 paths) but Q4_1 ones only with its generic dot products: the
embedded SmolLM2 file (Q4_1) prefilled a 1,076-token prompt in 15.7 CPU seconds, and 8.3 once
widened to Q8_0. Q8_0 holds every Q4_1 value to within a 256th of its block's range, so the
model is the same model up to that rounding; the file grows by half (98 MB to 145 MB).

The widened copy is kept in `REPLAY_HOME/models`, named by the source's name and a digest of
its path, size and modification time, and written whole or not at all.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from replay.core.digest import sha256_hex
from replay.core.errors import InputError
from replay.core.paths import home

WIDENED = {"q8_0": "Q8_0"}  # the setting's values, and the GGML type each names


def widened_path(source: Path, widen: str) -> Path:
    """Where the widened copy of `source` is kept."""
    stat = source.stat()
    tag = sha256_hex(f"{source.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}")[:12]
    return home() / "models" / f"{source.stem}.{tag}.{widen}.gguf"


def widened(source: Path, widen: str) -> Path:
    """The copy of `source` with its Q4_1 tensors as `widen` (`q8_0`), made at the first call.

    Raises `InputError` for another target, or a source that cannot be read as GGUF."""
    if widen not in WIDENED:
        raise InputError(f"widen {widen!r}: only {', '.join(WIDENED)} is supported")
    target = widened_path(source, widen)
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = target.with_name(f".{target.name}.{secrets.token_hex(4)}.partial")
        try:
            _write(source, scratch, WIDENED[widen])
            os.replace(scratch, target)
        finally:
            scratch.unlink(missing_ok=True)
    return target


def _write(source: Path, out: Path, kind: str) -> None:
    import gguf
    from gguf.quants import dequantize, quantize

    try:
        reader = gguf.GGUFReader(source)
    except (ValueError, OSError) as exc:
        raise InputError(f"{source}: not a GGUF file llama.cpp's reader can open: {exc}") from None
    writer = gguf.GGUFWriter(out, reader.fields["general.architecture"].contents())
    for field in reader.fields.values():
        if field.name == "general.architecture" or field.name.startswith("GGUF."):
            continue  # the writer writes these itself
        array = field.types[0] == gguf.GGUFValueType.ARRAY
        writer.add_key_value(field.name, field.contents(), field.types[0],
                             sub_type=field.types[-1] if array else None)
    wide = gguf.GGMLQuantizationType[kind]
    for tensor in reader.tensors:
        data, kind_of = tensor.data, tensor.tensor_type
        if kind_of == gguf.GGMLQuantizationType.Q4_1:
            data, kind_of = quantize(dequantize(data, kind_of), wide), wide
        writer.add_tensor(tensor.name, data, raw_shape=data.shape, raw_dtype=kind_of)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
