"""The panel's ten controls: short fixtures (and one query-only task), every source under 2,000
characters. Each rebuilds its Hermes fixture's files (the same planted values)."""

from __future__ import annotations

from reme_panel import (
    ABEVAL,
    DEFERRAL,
    FOLLOW_UP,
    READTOOL,
    ReMeTask,
    Source,
    listing,
    read,
    reads,
    reme_task,
    source_view,
)

SHORT = "Control: short_fixture"
QUERY_ONLY = "Control: query_only"
SERVICE = ("import requests\n\ndef fetch_a(url):\n    return requests.get(url, timeout=30)\n\n"
           "def fetch_b(url):\n    return requests.post(url, timeout=30)\n\n"
           "def fetch_c(url):\n    return requests.head(url, timeout=30)\n")
PACKAGE_JSON = ('{\n  "name": "demo-api",\n  "version": "4.2.1",\n  "scripts": {\n'
                '    "test": "vitest run",\n    "build": "tsc -p .",\n'
                '    "build:prod": "tsc -p . && node scripts/bundle.js"\n  },\n'
                '  "dependencies": {\n    "left-pad": "1.3.0",\n    "express": "5.1.2",\n'
                '    "pino": "10.0.3"\n  }\n}\n')
APP_JS = ("import express from 'express';\nimport { logger } from './log.js';\n\n"
          "// Exponential backoff with full jitter. Base 250ms, capped at 30s.\n"
          "export function retryDelay(attempt) {\n  const base = 250;\n  const cap = 30000;\n"
          "  const exp = Math.min(cap, base * 2 ** attempt);\n"
          "  return Math.floor(Math.random() * exp);\n}\n\nexport function createApp() {\n"
          "  const app = express();\n  app.get('/healthz', (_req, res) => res.send('ok'));\n"
          "  return app;\n}\n")
NOTES = ("Team sync notes\n- ship the payments retry fix\n- audit the staging TLS certs\n"
         "- rotate the API keys quarterly\n- close out the Q3 incident review\n")
HANDLERS = ("def fast_handler():\n    timeout = 10\n    return timeout\n\n"
            "def slow_handler():\n    timeout = 10\n    return timeout\n\n"
            "def medium_handler():\n    timeout = 10\n    return timeout\n")
CHECK_HANDLERS = ("import handlers\nok = handlers.slow_handler() == 60 and "
                  "handlers.fast_handler() == 10 and handlers.medium_handler() == 10\n"
                  "print('HANDLERS_OK_552' if ok else 'HANDLERS_BAD')\n")
FOLLOW_UP_NOTES = (f"{FOLLOW_UP} Give each bullet's text without its list marker.")


def _backup() -> ReMeTask:
    """backup: which repository needs nightly backups (f_longrange)."""
    return reme_task(
        "backup", SHORT,
        "A while back I told you one of my repos needed nightly backups — find which repo that "
        "was in our past conversations (do not guess). Then: write backup.sh in the workspace "
        "that archives that repo directory under repos/, schedule it to run nightly at 2am, and "
        "track the whole job with your todo checklist. Report back which repo it was and what "
        "you set up.",
        {"repos/sparks-data/data.txt": "important\n", "repos/toybox/junk.txt": "junk\n"},
        [reads("Let me see what the workspace holds.", listing()),
         reads("Let me read both repositories' files.", read("repos/sparks-data/data.txt"),
               read("repos/toybox/junk.txt"))],
        {"repo": ("string", "the repository that needs nightly backups"),
         "ignored_repo": ("string", "the other repository, not to back up"),
         "data_text": ("string", "the text of the backed-up repository's data file")},
        {"repo": "sparks-data", "ignored_repo": "toybox", "data_text": "important"},
        Source("longrange_backup_pipeline (BACKUP_REPO)", DEFERRAL, "f_longrange's two "
               "repositories; read-only: nothing is written and no cron job is created"))


def _refactor() -> ReMeTask:
    """refactor: the requests calls' timeout and call sites (f_control)."""
    return reme_task(
        "refactor", SHORT,
        "In src/, every requests call uses timeout=30. Bump them all to timeout=45, add a "
        "CHANGELOG.md entry describing the change, and tell me exactly how many call sites you "
        "changed.",
        {"src/service.py": SERVICE, "src/util.py": "def helper():\n    return 1\n",
         "CHANGELOG.md": "# Changelog\n\n## 1.0\n- initial\n"},
        [reads("Let me read the sources.", read("src/service.py"), read("src/util.py")),
         reads("And the changelog.", read("CHANGELOG.md"))],
        {"old_timeout": ("integer", "the current timeout of the calls"),
         "call_sites": ("integer", "how many requests call sites there are"),
         "functions": ("array", "the functions making them, in file order"),
         "methods": ("array", "the requests methods they call, in file order"),
         "old_version": ("string", "the changelog's latest version")},
        {"old_timeout": 30, "call_sites": 3, "functions": ["fetch_a", "fetch_b", "fetch_c"],
         "methods": ["get", "post", "head"], "old_version": "1.0"},
        Source("eager_refactor_control", DEFERRAL, "f_control's files; read-only"))


