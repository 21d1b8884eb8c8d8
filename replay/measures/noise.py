"""Values the detail patterns find that are not details of the work: the noise rules.

Each rule has a name and a reason (`RULES`), and is decided by the value's form and kind, the
same for every session: no rule is a list of values seen in one file. One rule also reads where
the session ran: the components of its working directory (`project_names`). `noise_rule` says
which rule a value breaks (None: it is a detail); a reference never holds a value that breaks
one, and the validation set (`replay.measures.validation`) measures what is left.

The harness's own text is also cut before anything is read (`strip_harness`): the reminders,
command echoes, environment and instruction blocks that Claude Code and Codex wrap in their own
tags, and the header Codex writes above every command's output (`Chunk ID`, `Wall time`, ...).
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


RULES = {
    "slash_command": "one component after a slash names no file: a slash command (`/compact`), "
                     "a regex flag (`/i`), an option (`/nolint`), a route piece (`/strategy/`)",
    "short_token": "one or two characters (`e`, `ok`, `id`) are too common to be a detail a "
                   "reader could look up",
    "keyword": "a keyword or builtin type of a programming language (`func`, `const`, `str`) "
               "is the language's vocabulary, not the work's",
    "builtin_member": "a member of a language's builtin object (`console.log`, `JSON.parse`, "
                      "`Object.keys`) is the language's vocabulary, like the object itself",
    "timing": "a measured duration with decimals (`1.965s`, `(0.06s)`, `0.0001 seconds`) "
              "changes from run to run: a measurement of one output, not a detail to keep",
    "device_path": "a device file (`/dev/null`, `/dev/tty`) is the operating system's: shells "
                   "redirect to it in every session, whatever the work",
    "git_range": "git's range and tracking notation (`main...origin/main`, `a..b`) names "
                 "commits, not a path",
    "routine_command": "a git command that only inspects (`git status`, `git log --oneline -5`, "
                       "`git diff --stat`) with options alone names nothing of the work",
    "commit_type": "a Conventional Commits type (`feat(cli):`, `fix:`, `docs`) is the form of a "
                   "commit message, not its content",
    "tool_name": "the name of an agent tool or of its arguments (`TodoWrite`, `exec_command`, "
                 "`old_string`) is the agent's vocabulary, not the task's",
    "project_name": "the working directory, or a component of it, in any case (`agentv` or "
                    "`AgentV` under `/home/me/EntityProcess/agentv`), names the project or where "
                    "it lives: every tool call carries it, so it recurs whatever the work did",
    "imported_name": "a name imported from an outside package (`import { useState } from "
                     "'react'`, Go's `import \"github.com/go-git/go-git/v5/plumbing/object\"`; "
                     "not a relative or aliased path, nor the project's own module), or a "
                     "member of one (`object.Commit`), is that package's vocabulary: the work "
                     "calls it, it does not define it",
    "library_api": "a member of a standard library package of Go, Python or Node (`fmt.Errorf`, "
                   "`strings.HasPrefix`, `os.path.join`, `fs.readFileSync`) or one of React's "
                   "builtin hooks (`useEffect`) is the library's vocabulary, read in any session "
                   "of that language whether or not its import was seen",
    "plural_acronym": "an acronym's plural (`IDs`, `URLs`, `UUIDs`) is a word of prose, not a "
                      "name",
    "boilerplate": "the agent harness's own text: its transcript paths, its attribution links "
                   "and commit trailers, a publisher's `REDACTED` mark",
}

KEYWORDS = _words(
    # Python
    "def class self cls None True False lambda yield async await print len str int float bool "
    "dict list set tuple bytes object type super isinstance range open "
    # Go
    "func var const package import struct interface chan defer go select map string error nil "
    "make append byte rune uint int64 int32 uint64 float64 "
    # JavaScript / TypeScript
    "function let new this typeof instanceof undefined null export require module console "
    "Promise Array Object String Number Boolean any void never unknown enum "
    "constructor JSON Math Date window document localStorage sessionStorage "
    # Rust, shells and the rest
    "fn mut impl pub use crate mod match loop trait Self echo then else elif fi done esac "
    "if for while return and or not in is with from as switch case catch try finally throw "
    "static public private protected extends implements assert raise break continue")
# The builtin objects of a language whose members are its vocabulary (`builtin_member`); not
# `self` or `this`, whose members are the work's own.
BUILTIN_OBJECTS = _words("console JSON Math Object Array Promise String Number Boolean Date "
                         "window document localStorage sessionStorage")
# Standard library packages whose members are the language's vocabulary (`library_api`): Go's
# (by the name code calls them), Python's and Node's modules; not those named like the variables
# of a project (`list`, `user`, `url`, `hash`, `template`, `token`, `image`, `color`, `text`).
LIBRARY_PACKAGES = _words(
    # Go
    "bufio bytes errors fmt filepath ioutil os strconv strings sync atomic syscall time "
    "context sort slices maps utf8 unicode regexp reflect runtime exec signal http httptest "
    "json base64 hex sha256 sha1 sha512 md5 hmac tls x509 io fs slog testing gzip zlib tar zip "
    "csv xml pem binary tabwriter filepathlite ast "
    # Python
    "sys re subprocess pathlib shutil datetime logging typing collections itertools functools "
    "math hashlib argparse unittest asyncio tempfile glob shlex textwrap inspect importlib "
    "pickle uuid socket threading multiprocessing contextlib traceback struct zipfile tarfile "
    "sqlite3 urllib dataclasses pytest "
    # Node
    "path child_process util crypto events process")
REACT_HOOKS = _words(
    "useState useEffect useLayoutEffect useInsertionEffect useMemo useCallback useRef "
    "useContext useReducer useId useTransition useDeferredValue useSyncExternalStore "
    "useImperativeHandle useDebugValue useOptimistic useActionState useFormStatus")
COMMIT_TYPES = _words("feat fix docs chore refactor test tests style perf build ci revert wip "
                      "release")
TOOL_NAMES = _words(
    # Claude Code
    "Bash Read Write Edit MultiEdit Glob Grep LS Task TodoWrite TodoRead WebFetch WebSearch "
    "NotebookEdit NotebookRead ExitPlanMode BashOutput KillShell KillBash SlashCommand Skill "
    "AskUserQuestion old_string new_string replace_all subagent_type run_in_background "
    "activeForm in_progress "
    # Codex
    "exec_command write_stdin apply_patch update_plan shell local_shell view_image "
    "unified_exec read_file list_dir grep_files "
    # SWE-agent, mini-swe-agent, OpenHands, replay's agent
    "str_replace_editor str_replace_based_edit_tool execute_bash submit finish think bash "
    "str_replace view create insert undo_edit")
# Claude Code and Codex write these in every session: attribution and their own files.
_BOILERPLATE = re.compile(
    r"\.claude/projects/|\.codex/sessions/|claude\.(?:com|ai)|noreply@anthropic|anthropic\.com"
    r"|Co-Authored-By|chatgpt\.com/codex|REDACTED", re.IGNORECASE)
_HARNESS = re.compile(
    r"^Chunk ID: \w+$|^Wall time: [\d.]+ seconds$|^Process exited with code \d+$"
    r"|^Original token count: \d+$|^# AGENTS\.md instructions for \S+$"
    r"|<(INSTRUCTIONS|system-reminder|command-name|command-message|command-args|local-command-stdout"
    r"|local-command-caveat|local-command-stderr|environment_context|user_instructions"
    r"|permissions instructions|user-prompt-submit-hook|ide_opened_file|ide_selection)>"
    r".*?(?:</\1>|\Z)", re.DOTALL | re.MULTILINE)  # to the end when the close was cut off
# `import { a, b as c } from 'pkg'`, `import d, * as e from "pkg"` (each line may open with a
# listing's line number, `12→`): the names, then the package.
_IMPORT = re.compile(r"(?<![\w.$])import[ \t]+(?:type[ \t]+)?([\w$*{},\s→]{1,400}?)[\s}]from[ \t]+"
                     r"['\"]([^'\"\s]+)['\"]")
_FOLDER = re.compile(r"(?<!/node_modules)/([\w.-]+)(?=/)")  # an installed package is no folder
_NAME = re.compile(r"(?<![\w$])[A-Za-z_$][\w$]*")
_RANGE = re.compile(r"[\w-]\.\.\.?[\w-]")  # `a..b`, `a...b`; not `../`
_TIMING = re.compile(r"\d+\.\d+ ?(?:ms|s|sec|secs|seconds|min|minutes)")
_ROUTINE = re.compile(r"git (?:status|log|diff|show|branch|remote|fetch|stash list)"
                      r"(?: (?:-[\w-]+(?:=\S+)?|\d+|HEAD|main|master|origin|2>&1|\|"
                      r"|[\w~^-]+\.\.\.?[\w~^-]+)| head -\d+)*")
# Go's `import ( ... )` block and `import name "path"` line; each quoted path, maybe aliased.
_GO_IMPORTS = re.compile(r"(?<![\w.])import[ \t]*\(([^()]{1,4000})\)"
                         r"|(?<![\w.])import[ \t]+((?:\w+[ \t]+)?\"[^\"\s]+\")")
_GO_SPEC = re.compile(r"(?:([A-Za-z_]\w*)[ \t]+)?\"([\w./-]+)\"")
_GO_VERSION = re.compile(r"v\d+")
_GO_FOLDER = re.compile(r"(?<![\w./-])([\w./-]+)/[\w-]+\.go\b")
_PLURAL_ACRONYM = re.compile(r"[A-Z]{2,}s")
# A word every boilerplate form holds, looked for in the lowercased value before the pattern.
_BOILERPLATE_HINT = re.compile("claude|codex|anthropic|co-authored|chatgpt|redacted")
_SLASHED = re.compile(r"/[\w.-]+/?")
_COMMIT = re.compile(r"(\w+)(?:\([\w./-]*\))?!?:?")
_COMMIT_STARTS = tuple(COMMIT_TYPES)  # a commit type opens the lowercased value


def project_names(roots: Iterable[str]) -> frozenset[str]:
    """The working directories `roots` and their components, lowercased (`project_name`)."""
    roots = [root.rstrip("/") for root in roots if root.strip("/")]
    return frozenset([*(root.lower() for root in roots),
                      *(part.lower() for root in roots for part in root.split("/") if part)])


def imported_names(text: str, project: frozenset[str] = frozenset()) -> frozenset[str]:
    """The names `text` imports from outside packages (`imported_name`): in an ES module's
    `import ... from '...'`, and Go's package names (`import "github.com/x/y/object"`: `object`,
    or its alias). Not from a relative or aliased path (`./x`, `@/x`, `~/x`, `#x`), nor from
    the project's own packages: for ES modules one whose name or scope is, in any case and
    without dashes, a `project_names` component or a folder of a path the text names
    (`@cipherbox/crypto` under `.../cipher-box/`; not a folder right under `node_modules/`); for
    Go one whose module's owner or name is a `project_names` component
    (`github.com/entireio/cli/...` under `.../cli`). Python's `from x import y` is left out: a
    project imports its own package the same way."""
    if "import" not in text:
        return frozenset()
    names = _go_imports(text, project)
    imports = [match.groups() for match in _IMPORT.finditer(text)]
    if not imports:
        return frozenset(names)
    own = {_bare(part) for part in [*project, *set(_FOLDER.findall(text))]}
    for listed, package in imports:
        if not package.startswith((".", "/", "@/", "~/", "#")) and (
                _bare(package.lstrip("@").split("/")[0]) not in own):
            names.update(_NAME.findall(listed))
    return frozenset(names - {"as", "type"})


def _go_imports(text: str, project: frozenset[str]) -> set[str]:
    """The names Go code in `text` imports from packages outside the project's modules: the
    standard library's, and those of a module none of whose packages is the project's own (its
    owner or name a `project_names` component, or a Go file of it in a path of the text:
    `cmd/cli/strategy/hooks.go` for `entire.io/cli/cmd/cli/strategy`)."""
    specs = {(alias, package) for match in _GO_IMPORTS.finditer(text)
             for alias, package in _GO_SPEC.findall(match.group(1) or match.group(2))
             if not package.startswith(".") and alias not in ("_", ".")}
    if not specs:
        return set()
    bare = {_bare(part) for part in project}
    folders = [folder.strip("./").split("/") for folder in set(_GO_FOLDER.findall(text))]
    tails = {"/".join(parts[k:]) for parts in folders for k in range(len(parts) - 1)}
    own = set()
    for _, package in specs:
        parts = package.split("/")
        if "." in parts[0] and (bare & {_bare(part) for part in parts[1:3]} or any(
                "/".join(parts[k:]) in tails for k in range(1, len(parts) - 1))):
            own.add(_module(parts))
    names = set()
    for alias, package in specs:
        parts = package.split("/")
        if "." not in parts[0] or _module(parts) not in own:
            name = parts[-2] if _GO_VERSION.fullmatch(parts[-1]) and len(parts) > 1 else parts[-1]
            names.add(alias or name.removeprefix("go-").replace("-", "_"))
    return names


def _module(parts: list[str]) -> tuple[str, ...]:
    """The module a Go package path's parts belong to, as far as its form tells:
    `github.com/owner/name`, else `host/name`."""
    return tuple(parts[:3] if parts[0] in ("github.com", "gitlab.com", "bitbucket.org")
                 else parts[:2])


def _bare(name: str) -> str:
    """`name` lowercased without dashes, dots or underscores (`cipher-box`: `cipherbox`)."""
    return re.sub(r"[\W_]", "", name.lower())


def noise_rule(kind: str, value: str, project: frozenset[str] = frozenset(),
               imported: frozenset[str] = frozenset()) -> str | None:
    """The rule of `RULES` that `value`, found as `kind`, breaks; None for a detail. Every kind
    is tried with every rule; a rule fires on the forms it names (a name, a one-part path);
    `project` holds the `project_names` of the session's working directory, `imported` the
    session's `imported_names`. Cheap tests come first: most values break no rule."""
    lowered = value.lower()
    if lowered in project:
        return "project_name"
    if _BOILERPLATE_HINT.search(lowered) and _BOILERPLATE.search(value):
        return "boilerplate"
    if kind == "number":
        return "timing" if _TIMING.fullmatch(value) else None
    if kind == "command":
        return "routine_command" if value.startswith("git ") and _ROUTINE.fullmatch(value) else None
    if kind == "path" and value.startswith("/dev/"):
        return "device_path"
    if kind == "path" and ".." in value and _RANGE.search(value):
        return "git_range"
    if value.startswith("/") and "." not in value and kind in ("path", "url", "identifier") and (
            _SLASHED.fullmatch(value)):
        return "slash_command"
    name = value[:-1] if value.endswith("(") else value
    if len(name) <= 16 and lowered.startswith(_COMMIT_STARTS) and _COMMIT.fullmatch(name) and (
            name.split("(")[0].rstrip("!:").lower() in COMMIT_TYPES):
        return "commit_type"
    if not name.replace(".", "_").isidentifier():
        return None
    if len(name.strip("_.")) <= 2:
        return "short_token"
    if name in KEYWORDS:
        return "keyword"
    member = kind == "identifier" and "." in name  # not a file (`util.go`, `path.ts`)
    head = name.split(".", 1)[0]
    if "." in name and head in BUILTIN_OBJECTS:
        return "builtin_member"
    if name in imported or (member and head in imported):
        return "imported_name"
    if (member and head in LIBRARY_PACKAGES) or name in REACT_HOOKS:
        return "library_api"
    if _PLURAL_ACRONYM.fullmatch(name):
        return "plural_acronym"
    return "tool_name" if name in TOOL_NAMES else None


def strip_harness(text: str) -> str:
    """`text` without the blocks the harness wraps in its own tags (see the module docstring)."""
    return _HARNESS.sub(" ", text) if "<" in text or "\nWall time: " in text else text
