"""The one atomic write (replay.core.files.write_atomic): whole or not at all, on real files."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from replay.core.files import write_atomic


def test_it_writes_text_and_bytes_into_new_folders_and_replaces_the_old_file(
        tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "trace.json"
    assert write_atomic(target, "ça — 日本") == target
    assert target.read_bytes() == "ça — 日本".encode()
    write_atomic(target, b"\x00\xffnew")
    assert target.read_bytes() == b"\x00\xffnew"
    plain = tmp_path / "plain"
    plain.write_bytes(b"")
    assert target.stat().st_mode == plain.stat().st_mode  # the umask's mode, as open gives
    assert sorted(p.name for p in target.parent.iterdir()) == ["trace.json"]


def test_a_write_that_fails_leaves_what_was_there_and_no_scratch_file(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    (target / "inside").mkdir(parents=True)  # a folder where the file should go
    with pytest.raises(OSError):
        write_atomic(target, "text")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]
    assert [p.name for p in target.iterdir()] == ["inside"]


def test_writers_of_one_path_never_mix(tmp_path: Path) -> None:
    target = tmp_path / "tests.log"
    texts = [bytes([65 + n]) * 200_000 for n in range(8)]
    seen: list[bytes] = []

    def write(data: bytes) -> None:
        for _ in range(20):
            write_atomic(target, data)
            seen.append(target.read_bytes())

    threads = [threading.Thread(target=write, args=(data,)) for data in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 8 * 20 and set(seen) <= set(texts)  # every read is one whole write
    assert [p.name for p in tmp_path.iterdir()] == ["tests.log"]
