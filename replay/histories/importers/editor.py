"""SWE-agent's own editor commands, done as file operations on an environment.

SWE-agent ships commands that are not programs: the windowed editor of its first versions
(`open PATH [LINE]`, `goto LINE`, `scroll_up`, `scroll_down`, `create PATH`,
`edit START:END` + text + `end_of_edit`, `edit 'SEARCH' 'REPLACE'`) and `str_replace_editor`
(`view`, `create`, `str_replace`, `insert`, `undo_edit`) of later ones. Run as bash they are
missing commands and change nothing, so an import translates them: the file operation is done,
and only when the recorded observation says it was (SWE-agent refuses an edit that breaks the
syntax, and the record says so). Their observations (SWE-agent's window of the file) are not
reproduced; an operation the record says was done but cannot be done here is a real divergence.
Paths under the repository folder SWE-agent used (`/owner__name`) are taken to the workdir.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field

from replay.environments.base import Environment

VIEWS = ("open", "goto", "scroll_up", "scroll_down")
COMMANDS = (*VIEWS, "create", "edit", "str_replace_editor")
_LINES_EDIT = re.compile(r"\Aedit\s+(\d+):(\d+)\s*\n(.*?)\n?end_of_edit\s*\Z", re.S)
_REFUSED = ("Your proposed edit has introduced", "No replacement was performed", "ERROR",
            "Error:", "usage:")
_REPO_ROOT = re.compile(r"\A/[^/]+__[^/]+(?=/|\Z)")


class EditorError(Exception):
    """An editor operation the record says was done, but that cannot be done here."""


def is_editor_command(command: str) -> bool:
    """Whether a SWE-agent action is one of its editor commands rather than a shell command."""
    words = command.split(maxsplit=1)
    return bool(words) and words[0] in COMMANDS


@dataclass
class EditorSession:
    """The editor's state across one trajectory: the open file and earlier file contents."""

    env: Environment
    current: str | None = None
    history: dict[str, list[bytes]] = field(default_factory=dict)

    def run(self, command: str, recorded: str) -> str:
        """Do one editor command whose recorded observation is `recorded`; a line saying what
        was done. Raises `EditorError` when the record says it was done and it cannot be."""
        name = command.split(maxsplit=1)[0]
        if name in VIEWS:
            if name == "open":
                self.current = self._path(shlex.split(command)[1])
            return f"{name}: nothing to change"
        if recorded.lstrip().startswith(_REFUSED):
            return f"{name}: refused in the record, not done"
        if name == "create":
            path = self._path(shlex.split(command)[1])
            self._write(path, b"\n")
            self.current = path
            return f"created {path}"
        if name == "edit":
            return self._edit(command)
        return self._str_replace_editor(shlex.split(command)[1:])

    def _path(self, path: str) -> str:
        path = _REPO_ROOT.sub(self.env.workdir, path) if not path.startswith(
            self.env.workdir) else path
        return posixpath.normpath(posixpath.join(self.env.workdir, path))

    def _read(self, path: str) -> str:
        try:
            return self.env.read_file(path).decode("utf-8", "replace")
        except (FileNotFoundError, IsADirectoryError):
            raise EditorError(f"no such file: {path}") from None

    def _write(self, path: str, content: bytes) -> None:
        try:
            before = self.env.read_file(path)
        except (FileNotFoundError, IsADirectoryError):
            before = b""
        self.history.setdefault(path, []).append(before)
        self.env.write_file(path, content)

    def _edit(self, command: str) -> str:
        if self.current is None:
            raise EditorError("edit with no open file")
        text = self._read(self.current)
        lines = _LINES_EDIT.match(command)
        if lines:
            start, end, replacement = int(lines.group(1)), int(lines.group(2)), lines.group(3)
            old = text.splitlines(keepends=True)
            new = [line + "\n" for line in replacement.split("\n")] if replacement else []
            self._write(self.current, "".join(old[:start - 1] + new + old[end:]).encode())
            return f"edited {self.current} lines {start}-{end}"
        words = shlex.split(command)
        if len(words) != 3:
            raise EditorError(f"unsupported edit form: {command.splitlines()[0][:60]}")
        return self._replace(self.current, words[1], words[2])

    def _replace(self, path: str, old: str, new: str) -> str:
        text = self._read(path)
        if not old or text.count(old) < 1:
            raise EditorError(f"the text to replace is not in {path}")
        self._write(path, text.replace(old, new, 1).encode())
        return f"replaced text in {path}"

    def _str_replace_editor(self, words: list[str]) -> str:
        if len(words) < 2:
            raise EditorError("str_replace_editor without a command and a path")
        name, path, options = words[0], self._path(words[1]), _options(words[2:])
        if name == "view":
            return "view: nothing to change"
        if name == "create":
            self._write(path, options.get("file_text", "").encode())
            return f"created {path}"
        if name == "str_replace":
            return self._replace(path, options.get("old_str", ""), options.get("new_str", ""))
        if name == "insert":
            lines = self._read(path).splitlines(keepends=True)
            at = int(options.get("insert_line", "0"))
            added = options.get("new_str", "") + "\n"
            self._write(path, "".join(lines[:at] + [added] + lines[at:]).encode())
            return f"inserted into {path} after line {at}"
        if name == "undo_edit" and self.history.get(path):
            self.env.write_file(path, self.history[path].pop())
            return f"undid the last edit of {path}"
        raise EditorError(f"str_replace_editor {name} cannot be done on {path}")


def _options(words: list[str]) -> dict[str, str]:
    """`--name value` pairs (`--view_range` takes two values)."""
    options: dict[str, str] = {}
    index = 0
    while index < len(words) - 1:
        if words[index].startswith("--"):
            options[words[index][2:]] = words[index + 1]
            index += 2
        else:
            index += 1
    return options