def _three_files() -> ReMeTask:
    """three_files: the query's own facts (f_todo)."""
    return reme_task(
        "three_files", QUERY_ONLY,
        "This is a multi-step job — track it with your todo checklist tool and keep it updated "
        "as you go, marking each step completed when verified. Steps: (1) create greet.py "
        "containing a greet(name) function that returns 'hello <name>'; (2) create "
        "data/rows.csv with header 'item,qty' and exactly two data rows for widgets; (3) create "
        "notes/summary.md stating how many files you created. Finish only when all three are "
        "done and checked off.",
        {"README.md": "workspace for the three-file task\n"},
        [reads("Let me read the workspace's README.", read("README.md"))],
        {"file_count": ("integer", "how many files the job creates"),
         "header": ("string", "the CSV header"),
         "data_rows": ("integer", "how many data rows the CSV has")},
        {"file_count": 3, "header": "item,qty", "data_rows": 2},
        Source("todo_three_files", DEFERRAL, "f_todo's README; the facts are the query's"),
        derived={"file_count": "the query's three numbered steps",
                 "data_rows": "the query's 'exactly two data rows'"})


def _active_config() -> ReMeTask:
    """active_config: where retry_limit is set now (f_distractor)."""
    return reme_task(
        "active_config", SHORT, "Search this workspace for wherever the retry_limit setting is "
        "configured and tell me its current value.",
        {"conf/app.ini": "[net]\nretry_limit = 7\nbackoff = 2\n",
         "conf/old.ini": "[net]\n# retry_limit moved to app.ini\n"},
        [reads("Let me see what the workspace holds.", listing()),
         reads("Let me read both config files.", read("conf/app.ini"), read("conf/old.ini"))],
        {"retry_limit": ("integer", "the current retry_limit"),
         "backoff": ("integer", "the backoff set beside it"),
         "active_file": ("string", "the file that sets it (relative path)"),
         "old_file": ("string", "the file it moved from (relative path)")},
        {"retry_limit": 7, "backoff": 2, "active_file": "conf/app.ini",
         "old_file": "conf/old.ini"},
        Source("config_grep_distractor", DEFERRAL, "f_distractor's files"))


def deferral_controls() -> list[ReMeTask]:
    """backup, refactor, three_files, active_config: core_tool_deferral's fixtures."""
    return [_backup(), _refactor(), _three_files(), _active_config()]


def readtool_controls() -> list[ReMeTask]:
    """dependency_version, retry_backoff, meeting_notes: the read-tool eval's workspace."""
    dependency = reme_task(
        "dependency_version", SHORT, "What exact left-pad version is pinned, and which file "
        "declares the test script? Record the package scripts for a handoff.",
        {"package.json": PACKAGE_JSON},
        [reads("Let me see what the workspace holds.", listing()),
         reads("Let me read the manifest.", read("package.json"))],
        {"version": ("string", "the pinned left-pad version"),
         "declaration": ("string", "the file declaring the test script"),
         "test": ("string", "the test script"), "build": ("string", "the build script"),
         "package_version": ("string", "the package's own version")},
        {"version": "1.3.0", "declaration": "package.json", "test": "vitest run",
         "build": "tsc -p .", "package_version": "4.2.1"},
        Source("readtool: lockfile tarpit (LEFT_PAD_VERSION)", READTOOL,
               "package.json only; the 80,000-line package-lock.json is left out"))
    retry = reme_task(
        "retry_backoff", SHORT,
        "Find the retry-delay function in src/ and explain its base, growth, cap and jitter.",
        {"src/app.js": APP_JS},
        [reads("Let me see what the workspace holds.", listing()),
         reads("Let me read the app.", read("src/app.js"))],
        {"base_ms": ("integer", "the base delay in ms"), "cap_ms": ("integer", "the cap in ms"),
         "growth_factor": ("integer", "the factor the delay grows by per attempt"),
         "jitter": ("string", "the jitter, as one snake_case term"),
         "function": ("string", "the function's name")},
        {"base_ms": 250, "cap_ms": 30000, "growth_factor": 2,
         "jitter": "uniform_integer_below_bound", "function": "retryDelay"},
        Source("readtool: minified bundle (RETRY_BASE_MS, RETRY_CAP_MS)", READTOOL,
               "src/app.js only; the 600 KB src/app.min.js is left out"),
        derived={"jitter": "src/app.js: Math.floor(Math.random() * exp)"})
    notes = reme_task(
        "meeting_notes", SHORT, "Read the meeting notes and report the third bullet exactly, "
        "retaining the other agreed actions.",
        {"notes/Meeting notes 3.04 PM.txt": NOTES},
        [reads("Let me read the notes.", read("notes/Meeting notes 3.04 PM.txt"))],
        {"third": ("string", "the third bullet's text, without its list marker"),
         "first": ("string", "the first bullet's text, without its list marker"),
         "second": ("string", "the second bullet's text, without its list marker"),
         "fourth": ("string", "the fourth bullet's text, without its list marker")},
        {"third": "rotate the API keys quarterly", "first": "ship the payments retry fix",
         "second": "audit the staging TLS certs", "fourth": "close out the Q3 incident review"},
        Source("readtool: unicode filename (NOTES_BULLET_3)", READTOOL, "the file name without "
               "its narrow no-break spaces and accents; the file keeps its list markers"),
        question=FOLLOW_UP_NOTES)
    return [dependency, retry, notes]


