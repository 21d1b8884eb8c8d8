"""SWE-bench records: validated rows, loaders for files and Hugging Face names, and suites."""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from replay.core.errors import InputError
from replay.core.names import RULE, unsafe
from replay.core.paths import instances_dir

DEFAULT_PARSER = "parse_log_pytest"


class Instance(BaseModel):
    """One SWE-bench record, as the engine needs it."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    instance_id: str = Field(min_length=1)
    repo: str = Field(min_length=1)
    base_commit: str = Field(min_length=7)
    patch: str = Field(min_length=1)
    test_patch: str = Field(min_length=1)
    problem_statement: str
    FAIL_TO_PASS: list[str] = Field(min_length=1)
    PASS_TO_PASS: list[str]
    version: str
    environment_setup_commit: str = ""
    hints_text: str = ""
    created_at: str = ""
    eval_script: str = ""
    log_parser: str = DEFAULT_PARSER
    eval_type: Literal["pass_and_fail", "fail_only"] = "pass_and_fail"
    image: str = ""
    # Set only for instances whose repository is written in this project (the demo suite):
    # the directory holding the base commit's files.
    repo_files: Path | None = None
    # Set for instances of a bundled suite whose folder holds files of theirs: the instance's
    # folder in the suite (history.json + snapshot.diff, probes.json; a demo's instance.json
    # and repo/ too).
    bundle: Path | None = None

    @field_validator("instance_id")
    @classmethod
    def _safe_id(cls, value: str) -> str:
        """An instance id names folders (its environment, its logs): a safe name only."""
        if unsafe(value):
            raise ValueError(f"{value!r} is not a safe id: it names files and folders, so {RULE}")
        return value

    @field_validator("log_parser")
    @classmethod
    def _known_parser(cls, value: str) -> str:
        """A parser swebench has, checked before any test runs (grading looks it up after;
        swebench takes seconds to import, so the default parser is taken as known)."""
        if value == DEFAULT_PARSER:
            return value
        from swebench.harness.log_parsers import PARSER_REGISTRY

        if value not in PARSER_REGISTRY:
            close = difflib.get_close_matches(value, list(PARSER_REGISTRY), n=1, cutoff=0.8)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise ValueError(f"unknown log parser {value!r}{hint}")
        return value

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _decode_json_list(cls, value: Any) -> Any:
        """SWE-bench files store the test lists as JSON-encoded strings."""
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"not a JSON list: {exc.msg}") from None
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) else value


def parse_row(row: Any, where: str) -> Instance:
    """Validate one record; the error names the instance, the field and where it came from."""
    if not isinstance(row, dict):
        raise InputError(f"{where}: a record must be a JSON object, got {type(row).__name__}")
    ident = row.get("instance_id") or "<no instance_id>"
    try:
        return Instance.model_validate(row)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "record"
        problem = ("missing" if first["type"] == "missing" else
                   first["msg"].removeprefix("Value error, "))
        raise InputError(f"{where}: instance {ident}: field {field}: {problem}") from None


def load_file(path: Path) -> list[Instance]:
    """Read records from a .json, .jsonl or .parquet file."""
    if not path.is_file():
        raise InputError(f"dataset file not found: {path}")
    suffix = path.suffix.lower()
    try:
        if suffix == ".jsonl":
            return unique(list(_load_jsonl(path)), str(path))
        if suffix == ".json":
            return unique(_load_json(path), str(path))
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); a dataset "
                         "is UTF-8 JSON or JSON Lines, or parquet") from None
    if suffix == ".parquet":
        return unique(_load_parquet(path), str(path))
    raise InputError(f"{path}: unknown dataset format {suffix!r} (use .json, .jsonl or .parquet)")


def _load_jsonl(path: Path) -> Iterable[Instance]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{where}: malformed JSON line: {exc.msg}") from None
            yield parse_row(row, where)


def _load_json(path: Path) -> list[Instance]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
    rows = data if isinstance(data, list) else [data]
    return [parse_row(row, f"{path}[{i}]") for i, row in enumerate(rows)]


def _load_parquet(path: Path) -> list[Instance]:
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"{path}: not a readable parquet file: {exc}") from None
    return [parse_row(row, f"{path}[{i}]") for i, row in enumerate(rows)]


def load_hub(name: str, split: str = "test") -> list[Instance]:
    """Read a Hugging Face dataset by name (cached by `datasets`; one clear error offline)."""
    try:
        import datasets
    except ImportError:  # pragma: no cover - datasets comes with swebench
        raise InputError("loading a Hugging Face dataset needs the 'datasets' package") from None
    try:
        rows = datasets.load_dataset(name, split=split)
    except Exception as exc:  # network, unknown name, missing split
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(
            f"cannot load Hugging Face dataset {name!r} (split {split!r}): {reason}; "
            "offline, download it once or pass a .jsonl/.parquet file with --dataset"
        ) from None
    return unique([parse_row(dict(row), f"{name}[{i}]") for i, row in enumerate(rows)], name)


def unique(rows: list[Instance], where: str) -> list[Instance]:
    """`rows`, refused when two share an instance id (a selection by id would pick one of
    them silently, and both would write the same environment and logs)."""
    seen: dict[str, int] = {}
    for index, row in enumerate(rows):
        first = seen.setdefault(row.instance_id, index)
        if first != index:
            raise InputError(f"{where}: instance id {row.instance_id} appears twice (records "
                             f"{first} and {index}, counting from 0)")
    return rows


def load_dataset(source: str, split: str = "test") -> list[Instance]:
    """Load records from a file path or, when no such file exists, a Hugging Face name."""
    path = Path(source)
    if path.suffix.lower() in {".json", ".jsonl", ".parquet"} or path.exists():
        return load_file(path)
    if re.fullmatch(r"[\w.-]+/[\w.-]+", source):
        return load_hub(source, split)
    raise InputError(f"dataset not found: {source} (a .json/.jsonl/.parquet file or a HF name)")


class Suite(BaseModel):
    """A named set of instances with the rule that chose them."""

    name: str
    description: str = ""
    rule: str = ""
    instances: list[Instance]


def suite_names() -> list[str]:
    """Names of the bundled suites."""
    return sorted(p.parent.name for p in instances_dir().glob("*/suite.toml"))


def _suite_folder(name: str) -> Path:
    return Path(name) if "/" in name or Path(name).is_dir() else instances_dir() / name


def load_suite(name: str, dataset: str | None = None) -> Suite:
    """Load a suite by bundled name or folder: local instance folders, or ids from a dataset
    (the suite's own, or `dataset` in its place), each row with the suite's folder of its files
    (`Instance.bundle`) when there is one."""
    folder = _suite_folder(name)
    path = folder / "suite.toml"
    if not path.is_file():
        known = ", ".join(suite_names()) or "none"
        raise InputError(f"unknown suite {name!r} (bundled suites: {known})")
    spec = _read_suite(path)
    ids = _suite_ids(path, spec)
    source = dataset or spec.get("dataset")
    if source:
        rows = [_with_bundle(row, folder / row.instance_id)
                for row in select(load_dataset(source), ids=ids)]
    else:
        rows = [load_instance_dir(path.parent / ident) for ident in ids]
    return Suite(name=folder.name, description=spec.get("description", ""),
                 rule=spec.get("rule", ""), instances=rows)


def _read_suite(path: Path) -> dict[str, Any]:
    """suite.toml's table; its text fields must be text."""
    try:
        spec = tomllib.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: malformed TOML: {exc}") from None
    for key in ("description", "rule", "dataset"):
        if not isinstance(spec.get(key, ""), str):
            raise InputError(f"{path}: `{key}` must be text, got {spec[key]!r}")
    return spec


def _suite_ids(path: Path, spec: dict[str, Any]) -> list[str]:
    """The suite's `instances`: a list of distinct safe ids (each may name a folder in it)."""
    ids = spec.get("instances", [])
    if not isinstance(ids, list) or not all(isinstance(ident, str) for ident in ids):
        raise InputError(f"{path}: `instances` must be a list of instance ids, e.g. "
                         '["owner__repo-123"]')
    for ident in ids:
        if unsafe(ident):
            raise InputError(f"{path}: instance id {ident!r} is not a safe id: it names a "
                             f"folder, so {RULE}")
    doubled = sorted({ident for ident in ids if ids.count(ident) > 1})
    if doubled:
        raise InputError(f"{path}: instance id {doubled[0]} appears twice in `instances`")
    return ids


def is_dataset_backed(name: str) -> bool:
    """Whether suite `name` reads its instances from a dataset (its suite.toml names one)."""
    path = _suite_folder(name) / "suite.toml"
    try:
        return bool(tomllib.loads(path.read_text(encoding="utf-8")).get("dataset"))
    except (OSError, tomllib.TOMLDecodeError):
        return False


def _with_bundle(row: Instance, folder: Path) -> Instance:
    """A dataset row with the suite's folder of its files, when the suite ships one."""
    return row.model_copy(update={"bundle": folder}) if folder.is_dir() else row


def load_instance_dir(directory: Path) -> Instance:
    """Load an instance written in this project: instance.json plus the repository's files."""
    record = directory / "instance.json"
    if not record.is_file():
        raise InputError(f"instance directory without instance.json: {directory}")
    try:
        row = json.loads(record.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"{record}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{record}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
    if isinstance(row, dict):
        row = {**row, "repo_files": directory / "repo", "bundle": directory}
    return parse_row(row, str(record))


def select(
    rows: Sequence[Instance],
    ids: Sequence[str] = (),
    pattern: str | None = None,
    span: str | None = None,
) -> list[Instance]:
    """Choose instances by exact id (in the order given), regular expression and slice `a:b`."""
    chosen = list(rows)
    if ids:
        by_id = {row.instance_id: row for row in chosen}
        unknown = [ident for ident in ids if ident not in by_id]
        if unknown:
            raise InputError(f"unknown instance id: {', '.join(unknown)}")
        chosen = [by_id[ident] for ident in dict.fromkeys(ids)]
    if pattern:
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise InputError(f"bad --filter regular expression {pattern!r}: {exc}") from None
        chosen = [row for row in chosen if regex.search(row.instance_id)]
    if span:
        chosen = chosen[_parse_slice(span)]
    return chosen


def _parse_slice(span: str) -> slice:
    match = re.fullmatch(r"(-?\d*):(-?\d*)", span.strip())
    if not match:
        raise InputError(f"bad --slice {span!r}: use START:STOP, e.g. 0:10")
    start, stop = (int(part) if part else None for part in match.groups())
    return slice(start, stop)
