"""The panel's control tasks: short fixtures, every fact in a few lines of output."""

from __future__ import annotations

from hermes_panel_base import (
    ABEVAL,
    DEFERRAL,
    READTOOL,
    PanelTask,
    Read,
    Source,
    fact_task,
    read_task,
)
from panel_fixtures import bash, turn

PACKAGE_JSON = ('{\n  "name": "demo-api",\n  "version": "4.2.1",\n  "scripts": {\n'
                '    "test": "vitest run",\n    "build": "tsc -p .",\n'
                '    "build:prod": "tsc -p . && node scripts/bundle.js"\n  },\n'
                '  "dependencies": {\n    "left-pad": "1.3.0",\n    "express": "5.1.2",\n'
                '    "pino": "10.0.3"\n  }\n}\n')
APP_JS = ("import express from 'express';\nimport { logger } from './log.js';\n\n"
          "// Exponential backoff with full jitter. Base 250ms, capped at 30s.\n"
          "export function retryDelay(attempt) {\n  const base = 250;\n  const cap = 30000;\n"
          "  const exp = Math.min(cap, base * 2 ** attempt);\n"
          "  return Math.floor(Math.random() * exp);\n}\n")
NOTES = ("Team sync notes\n- ship the payments retry fix\n- audit the staging TLS certs\n"
         "- rotate the API keys quarterly\n- close out the Q3 incident review\n")
SERVICE = ("import requests\n\ndef fetch_a(url):\n    return requests.get(url, timeout=30)\n\n"
           "def fetch_b(url):\n    return requests.post(url, timeout=30)\n\n"
           "def fetch_c(url):\n    return requests.head(url, timeout=30)\n")
HANDLERS = ("def fast_handler():\n    timeout = 10\n    return timeout\n\n"
            "def slow_handler():\n    timeout = 10\n    return timeout\n\n"
            "def medium_handler():\n    timeout = 10\n    return timeout\n")
CHECK_HANDLERS = ("import handlers\nok = handlers.slow_handler() == 60 and "
                  "handlers.fast_handler() == 10 and handlers.medium_handler() == 10\n"
                  "print('HANDLERS_OK_552' if ok else 'HANDLERS_BAD')\n")


def records_log() -> str:
    lines = [f"2026-08-02T10:{i % 60:02d}:{i % 60:02d} INFO record {i} ok" for i in range(600)]
    lines[420] = "ANOMALY: checksum drift detected in shard 7 (code X99Q)"
    return "\n".join(lines) + "\n"


def dependency_version() -> PanelTask:
    return read_task(
        "dependency_version", "control", "Which versions does the project pin?",
        Read("package.json", PACKAGE_JSON, "Let me read the manifest."),
        {"left_pad": ("string", "the left-pad version"), "express": ("string", "the express "
         "version"), "project_version": ("string", "the project's own version")},
        {"left_pad": "1.3.0", "express": "5.1.2", "project_version": "4.2.1"},
        Source("readtool: lockfile tarpit (LEFT_PAD_VERSION)", READTOOL,
               "package.json only; the 80,000-line lockfile is left out",
               {"left_pad": "LEFT_PAD_VERSION"}))


def retry_backoff() -> PanelTask:
    return read_task(
        "retry_backoff", "control", "How does src/app.js back off between retries?",
        Read("src/app.js", APP_JS, "Let me read the app."),
        {"base_ms": ("integer", "the base delay in ms"), "cap_ms": ("integer", "the cap in ms"),
         "jitter": ("string", "the kind of jitter, as the comment names it")},
        {"base_ms": 250, "cap_ms": 30000, "jitter": "full jitter"},
        Source("readtool: minified bundle (RETRY_BASE_MS, RETRY_CAP_MS)", READTOOL,
               "src/app.js only; the 600 KB bundle is left out",
               {"base_ms": "RETRY_BASE_MS", "cap_ms": "RETRY_CAP_MS"}))


def meeting_notes() -> PanelTask:
    return read_task(
        "meeting_notes", "control", "What did the last team sync note under notes/ say?",
        Read("notes/Meeting notes r\u00e9sum\u00e9 3.04 PM.txt", NOTES, "Let me read the notes.",
             "cat notes/*"),
        {"third_item": ("string", "the third item, without its list marker"),
         "first_item": ("string", "the first item, without its list marker")},
        {"third_item": "rotate the API keys quarterly",
         "first_item": "ship the payments retry fix"},
        Source("readtool: unicode filename (NOTES_BULLET_3)", READTOOL,
               "file name without the narrow no-break spaces and NFD accents; the file keeps "
               "its list markers, the expected items have none (as NOTES_BULLET_3)",
               {"third_item": "NOTES_BULLET_3"}))