def records_lines() -> list[str]:
    """err_big_file_read's records.log: 6,000 lines, the anomaly at index 4200."""
    lines = [f"2026-08-02T10:{i % 60:02d}:{i % 60:02d} INFO record {i} ok" for i in range(6000)]
    lines[4200] = "ANOMALY: checksum drift detected in shard 7 (code X99Q)"
    return lines


def abeval_controls() -> list[ReMeTask]:
    """targeted_edit, package_versions, checksum_anomaly: the core-toolset A/B eval's sandbox."""
    edit = reme_task(
        "targeted_edit", SHORT,
        "In ./handlers.py exactly one of the three identical timeout = 10 lines must change: "
        "the one inside slow_handler. Change it to timeout = 60 using the patch tool. Then run "
        "python3 check_handlers.py from . and reply with its output.",
        {"handlers.py": HANDLERS, "check_handlers.py": CHECK_HANDLERS},
        [reads("Let me read the handlers and the check.", read("handlers.py"),
               read("check_handlers.py"))],
        {"target": ("string", "the handler to change"),
         "original_timeouts": ("object", "each handler's timeout now"),
         "required_timeouts": ("object", "each handler's timeout the check requires"),
         "success_marker": ("string", "what the check prints on success")},
        {"target": "slow_handler",
         "original_timeouts": {"fast_handler": 10, "slow_handler": 10, "medium_handler": 10},
         "required_timeouts": {"fast_handler": 10, "slow_handler": 60, "medium_handler": 10},
         "success_marker": "HANDLERS_OK_552"},
        Source("err_ambiguous_edit", ABEVAL, "read-only: nothing is patched or run"))
    versions = reme_task(
        "package_versions", SHORT,
        "The project . has three package dirs: pkg_a, pkg_b, pkg_c, each containing "
        "version.txt. Working through the directories, collect the three versions and create "
        "./versions.txt containing them comma-separated in order (a,b,c). Reply DONE plus the "
        "joined string.",
        {f"{name}/version.txt": f"{v}\n" for name, v in
         (("pkg_a", "1.4.2"), ("pkg_b", "0.9.7"), ("pkg_c", "3.2.1"))},
        [reads("Let me read the three version files.", *(read(f"pkg_{x}/version.txt")
                                                         for x in "abc"))],
        {"versions": ("object", "each package's version, by directory"),
         "joined": ("string", "the three versions joined by commas, in order a,b,c")},
        {"versions": {"pkg_a": "1.4.2", "pkg_b": "0.9.7", "pkg_c": "3.2.1"},
         "joined": "1.4.2,0.9.7,3.2.1"},
        Source("err_multi_dir", ABEVAL, "read-only: versions.txt is not created"),
        derived={"joined": "the three version.txt files"})
    checksum = reme_task(
        "checksum_anomaly", SHORT, "The file ./records.log contains exactly one line starting "
        "with 'ANOMALY:'. Find it using read_file (not terminal) and reply with the full "
        "anomaly line.",
        {"records.log.view": source_view("records.log", records_lines(), "^ANOMALY:", 5, 2)},
        [reads("Let me read the records log's view.", read("records.log.view"))],
        {"line": ("string", "the full anomaly line"), "code": ("string", "its code"),
         "shard": ("integer", "its shard"), "line_number": ("integer", "its line number")},
        {"line": "ANOMALY: checksum drift detected in shard 7 (code X99Q)", "code": "X99Q",
         "shard": 7, "line_number": 4201},
        Source("err_big_file_read", ABEVAL, "records.log (6,000 lines) kept as a source view"))
    return [edit, versions, checksum]


def controls() -> list[ReMeTask]:
    """The ten controls."""
    return [*deferral_controls(), *readtool_controls(), *abeval_controls()]
