"""Translate a swebench spec (see specs.py) into the fields of a recipe for a venv.

SWE-bench builds a conda environment per repository and version; replay builds a venv with an
interpreter of the same X.Y (pyenv or uv) and installs with uv/pip. The translation:

- `python`: the spec's.
- `packages`, in SWE-bench's order of installation, a later pin replacing an earlier entry of the
  same name and a later unpinned entry kept out where the name is already there (as pip keeps what
  is installed): the conda `packages` where pip can install them (conda names mapped to PyPI
  names; `name=1.2` becomes `name==1.2.*`), else the lines of the repository's requirements file
  (`packages = "requirements.txt"`) or the dependencies of its environment.yml
  (`"environment.yml"`), read at the row's environment_setup_commit (spec_files.py); then
  `pip_packages`.
- conda packages that are system programs (graphviz, ffmpeg, ...) and the packages of the spec's
  `pre_install` apt-get lines become `apt`, a list the docker backend installs and the local backend
  checks for; build tools the system provides (compilers, python, pip) are dropped.
- conda packages with no PyPI distribution (`CONDA_ONLY`) make the recipe's `refusal`: backends
  that build from the recipe refuse the row in one line naming them; docker with the row's
  prebuilt SWE-bench image still runs it.
- `install`: the spec's; `reinstall` (before each test run, offline): an editable reinstall without
  build isolation, dependencies or index, where the spec installs the repository.
- `env`: the `export NAME=VALUE` lines of `eval_commands`.
- `test_cmd`: empty, so the judge runs the row's own command from its eval_script.

The other `pre_install` and `eval_commands` lines (sed on the tree, downloads into it, locale-gen)
are not run: the agent's tree holds the base commit only, and a restore resets it. They are listed
in `Derived.dropped`; where one matters, the repository's TOML override says what replaces it.
Spec keys about the docker harness itself (`nano_cpus`, `execute_test_as_nonroot`, `no_use_env`)
have no meaning here.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

import yaml

from replay.core.errors import InputError
from replay.environments.spec_files import FileReader
from replay.environments.specs import SpecTables

OFFLINE_REINSTALL = "python -m pip install --no-build-isolation --no-deps --no-index -e ."

# conda names whose PyPI distribution has another name
CONDA_TO_PIP = {
    "dask-core": "dask", "matplotlib-base": "matplotlib", "iris": "scitools-iris",
    "pytables": "tables", "python-graphviz": "graphviz", "pyqt": "PyQt5",
    "msgpack-python": "msgpack", "pytorch": "torch", "tensorflow-base": "tensorflow",
}
# conda packages that are programs or libraries of the system: Debian package names
CONDA_TO_APT = {
    "graphviz": "graphviz", "ffmpeg": "ffmpeg", "imagemagick": "imagemagick",
    "ghostscript": "ghostscript", "inkscape": "inkscape", "pandoc": "pandoc",
    "pkg-config": "pkg-config", "make": "make", "cmake": "cmake", "nodejs": "nodejs",
    "enchant": "libenchant-2-dev", "texlive-core": "texlive",
}
# conda packages the system or the interpreter provides, or that pip wheels bundle
PROVIDED = {"python", "pip", "c-compiler", "cxx-compiler", "compilers", "gcc", "gxx",
            "hdf5", "libnetcdf", "libgdal", "geos", "proj", "tk", "openssl", "zlib"}
# conda packages with no distribution on PyPI: a recipe that needs them is refused locally
CONDA_ONLY = {"cdms2", "gtk3", "gtk4", "pynio", "esmpy"}
REPLACE_REQUIREMENTS = {"types-pkg-resources": "types-setuptools"}  # yanked: as swebench does


@dataclass
class Derived:
    """A recipe's fields as derived from the spec, and the spec lines not carried over."""

    fields: dict[str, Any]
    dropped: list[str] = field(default_factory=list)


@dataclass
class _Packages:
    pip: list[str] = field(default_factory=list)
    apt: list[str] = field(default_factory=list)
    conda_only: list[str] = field(default_factory=list)


