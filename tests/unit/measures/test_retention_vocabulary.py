"""The language's and the frameworks' vocabulary is no detail of the work, on real text: names a
session imports from outside packages (`imported_name`), members of a language's builtin
objects (`builtin_member`), and a called name is not read as a file (a React + NestJS session,
tests/fixtures/sessions, and a Codex session of the validation set)."""

from __future__ import annotations

import pytest

from replay.measures.chains import score_sessions
from replay.measures.details import Reading, find_details, serialize
from replay.measures.noise import RULES, imported_names, project_names
from replay.measures.retention import Limits
from replay.measures.session_files import load_sessions

from paths import FIXTURES

FIXTURES = FIXTURES
CIPHER_BOX = FIXTURES / "sessions" / "claude-code-cipher-box-2-compactions.jsonl.gz"
CODEX = FIXTURES / "validation" / "codex-agentv-79-6eaddfe2f9-0.jsonl.gz"


@pytest.fixture(scope="module")
def cipher_box() -> str:
    """The serialized messages of the React + NestJS session."""
    return serialize(load_sessions([CIPHER_BOX])[0].messages)


def line_with(text: str, needle: str) -> str:
    """The first line of `text` holding `needle`."""
    return next(line for line in text.splitlines() if needle in line)


def test_names_imported_from_outside_packages(cipher_box: str) -> None:
    imported = imported_names(cipher_box)
    # `import { test, expect, Browser } from '@playwright/test'`, NestJS's decorators, React's hooks
    assert {"expect", "BrowserContext", "UseGuards", "useEffect", "Injectable"} <= imported
    # a relative import is the work's own code, and so is its monorepo package `@cipherbox/crypto`
    assert "from '../utils/multi-account'" in cipher_box and "createTestAccount" not in imported
    assert "} from '@cipherbox/crypto'" in cipher_box and "encryptVaultKeys" not in imported
    # a listing cut by the trim (`import { useState, useCal…[trimmed]`) imports nothing readable
    assert "trimmed" not in imported
    codex = load_sessions([CODEX])[0]
    names = imported_names(serialize(codex.messages), project_names([codex.cwd]))
    assert {"readFile", "createHash", "describe"} <= names  # node:fs/promises, node:crypto, bun
    assert imported_names("from flask import request\nimport os") == frozenset()
    # a package's folder under node_modules/ does not make it one of the project's own
    assert imported_names("import { useState } from 'react'\n"
                          "at /app/node_modules/react/index.js:3") == {"useState"}


def test_vocabulary_rules_on_lines_of_a_real_session(cipher_box: str) -> None:
    line = line_with(cipher_box, "console.log('[7.2] Charlie page URL:'")
    found = find_details(line)
    assert found.noise["console.log"] == "builtin_member"
    assert "console.log" not in found.values["path"]  # `log` is an extension; it is called
    found = find_details(line_with(cipher_box, "call `response.json()` on line 48"))
    assert "response.json" not in found.values["path"]
    assert find_details(line_with(cipher_box, "return JSON.parse(text)")).noise[
        "JSON.parse"] == "builtin_member"
    reading = Reading(imported=imported_names(cipher_box))
    found = find_details(line_with(cipher_box, "@UseGuards("), reading)
    assert found.noise["UseGuards"] == "imported_name"
    assert {"builtin_member", "imported_name"} <= set(RULES)


def test_no_reference_holds_the_vocabulary(cipher_box: str) -> None:
    imported = imported_names(cipher_box)
    report = score_sessions(load_sessions([CIPHER_BOX]), Limits())
    for compaction in report.sessions[0].compactions:
        names = compaction.reference["identifier"]
        assert names and not set(names) & imported
        assert not [name for name in names if name.split(".")[0] in ("console", "JSON")]
        assert not {"console.log", "response.json"} & set(compaction.reference["path"])
    first = report.sessions[0].compactions[0].reference["identifier"]
    assert "createTestAccount" in first and "setRevokingId" in first  # the work's own names


def test_go_imports_outside_the_module_and_library_members() -> None:
    session = load_sessions([FIXTURES / "sessions" /
                             "claude-code-entire-cli-3-compactions.jsonl.gz"])[0]
    text = serialize(session.messages)
    imported = imported_names(text, project_names([session.cwd]))
    # the standard library's and go-git's packages (`github.com/go-git/go-git/v5`: `git`) ...
    assert {"fmt", "strings", "filepath", "object", "git", "diffmatchpatch"} <= imported
    # ... not the project's own (`entire.io/cli/cmd/entire/cli/session`: its files are read)
    assert "entire.io/cli/cmd/entire/cli/session\"" in text
    assert not {"session", "checkpoint", "paths", "agent", "trailers"} & imported
    reading = Reading(project_names([session.cwd]), imported)
    found = find_details(line_with(text, "fmt.Errorf("), reading)
    assert found.noise["fmt.Errorf"] == "imported_name"
    found = find_details(line_with(text, "session IDs"), reading)
    assert found.noise["IDs"] == "plural_acronym" and "IDs" not in found.values["identifier"]
    # without the imports in sight: the standard library's members and React's hooks
    found = find_details("os.path.join(root) then strings.HasPrefix(s) in useEffect(() => {}); "
                         "session.NewState() and repoRoot.Join")
    assert found.noise == {"os.path.join": "library_api", "strings.HasPrefix": "library_api",
                           "useEffect": "library_api"}
    assert {"session.NewState", "repoRoot.Join"} <= set(found.values["identifier"])
    # a file named like a package is a file (the recall windows' `util.go`)
    found = find_details('if !strings.Contains(output, "util.go") { see path.ts and os.go')
    assert list(found.values["path"]) == ["util.go", "path.ts", "os.go"]
    assert {"library_api", "plural_acronym"} <= set(RULES)


def test_a_format_verb_and_the_working_directory_are_no_paths() -> None:
    found = find_details('filename := fmt.Sprintf("session-%s-%s.json", dateStr, idPrefix)')
    assert not found.values["path"]
    project = project_names(["/home/entity/projects/EntityProcess/agentv"])
    found = find_details("cd /home/entity/projects/EntityProcess/agentv && cat "
                         "/home/entity/projects/EntityProcess/agentv/src/cli.ts",
                         Reading(project))
    assert found.noise["/home/entity/projects/EntityProcess/agentv"] == "project_name"
    assert list(found.values["path"]) == ["/home/entity/projects/EntityProcess/agentv/src/cli.ts"]
