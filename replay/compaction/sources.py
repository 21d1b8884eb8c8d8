"""The production compaction prompts: where each is published, how to cut it, and its cached text.

`prompts/sources.toml` pins each prompt to a package version on a public registry, the package's
digest, the file inside it, the cut rules, and the length and sha256 of the text. The texts
themselves are never committed: `replay prompts sync` fetches them into `home()/prompts/`.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from replay.core.digest import sha256_hex
from replay.core.errors import InputError
from replay.core.files import write_atomic
from replay.core.paths import home, prompts_dir

SHA256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class JsLiteralCut(_Rule):
    """The first JavaScript literal (or `lit + lit` chain) whose value starts with `starts`.

    With `contains`, the chain's value must also contain it. `substitutions` maps the source text
    of a template literal's `${...}` expressions to their values.
    """

    kind: Literal["js-literal"]
    starts: str = Field(min_length=1)
    contains: str | None = None
    substitutions: dict[str, str] = {}


class ByteRangeCut(_Rule):
    """The bytes from the first `starts` through the first `through` after it, as UTF-8."""

    kind: Literal["bytes"]
    starts: str = Field(min_length=1)
    through: str = Field(min_length=1)


class WholeFileCut(_Rule):
    """The whole file, as UTF-8."""

    kind: Literal["file"]


Cut = Annotated[JsLiteralCut | ByteRangeCut | WholeFileCut, Field(discriminator="kind")]


class PromptPart(_Rule):
    """One message of a prompt: its role, where its text is, and the pinned length and hash.

    Role `summary-prefix` is not sent to the summarizer: it is the text the agent puts before
    the summary when it carries the summary back (Codex's native carrier). Roles `code` and
    `redaction` are source files of an agent whose prompt is built by its code (Hermes: its
    context compressor and its redaction module, read by `replay.compaction.hermes`).

    The text is the cuts' texts joined, then stripped of surrounding whitespace if `trim`.
    `file` is a path inside the package; `*` and `?` match within one path segment, and the first
    matching file (in archive order) where every cut succeeds is used.
    """

    role: Literal["system", "user", "summary-prefix", "code", "redaction"]
    file: str = Field(min_length=1)
    cuts: list[Cut] = Field(alias="cut", min_length=1)
    trim: bool = False
    chars: int = Field(gt=0)
    sha256: SHA256


class PromptSource(_Rule):
    """Where one production prompt is published and how to get its text."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    agent: str
    license: str
    registry: Literal["npm", "pypi"]
    package: str
    version: str
    digest: str
    python: str | None = Field(default=None, pattern=r"^3\.\d+$")
    parts: list[PromptPart] = Field(alias="part", min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> PromptSource:
        prefix = "sha512-" if self.registry == "npm" else "sha256:"
        if not self.digest.startswith(prefix):
            raise ValueError(f"a {self.registry} digest starts with {prefix!r}")
        if (self.registry == "pypi") != (self.python is not None):
            raise ValueError("`python` (the wheel's Python version) is set for pypi packages only")
        roles = [part.role for part in self.parts]
        if len(set(roles)) != len(roles):
            raise ValueError(f"two parts with the same role: {roles}")
        return self

    @property
    def spec(self) -> str:
        """`package@version`, as users write it."""
        return f"{self.package}@{self.version}"


class PromptText(BaseModel):
    """A synced prompt: its texts by role and where they came from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    name: str
    agent: str
    registry: str
    package: str
    version: str
    digest: str
    parts: dict[str, str]
    synced_at: str

    @property
    def system(self) -> str | None:
        """The system message's text, for prompts that set one."""
        return self.parts.get("system")

    @property
    def user(self) -> str | None:
        """The user message's text, for prompts that send one."""
        return self.parts.get("user")


def sources_file() -> Path:
    """The bundled catalogue of prompt sources."""
    return prompts_dir() / "sources.toml"


def load_sources(path: Path | None = None) -> dict[str, PromptSource]:
    """Read the catalogue (default: `prompts/sources.toml`), by prompt name in file order."""
    path = path or sources_file()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        sources = [PromptSource.model_validate(entry) for entry in data.get("prompt", [])]
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read prompt sources {path}: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "entry"
        problem = "missing" if first["type"] == "missing" else first["msg"]
        raise InputError(f"invalid prompt sources {path}: a [[prompt]] entry: field {where}: "
                         f"{problem}") from None
    by_name = {source.name: source for source in sources}
    if len(by_name) != len(sources):
        raise InputError(f"invalid prompt sources {path}: two prompts with the same name")
    return by_name


def select(sources: dict[str, PromptSource], name: str) -> PromptSource:
    """The source named `name`; an InputError listing the names otherwise."""
    if name not in sources:
        raise InputError(f"unknown prompt {name!r}; known: {', '.join(sources)}")
    return sources[name]


def text_sha256(text: str) -> str:
    """The sha256 of a text's UTF-8 bytes, as pinned in the catalogue."""
    return sha256_hex(text)


def cache_path(name: str) -> Path:
    """Where the synced text of prompt `name` is kept."""
    return home() / "prompts" / f"{name}.json"


def save_prompt(prompt: PromptText) -> Path:
    """Write a synced prompt to the cache atomically; return its path."""
    return write_atomic(cache_path(prompt.name), prompt.model_dump_json(indent=2))


def cache_status(source: PromptSource) -> tuple[str, PromptText | None]:
    """`synced` with the cached prompt, or `missing` / `stale` (the cache differs from the pin)."""
    path = cache_path(source.name)
    if not path.exists():
        return "missing", None
    try:
        prompt = PromptText.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return "stale", None
    if prompt.package != source.package or prompt.version != source.version:
        return "stale", None
    pinned = {part.role: part.sha256 for part in source.parts}
    actual = {role: text_sha256(text) for role, text in prompt.parts.items()}
    return ("synced", prompt) if actual == pinned else ("stale", None)


def load_prompt(name: str, sources_path: Path | None = None) -> PromptText:
    """The synced text of prompt `name`, checked against its pinned hashes.

    Raises InputError for an unknown name, or a prompt not synced (or synced for another pin).
    """
    source = select(load_sources(sources_path), name)
    status, prompt = cache_status(source)
    if prompt is None:
        detail = "is not synced" if status == "missing" else f"is not synced for {source.spec}"
        raise InputError(f"prompt {name!r} {detail}: run `replay prompts sync {name}`")
    return prompt