def requirement_name(requirement: str) -> str:
    """The normalized distribution name of a requirement (`Foo_Bar[x]>=1` -> `foo-bar`)."""
    name = re.split(r"[<>=!~;\[\s@(]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def _pinned(requirement: str) -> bool:
    return bool(re.search(r"[<>=!~@]", requirement.split(";")[0]))


def merge_packages(earlier: list[str], later: list[str]) -> list[str]:
    """`earlier` then `later`: a later entry with a version replaces the earlier entry of its name
    in place; a later entry without one is left out where the name is already there."""
    merged = list(earlier)
    for requirement in later:
        names = [requirement_name(entry) for entry in merged]
        name = requirement_name(requirement)
        if name not in names:
            merged.append(requirement)
        elif _pinned(requirement):
            merged[names.index(name)] = requirement
    return merged


def _conda_requirement(spec: str) -> tuple[str, str]:
    """(name, pip requirement) of a conda match spec: `x=1.2` -> `x==1.2.*`, `x 1.2` -> `x==1.2`."""
    spec = spec.strip().strip("'\"").split("::")[-1]  # a channel prefix names no package
    spaced = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s+([0-9][^\s]*)(?:\s+\S+)?", spec)
    if spaced:
        spec = f"{spaced[1]}=={spaced[2]}"
    name = re.split(r"[<>=!~\s\[]", spec, maxsplit=1)[0]
    rest = spec[len(name):].replace(" ", "")
    single = re.fullmatch(r"=([^=].*)", rest)
    if single:
        version = single[1]
        rest = f"=={version}" if version.endswith("*") else f"=={version}.*"
    return name.lower(), rest


def conda_packages(specs: list[str]) -> _Packages:
    """Where each conda package goes here: pip, apt, nowhere (provided), or the refusal."""
    found = _Packages()
    for spec in specs:
        name, rest = _conda_requirement(spec)
        if not name or name in PROVIDED:
            continue
        if name in CONDA_ONLY:
            found.conda_only.append(name)
        elif name in CONDA_TO_APT:
            found.apt.append(CONDA_TO_APT[name])
        else:
            found.pip.append(CONDA_TO_PIP.get(name, name) + rest)
    return found


def _requirement_lines(read: FileReader, path: str, seen: set[str]) -> list[str]:
    """The requirement lines of a requirements file, following `-r` includes (as swebench)."""
    text = read(path)
    if text is None or path in seen:
        return []
    seen.add(path)
    lines: list[str] = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if line.startswith(("-r ", "--requirement ")):
            included = posixpath.normpath(posixpath.join(posixpath.dirname(path),
                                                         line.split(None, 1)[1]))
            if not included.startswith("../"):
                lines = _requirement_lines(read, included, seen) + lines
        elif line and not line.startswith(("#", "-", ".[test")):
            lines.append(REPLACE_REQUIREMENTS.get(requirement_name(line), line))
    return lines


def _first_file(read: FileReader, paths: list[str], what: str, repo: str) -> str:
    for path in paths:
        if read(path) is not None:
            return path
    named = ", ".join(paths) or "(no paths)"
    raise InputError(f"{repo}: its spec installs {what}, but none of {named} exists at the "
                     "row's environment_setup_commit")


def _environment_yml(text: str) -> tuple[list[str], list[str]]:
    """(conda dependencies, pip dependencies) of an environment.yml."""
    try:
        document = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise InputError(f"environment.yml does not parse: {exc}") from None
    conda: list[str] = []
    pip: list[str] = []
    for entry in document.get("dependencies") or []:
        if isinstance(entry, dict):  # the pip section: requirements, not options (`-e .`)
            pip.extend(str(item) for item in entry.get("pip") or []
                       if not str(item).startswith("-"))
        else:
            conda.append(str(entry))
    return conda, pip


def apt_packages(lines: list[str]) -> tuple[list[str], list[str]]:
    """(apt packages, other lines) of pre_install lines: `apt-get install` arguments are kept."""
    packages: list[str] = []
    others: list[str] = []
    for line in lines:
        installs = re.findall(r"apt-get\s+install\s+([^&|;]+)", line)
        for words in installs:
            packages += [word for word in words.split() if not word.startswith("-")]
        if not installs and not re.fullmatch(r"\s*apt-get\s+(-y\s+)?update\s*", line):
            others.append(line)
    return list(dict.fromkeys(packages)), others


def exported(lines: list[str]) -> tuple[dict[str, str], list[str]]:
    """(variables, other lines) of eval_commands: `export NAME=VALUE` lines become variables."""
    variables: dict[str, str] = {}
    others: list[str] = []
    for line in lines:
        match = re.fullmatch(r"\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)", line)
        if match:
            variables[match[1]] = " ".join(shlex.split(match[2]))
        else:
            others.append(line)
    return variables, others


def _packages(spec: dict[str, Any], repo: str, tables: SpecTables,
              read: FileReader) -> _Packages:
    source = spec.get("packages", "")
    if source == "requirements.txt":
        path = _first_file(read, tables.requirements_paths.get(repo, []), "requirements.txt", repo)
        found = _Packages(pip=merge_packages([], _requirement_lines(read, path, set())))
    elif source == "environment.yml":
        path = _first_file(read, tables.env_yml_paths.get(repo, []), "environment.yml", repo)
        conda, pip = _environment_yml(read(path) or "")
        found = conda_packages(conda)
        found.pip = merge_packages(found.pip, pip)
    else:
        found = conda_packages(shlex.split(source))
    found.pip = merge_packages(merge_packages([], found.pip), list(spec.get("pip_packages", [])))
    return found


def translate(spec: dict[str, Any], repo: str, tables: SpecTables, read: FileReader,
              packages_given: bool = False) -> Derived:
    """The recipe fields of a spec (see the module docstring). With `packages_given` (an override
    names the packages) the repository's files are not read."""
    apt, pre_others = apt_packages(list(spec.get("pre_install", [])))
    env, eval_others = exported(list(spec.get("eval_commands", [])))
    install = spec.get("install", "")
    fields: dict[str, Any] = {
        "python": spec["python"], "install": install, "env": env, "test_cmd": "",
        "reinstall": OFFLINE_REINSTALL if install else "", "apt": apt, "refusal": "",
    }
    if not packages_given:
        found = _packages(spec, repo, tables, read)
        fields["packages"] = found.pip
        fields["apt"] = list(dict.fromkeys(apt + found.apt))
        if found.conda_only:
            fields["refusal"] = (f"conda-only package{'s' if len(found.conda_only) > 1 else ''} "
                                 f"{', '.join(found.conda_only)}: pip cannot install "
                                 f"{'them' if len(found.conda_only) > 1 else 'it'}")
    dropped = [f"pre_install: {line}" for line in pre_others]
    dropped += [f"eval_commands: {line}" for line in eval_others]
    return Derived(fields, dropped)
