"""Images of the docker backend, built in layers and cached by the digest of what shapes them.

    base (scripts/build-base-image.sh, or --base-image)
      -> replay-python:X.Y.Z-KEY   only where the base image has no Python X.Y of its own (Debian's
                                   python3 of bookworm is 3.11): the host's pyenv or uv interpreter,
                                   copied to the same path
      -> replay-env:pyX.Y-KEY      the recipe's apt packages, and a venv at /opt/replay-venv
                                   with its packages
      -> replay-instance:ID-KEY    the repository at /testbed (base commit only) + the install step

Instances whose recipes ask for the same interpreter and packages share one environment image,
built once. When the row names a prebuilt SWE-bench image that is present or can be pulled, the
instance image is that image with its history replaced by ours (base commit only) and
/opt/replay-venv pointing at its conda environment; so rows whose recipe is refused here (a
conda-only package) still run there, and are refused in one line otherwise.

Each layer is built in a container (host network, host files bind-mounted read-only under
/mnt/replay-build) and committed. Builds of one image are serialized by a lock file, so parallel
workers and processes build it once. The engine must run on this machine (bind mounts).
"""

from __future__ import annotations

import fcntl
import functools
import logging
import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import docker
import docker.errors
import requests.exceptions
from docker.types import Mount

from replay.core.digest import digest
from replay.core.errors import EnvironmentFault, InputError
from replay.core.paths import BASE_PATH, TESTBED, VENV, home, network_variables
from replay.environments.docker_engine import KIND, LABEL, OWNER, labels, remove_containers, run
from replay.environments.interpreters import find_python, uv_binary
from replay.environments.recipes import Recipe
from replay.environments.repos import prepare_repo
from replay.instances.records import Instance

log = logging.getLogger(__name__)

LAYOUT = "1"  # bump when the way images are built changes: every cached image is then stale
BUILD = "/mnt/replay-build"
CONDA_ENV = "/opt/miniconda3/envs/testbed"
STEP_TIMEOUT = 1800
LIST_PYTHONS = "ls /usr/bin/ | grep -x 'python3\\.[0-9]*' || true"
WRITABLE = (f"{BUILD}/home", f"{BUILD}/uv-cache")


def _key(*parts: object) -> str:
    return digest([LAYOUT, *parts], spaced=True)[:12]


def _ways_to_get(version: str, base_image: str, has: list[str]) -> str:
    """The sentence that says how to get a Python `version` for the docker backend."""
    own = ", ".join(has) or "none"
    return (f"no Python {version} for the docker backend: the base image {base_image} has "
            f"{own} of its own, and this machine has no pyenv or uv Python {version} to copy in; "
            f"install one (`pyenv install {version}` or `uv python install {version}`), or pass "
            f"--base-image with a Debian release whose python3 is {version}")


@functools.cache
def _host_interpreter(version: str) -> tuple[str, str] | None:
    """The host's Python X.Y as (installation prefix, full version) when it can be copied as a
    whole (pyenv or uv, not the system's /usr); None when there is none such."""
    try:
        python = find_python(version)
    except InputError:
        return None
    done = subprocess.run(
        [str(python), "-c", "import sys; print(sys.base_prefix); print('%d.%d.%d' % "
                            "sys.version_info[:3])"],
        capture_output=True, text=True, check=True)
    prefix, full = done.stdout.split()
    return None if prefix in ("/usr", "/usr/local") else (prefix, full)


def _network_mounts() -> tuple[dict[str, str], dict[str, str]]:
    """This machine's network settings for build steps, host files mapped to mounts."""
    variables: dict[str, str] = {}
    mounts: dict[str, str] = {}
    for name, value in network_variables().items():
        if os.path.exists(value):
            target = mounts.setdefault(value, f"{BUILD}/net/{len(mounts)}")
            variables[name] = target
        else:
            variables[name] = value
    return variables, mounts