def server_free_controls() -> list[PanelTask]:
    """backup, refactor, three_files, active_config: core_tool_deferral's fixtures."""
    backup = fact_task(
        "backup", "control", "One repository under repos/ holds the data that needs nightly "
        "backups; find which, by its contents.",
        {"repos/sparks-data/data.txt": "important\n", "repos/toybox/junk.txt": "junk\n"},
        [turn("Let me list the repositories.", bash("ls repos")),
         turn("And find the important data.", bash("grep -rl important repos"))],
        {"repo": ("string", "the repository holding the important data"),
         "other": ("string", "the other repository")},
        {"repo": "sparks-data", "other": "toybox"},
        Source("longrange_backup_pipeline (BACKUP_REPO)", DEFERRAL,
               planted={"repo": "BACKUP_REPO"}))
    refactor = fact_task(
        "refactor", "control", "Every requests call in src/ should move to a longer timeout; "
        "first find the call sites.",
        {"src/service.py": SERVICE, "src/util.py": "def helper():\n    return 1\n"},
        [turn("Let me read the service.", bash("cat src/service.py"))],
        {"call_sites": ("integer", "how many requests calls there are"),
         "timeout": ("integer", "their current timeout"),
         "functions": ("array", "the functions making them, in file order")},
        {"call_sites": 3, "timeout": 30, "functions": ["fetch_a", "fetch_b", "fetch_c"]},
        Source("eager_refactor_control", DEFERRAL,
               planted={"call_sites": "the call-site count g_control checks"}))
    three_files = read_task(
        "three_files", "control", "What does the workspace's README say it is for?",
        Read("README.md", "workspace for the three-file task\n", "Let me read the README."),
        {"purpose": ("string", "the README's sentence")},
        {"purpose": "workspace for the three-file task"},
        Source("todo_three_files", DEFERRAL))
    active_config = fact_task(
        "active_config", "control", "Where is the retry limit configured, and to what?",
        {"conf/app.ini": "[net]\nretry_limit = 7\nbackoff = 2\n",
         "conf/old.ini": "[net]\n# retry_limit moved to app.ini\n"},
        [turn("Let me read the config files.", bash("head conf/*.ini"))],
        {"retry_limit": ("integer", "the active retry limit"),
         "backoff": ("integer", "the backoff beside it"),
         "active_file": ("string", "the file that sets it (path)")},
        {"retry_limit": 7, "backoff": 2, "active_file": "conf/app.ini"},
        Source("config_grep_distractor", DEFERRAL,
               planted={"retry_limit": "the retry_limit g_distractor checks"}))
    return [backup, refactor, three_files, active_config]


def abeval_controls() -> list[PanelTask]:
    """targeted_edit, package_versions, checksum_anomaly: the core-toolset A/B's fixtures."""
    targeted_edit = fact_task(
        "targeted_edit", "control", "Only the timeout inside the slow handler must change; "
        "find it and what the check script prints on success.",
        {"handlers.py": HANDLERS, "check_handlers.py": CHECK_HANDLERS},
        [turn("Let me read the handlers with line numbers.", bash("cat -n handlers.py")),
         turn("And the check script.", bash("cat check_handlers.py"))],
        {"line": ("integer", "the line of the slow handler's timeout"),
         "identical_lines": ("integer", "how many identical timeout lines there are"),
         "success_marker": ("string", "what the check prints on success")},
        {"line": 6, "identical_lines": 3, "success_marker": "HANDLERS_OK_552"},
        Source("err_ambiguous_edit", ABEVAL,
               planted={"success_marker": "err_ambiguous_edit's success check"}))
    package_versions = fact_task(
        "package_versions", "control", "Collect the versions of the three packages.",
        {"pkg_a/version.txt": "1.4.2\n", "pkg_b/version.txt": "0.9.7\n",
         "pkg_c/version.txt": "3.2.1\n"},
        [turn("Let me read the version files.", bash("cat pkg_*/version.txt"))],
        {"versions": ("array", "the versions of pkg_a, pkg_b and pkg_c, in that order")},
        {"versions": ["1.4.2", "0.9.7", "3.2.1"]},
        Source("err_multi_dir", ABEVAL,
               planted={"versions": "err_multi_dir's success check"}))
    checksum_anomaly = read_task(
        "checksum_anomaly", "control", "records.log holds exactly one anomaly line; find it.",
        Read("records.log", records_log(), "Let me search the log.", "grep -n ANOMALY records.log"),
        {"line": ("integer", "its line number"), "shard": ("integer", "the shard it names"),
         "code": ("string", "the anomaly code")},
        {"line": 421, "shard": 7, "code": "X99Q"},
        Source("err_big_file_read", ABEVAL, "6,000 log lines scaled to 600; the anomaly line "
               "is the fixture's, at the same relative place",
               {"code": "err_big_file_read's success check"}))
    return [targeted_edit, package_versions, checksum_anomaly]


def controls() -> list[PanelTask]:
    """The ten controls, in the study's order."""
    first = server_free_controls()
    ab = abeval_controls()
    return [*first, dependency_version(), retry_backoff(), meeting_notes(), *ab]