class ImageBuilder:
    """Finds or builds the image an instance's containers run (see the module docstring)."""

    def __init__(self, client: docker.DockerClient, base_image: str,
                 mirrors: Path | None) -> None:
        self.client = client
        self.base_image = base_image
        self.mirrors = mirrors
        self.unpullable: set[str] = set()
        self.rebuilt: set[str] = set()
        self._base_pythons: list[str] | None = None

    def instance_image(self, instance: Instance, recipe: Recipe, variables: dict[str, str],
                       rebuild: bool) -> str:
        """The id of the instance's image, built now unless a cached one fits."""
        prebuilt = self.prebuilt(instance)
        if prebuilt is not None:
            key = _key(prebuilt, instance.instance_id, instance.base_commit)
            steps = [f"test -d {TESTBED}/.git || {{ echo 'no repository at {TESTBED}'; exit 1; }}",
                     f"rm -rf {TESTBED}/.git && cp -a {BUILD}/tree/.git {TESTBED}/.git",
                     f"cd {TESTBED} && git status --porcelain >/dev/null",
                     f"test -e {VENV} || ln -s {CONDA_ENV} {VENV}",
                     f"test -x {VENV}/bin/python || {{ echo 'no python at {VENV}'; exit 1; }}"]
            parent = prebuilt
        else:
            if recipe.refusal:
                raise InputError(f"instance {instance.instance_id}: no prebuilt SWE-bench image "
                                 f"here, and its recipe cannot be built: {recipe.refusal}")
            parent = self.environment_image(recipe, rebuild)
            key = _key(parent, instance.instance_id, instance.base_commit, recipe.install,
                       variables)
            steps = [f"cp -a {BUILD}/tree/. {TESTBED}/"]
            if recipe.install:
                steps.append(f"cd {TESTBED} && {recipe.install}")
        tag = f"replay-instance:{instance.instance_id[:100]}-{key}"

        def build() -> str:
            with tempfile.TemporaryDirectory(prefix="replay-context-",
                                             dir=_scratch()) as context:
                tree = Path(context) / "tree"
                prepare_repo(instance, tree, self.mirrors)
                return self._build(parent, tag, "instance", key, steps, variables,
                                   {str(tree): f"{BUILD}/tree"})

        return self._ensure(tag, rebuild, build)

    def environment_image(self, recipe: Recipe, rebuild: bool) -> str:
        """The id of the image with the recipe's interpreter and packages in /opt/replay-venv."""
        parent, python = self.python_image(recipe.python)
        system = [recipe.apt] if recipe.apt else []  # the key of a recipe without apt is kept
        key = _key(parent, recipe.python, recipe.packages, recipe.env, *system)
        tag = f"replay-env:py{recipe.python}-{key}"
        uv = f"{BUILD}/uv"
        steps = [f"mkdir -p {TESTBED}", f"{uv} venv -q --seed -p {python} {VENV}"]
        if recipe.apt:
            steps.insert(0, "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get "
                            "install -y -qq --no-install-recommends "
                            + " ".join(shlex.quote(package) for package in recipe.apt))
        if recipe.packages:
            quoted = " ".join(shlex.quote(package) for package in recipe.packages)
            steps.append(f"{uv} pip install -q --python {VENV}/bin/python {quoted}")
        cache = home() / "uv-cache"
        cache.mkdir(parents=True, exist_ok=True)
        mounts = {uv_binary(): uv, str(cache): f"{BUILD}/uv-cache"}
        return self._ensure(tag, rebuild, lambda: self._build(
            parent, tag, "environment", key, steps, dict(recipe.env), mounts))

    def python_image(self, version: str) -> tuple[str, str]:
        """(image id, interpreter path) of an image with a Python `version`: the base image when
        its Debian has that version, else the base image plus the host's pyenv or uv interpreter
        copied to its own prefix. Bad input, saying how to get one, when neither has it."""
        own = self.base_pythons()
        if version in own:
            return self.client.images.get(self.base_image).id, f"/usr/bin/python{version}"
        host = _host_interpreter(version)
        if host is None:
            raise InputError(_ways_to_get(version, self.base_image, own))
        prefix, full = host
        key = _key(self.base_key(), prefix, full)
        tag = f"replay-python:{full}-{key}"
        keep = f"--exclude='./lib/python{version}/site-packages/*'"
        steps = [f"set -o pipefail; mkdir -p {prefix} && tar -C {BUILD}/python {keep} -cf - . "
                 f"| tar -C {prefix} -xf -", f"{prefix}/bin/python3 -c 'import ssl, sqlite3'"]
        image = self._ensure(tag, False, lambda: self._build(
            self.base_image, tag, "python", key, steps, {}, {prefix: f"{BUILD}/python"}))
        return image, f"{prefix}/bin/python3"

    def base_pythons(self) -> list[str]:
        """The X.Y versions of the base image's own Python (from its `replay.pythons` label,
        written by scripts/build-base-image.sh; else found by listing /usr/bin in a container)."""
        if self._base_pythons is None:
            self.base_key()
            image = self.client.images.get(self.base_image)
            label = image.labels.get("replay.pythons")
            if label is None:
                listing = self.client.containers.run(
                    self.base_image, ["sh", "-c", LIST_PYTHONS], remove=True,
                    network_disabled=True).decode()
                label = " ".join(name.removeprefix("python") for name in listing.split())
            self._base_pythons = label.split()
        return self._base_pythons

    def base_key(self) -> str:
        """What identifies the base image: the digest of its recipe when it was built by
        scripts/build-base-image.sh (so a re-import keeps the cache), else its id. Bad input
        when it is missing."""
        try:
            image = self.client.images.get(self.base_image)
        except docker.errors.ImageNotFound:
            raise InputError(f"base image {self.base_image} not found: build it with `bash "
                             "scripts/build-base-image.sh`, or pass --base-image") from None
        return image.labels.get("replay.recipe") or image.id

    def prebuilt(self, instance: Instance) -> str | None:
        """The id of the row's SWE-bench image if it is here or can be pulled, else None."""
        name = instance.image
        if not name or name in self.unpullable:
            return None
        try:
            return self.client.images.get(name).id
        except docker.errors.ImageNotFound:
            pass
        try:
            return self.client.images.pull(name).id
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            log.info("cannot pull %s (%s); building from the recipe", name, exc)
            self.unpullable.add(name)
            return None

    def _ensure(self, tag: str, rebuild: bool, build: Callable[[], str]) -> str:
        """The id of image `tag`, built under its lock file when missing (or once on rebuild)."""
        rebuild = rebuild and tag not in self.rebuilt
        path = _scratch() / f"{tag.replace(':', '_')}.lock"
        with open(path, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if not rebuild:
                    return self.client.images.get(tag).id
            except docker.errors.ImageNotFound:
                pass
            image = build()
        self.rebuilt.add(tag)
        return image

    def _build(self, parent: str, tag: str, kind: str, key: str, steps: list[str],
               variables: dict[str, str], mounts: dict[str, str]) -> str:
        """Run `steps` in a container of `parent` with network access, and commit it as `tag`."""
        network, network_mounts = _network_mounts()
        with tempfile.TemporaryDirectory(prefix="replay-build-home-", dir=_scratch()) as scratch:
            binds = {**mounts, **network_mounts, scratch: f"{BUILD}/home"}
            environment = {
                "PATH": f"{VENV}/bin:{BASE_PATH}", "VIRTUAL_ENV": VENV, "LANG": "C.UTF-8",
                "LC_ALL": "C.UTF-8", "TERM": "dumb", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                "GIT_CONFIG_NOSYSTEM": "1", "HOME": f"{BUILD}/home",
                "UV_CACHE_DIR": f"{BUILD}/uv-cache", "UV_LINK_MODE": "copy",
                "UV_PYTHON_DOWNLOADS": "never", **network, **variables}
            log.info("building %s", tag)
            container = self.client.containers.run(
                parent, ["sleep", "infinity"], detach=True, network_mode="host", init=True,
                labels=labels("build", **{"replay.image": tag}),
                mounts=[Mount(target, source, type="bind", read_only=target not in WRITABLE)
                        for source, target in binds.items()])
            try:
                for step in steps:
                    done = run(self.client, container.id,
                               ["timeout", str(STEP_TIMEOUT), "bash", "-c", f"exec 2>&1; {step}"],
                               environment, "/", 20_000)
                    if done.exit_code != 0:
                        tail = done.output.decode("utf-8", "replace")[-2000:]
                        raise EnvironmentFault(f"building {tag}: step failed (exit "
                                               f"{done.exit_code}): {step}\n{tail}")
                repository, _, name = tag.partition(":")
                image = container.commit(repository, name, changes=[
                    f"LABEL {LABEL}=1 {KIND}={kind} replay.key={key} {OWNER}=",
                    f"WORKDIR {TESTBED}", 'CMD ["sleep", "infinity"]'])
            finally:
                remove_containers(self.client, [container.id])
        return image.id


def _scratch() -> Path:
    """Replay's folder for docker build locks and build contexts."""
    path = home() / "docker"
    path.mkdir(parents=True, exist_ok=True)
    return path


def remove_images(client: docker.DockerClient) -> int:
    """Remove every image replay built (not the base image); return how many."""
    removed = 0
    for kind in ("instance", "environment", "python"):
        for image in client.images.list(filters={"label": [f"{LABEL}=1", f"{KIND}={kind}"]}):
            for tag in image.tags or [image.id]:
                client.images.remove(tag, force=True)
            removed += 1
    return removed

