"""Contain one command of the local backend: bubblewrap inside a loopback-only network namespace.

    env -i VARS...                              the command's environment, built from scratch
      setpriv --pdeathsig KILL --               dies with the engine thread that Popen()ed it
        nsenter --target HOLDER --mount --net   the cell's network and mount namespaces (see
                                                below), or for a command outside a cell
        | unshare --net --mount --              new ones (not for install steps)
          sh -c ROOT_SETUP PID IP MOUNT OPTIONS --    as root, before anything is dropped: join
                                                the environment's control groups (and in new
                                                namespaces: lo up and unroutable addresses
                                                routed to lo); then:
            bwrap --die-with-parent ...         new user/pid/ipc/uts/cgroup/mount namespaces, no
                                                capability (bounding set empty), no-new-privs,
                                                no further user namespaces, a rebuilt read-only
                                                file system
              bash -c COMMAND

A cell's namespaces (holders.py) are made once per fresh cell layer, not once per command: a
network namespace with loopback up and the unroutable addresses routed to it, and a private mount
namespace in which the cell layer's tmpfs and the overlays of /testbed and the venv are mounted.
A holder process of the engine's stays in them (and keeps them: nothing is bound to a file), and
the host's own mount namespace never sees the layer. Every command of the cell enters them, so a
command pays neither the mounts nor the network set-up; nothing a command leaves there outlives
it (its processes die with its PID namespace, and it has no capability over either namespace).

Every link execs the next, so the PID the engine's Popen gets is bwrap's: killing it (or its
process group) kills the sandbox's PID 1, and with it the whole PID namespace; the engine's death
does the same through the parent-death signal.

Design notes. Why bubblewrap: it is what Flatpak and several coding-agent sandboxes use on Linux,
a small setuid-free program in Debian (`bubblewrap`) that builds the whole mount, PID, IPC and
user namespace set up in one exec, drops every capability and sets no-new-privs; doing the same
with `unshare` + `setpriv` + mount scripts is more code of ours and easier to get wrong. The
network namespace is made by `unshare --net` outside bwrap because routing unroutable addresses
to loopback (tests that expect a connect timeout) needs CAP_NET_ADMIN, which the command must not
have. The file system is an allowlist (/usr, /etc, /sys read-only, a new /dev and /proc, private
/tmp and /dev/shm, the interpreter the venv links to), not `--ro-bind / /` with holes: host homes
and data folders (/root, /home, /work, /var/lib/docker, ...) and every host socket are simply
absent. Root without capabilities still owns root's files, so read-only mounts (not permissions)
stop writes, /proc/sys is bound read-only again over the fresh procfs, and files under /etc that
others may not read are masked. Writable: /testbed, the instance's venv (the judge reinstalls the
repository into it, as SWE-bench's eval script does), private /tmp and /dev/shm, and for install
steps the paths they name (HOME, uv's cache).
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from replay.core.errors import InputError
from replay.core.paths import BASE_PATH, TESTBED, VENV

SETUP_FAILED = 222

# Runs as root in the new network (and mount) namespace, before bwrap drops everything. $1 is the
# engine's PID: if the engine died before `setpriv` armed the parent-death signal, give up at once.
# $2 is `ip`, $3 `mount`, $4 `mkdir`. Then options up to `--`: `--cgroup FILE` joins a control
# group (its cgroup.procs file), `--tmpfs SIZE TARGET` mounts a cell layer's tmpfs at TARGET and
# `--overlay LOWER UPPER WORK TARGET` an overlay (its upper, work and target folders made first),
# both in this new mount namespace (a cell's, never the host's), `--net` brings loopback up
# and `--route ADDR` routes an address into a black hole on it. It unsets PWD (which sh exports)
# and OLDPWD: the command's environment is the caller's.
ROOT_SETUP = r"""
fail() { echo "replay-namespace-setup-failed: $1" >&2; exit 222; }
[ "$PPID" = "$1" ] || fail "engine gone"
ip=$2; mount=$3; mkdir=$4; shift 4
while [ "$1" != "--" ]; do
    case "$1" in
    --cgroup) echo $$ > "$2" || fail "cgroup $2"; shift 2 ;;
    --tmpfs) "$mount" -t tmpfs -o "size=$2,mode=0700" replay-cell "$3" || fail "tmpfs $3"
             shift 3 ;;
    --overlay) "$mkdir" -p "$3" "$4" "$5" || fail "overlay folders $5"
               "$mount" -t overlay replay-layer -o "lowerdir=$2,upperdir=$3,workdir=$4" "$5" \
                   || fail "overlay $5"; shift 5 ;;
    --net)
        "$ip" link set lo up || fail "loopback"
        # this namespace only: binding ports < 1024 and ping (ICMP datagram sockets) need no
        # capability, as they worked for root before (best effort: old kernels lack them)
        echo 0 > /proc/sys/net/ipv4/ip_unprivileged_port_start 2>/dev/null
        echo "0 2147483647" > /proc/sys/net/ipv4/ping_group_range 2>/dev/null
        shift ;;
    --route) "$ip" route add "$2" dev lo || fail "route $2"; shift 2 ;;
    *) fail "unknown option $1" ;;
    esac
done
shift
unset PWD OLDPWD
exec "$@"
"""


@dataclass(frozen=True)
class Overlay:
    """A writable layer over a read-only folder, mounted at `merged` for one cell.

    `lower` is never written; what the cell's commands change goes to `upper` (`work` is overlayfs's
    own scratch folder on the same file system). All three are made on the cell layer when it
    is mounted: they and the overlay exist only in the cell's mount namespace, so the host never
    sees through it.
    """

    lower: Path
    upper: Path
    work: Path
    merged: Path

    def options(self) -> list[str]:
        for path in (self.lower, self.upper, self.work):
            if any(mark in str(path) for mark in ",:"):  # they would split overlayfs's options
                raise InputError(f"sandbox: an overlay folder may not contain ',' or ':': {path}")
        return ["--overlay", str(self.lower), str(self.upper), str(self.work), str(self.merged)]


# The system, read-only. Everything else on the host (/root, /home, /work, /run, /var, /mnt,
# /srv, /opt, /media, /tmp, ...) is simply absent: an allowlist, not a denylist.
SYSTEM_DIRS = ("/usr", "/etc")
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


def _require(*paths: str | Path) -> None:
    """Raise FileNotFoundError for the first path that does not exist (else bwrap fails with
    exit 1, like a failing command)."""
    for path in paths:
        if not os.path.exists(path):
            raise FileNotFoundError(f"sandbox: {path} does not exist")


def contained_argv(command: str, tree: Path, venv: Path, interpreter_prefixes: list[str],
                   network: bool, unroutable: list[str], env: dict[str, str], *,
                   extra_ro: Sequence[str] = (), extra_rw: Sequence[str] = (),
                   holder: int | None = None, cgroups: Sequence[str] = (),
                   engine_pid: int | None = None) -> list[str]:
    """The argv to Popen to run `command` with bash in /testbed, contained.

    tree -> /testbed and venv -> /opt/replay-venv (read-write); each interpreter prefix (e.g.
    /root/.pyenv/versions/3.11.7) read-only at its own path (and at its resolved path when it is
    a symlink). `extra_ro` / `extra_rw` are more host paths shown at their own path (uv's binary,
    its cache and a HOME for install steps). `holder` is the PID of the process that holds a
    cell's namespaces (holders.py: the overlays' `merged` folders there are then what `tree` and
    `venv` name, and the command enters them), else the command gets new ones (not install
    steps, which have the host's network and write the build itself);
    `cgroups` are the cgroup.procs files of the control groups the command joins. `env` is the
    command's whole environment (PATH included): nothing of the engine's reaches the command.
    `engine_pid` defaults to this process. Raises FileNotFoundError for a path that does not
    exist.
    """
    cell = [] if holder is not None else [tree, venv]  # a cell's are in its own mount namespace
    _require(*cell, *interpreter_prefixes, *extra_ro, *extra_rw, *cgroups)
    if holder is not None and network:
        raise ValueError("sandbox: install steps write the build itself, never a cell layer")
    engine_pid = os.getpid() if engine_pid is None else engine_pid
    tools = programs()
    # `env -i NAME=VALUE...`: the whole chain, bwrap's own processes included (the sandbox's
    # PID 1 is one, and the command can read its /proc/1/environ), holds exactly the command's
    # environment, never the engine's; and no value is left on bwrap's command line (ps).
    argv = [tools["env"], "-i", *(f"{name}={value}" for name, value in env.items()),
            tools["setpriv"], "--pdeathsig", "KILL", "--"]
    argv += _root_setup(tools, holder, network, unroutable, cgroups, engine_pid)
    argv += [
        tools["bwrap"],
        "--die-with-parent",            # sandbox PID 1 gets SIGKILL when bwrap dies
        "--unshare-user",               # caps, if any were ever regained, are only over the sandbox
        "--disable-userns",             # ... and it cannot make a user namespace of its own
        "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--new-session",                # no TIOCSTI on a terminal of the engine
        "--cap-drop", "ALL",            # empty effective/permitted/inheritable/bounding/ambient
    ]   # (no --hostname: the host's name stays, and resolves through /etc/hosts as before)
    argv += _system_mounts()
    # the interpreters the venv's python links to, read-only
    for prefix in _unique(interpreter_prefixes):
        for path in _unique([os.path.realpath(prefix), os.path.abspath(prefix)]):
            if not _under(path, SYSTEM_DIRS):
                argv += ["--ro-bind", os.path.realpath(prefix), path]
    for path in _unique(extra_ro):
        argv += ["--ro-bind", os.path.realpath(path), path]
    for path in _unique(extra_rw):
        argv += ["--bind", os.path.realpath(path), path]
    argv += ["--bind", str(tree), TESTBED]
    argv += ["--bind", str(venv), VENV]
    # the skeleton (/, /var, /run, /opt, /root ...) that bwrap made is a tmpfs: make it read-only
    argv += ["--remount-ro", "/"]
    argv += ["--chdir", TESTBED, "--", "bash", "-c", command]
    return argv


def _root_setup(tools: dict[str, str], holder: int | None, network: bool,
                unroutable: Sequence[str], cgroups: Sequence[str], engine_pid: int) -> list[str]:
    """The chain's links before bwrap: into the cell's namespaces, new ones, or (install steps)
    the host's network; then ROOT_SETUP with its options."""
    argv = []
    if holder is not None:
        argv += [tools["nsenter"], f"--target={holder}", "--mount", "--net", "--"]
    elif not network:
        argv += [tools["unshare"], "--net", "--mount", "--propagation", "private", "--"]
    own_network = not network and holder is None
    return [*argv, *root_script(tools, engine_pid),
            *setup_options(cgroups, (), unroutable if own_network else None)]


def root_script(tools: dict[str, str], engine_pid: int) -> list[str]:
    """ROOT_SETUP run by sh with its positional arguments (its options follow)."""
    return [tools["sh"], "-c", ROOT_SETUP, "replay-sandbox", str(engine_pid), tools["ip"],
            tools["mount"], tools["mkdir"]]


def setup_options(cgroups: Sequence[str], overlays: Sequence[Overlay],
                  unroutable: Sequence[str] | None, layer: tuple[int, Path] | None = None
                  ) -> list[str]:
    """ROOT_SETUP's options: the control groups to join, the cell layer's tmpfs to mount (its
    size and folder), the overlays to mount on it and, unless `unroutable` is None (install
    steps on the host's network, commands in a cell's network namespace), loopback and its
    routes."""
    options: list[str] = []
    for procs in cgroups:
        options += ["--cgroup", str(procs)]
    if layer is not None:
        options += ["--tmpfs", str(layer[0]), str(layer[1])]
    for overlay in overlays:
        options += overlay.options()
    if unroutable is not None:
        options += ["--net"]
        for address in unroutable:
            options += ["--route", address if "/" in address else f"{address}/32"]
    return [*options, "--"]


def _system_mounts() -> list[str]:
    """bwrap's arguments for the system, read-only: /usr, /etc (what only root may read masked),
    /sys, a new /dev and /proc, and private /tmp and /dev/shm."""
    argv: list[str] = []
    for path in SYSTEM_DIRS:
        argv += ["--ro-bind", path, path]
    for path in SYSTEM_LINKS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for path in _unreadable_in_etc():  # /etc/shadow, /etc/docker/key.json, /etc/ssl/private ...
        argv += (["--tmpfs", path, "--remount-ro", path] if os.path.isdir(path)
                 else ["--ro-bind", "/dev/null", path])
    argv += [
        "--ro-bind", "/sys", "/sys",    # recursive, every submount read-only
        "--dev", "/dev",                # null zero full random urandom tty pts ptmx, no disks
        "--perms", "1777", "--size", str(1 << 30), "--tmpfs", "/dev/shm",   # private
        "--remount-ro", "/dev",         # (the device nodes and /dev/pts stay usable)
        "--proc", "/proc",              # this PID namespace's processes only
        # uid 0 is the owner of /proc/sys/*: even without a capability it may write most global
        # sysctls (kernel/*, vm/*, ...) through a fresh procfs. bwrap covers /proc/sys itself
        # only when access(W_OK) says so, which it does not here: cover it (and friends) again.
        "--ro-bind", "/proc/sys", "/proc/sys",
        "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
        "--ro-bind-try", "/proc/pressure", "/proc/pressure",
        "--perms", "1777", "--size", str(2 << 30), "--tmpfs", "/tmp",       # private
        "--dir", "/var/tmp", "--symlink", "/run", "/var/run",
        "--dir", "/run", "--symlink", "/dev/shm", "/run/shm",
    ]
    return argv


@functools.cache
def check_sandbox() -> None:
    """Raise InputError (one line) unless this machine can run `contained_argv`."""
    if os.geteuid() != 0:
        raise InputError("containment needs root (to make the network namespace)")
    programs()
    empty = tempfile.mkdtemp(prefix="replay-sandbox-check-")  # bind nothing of the host rw
    probe = contained_argv(
        "test -w /testbed && ! test -w /usr && [ $$ -lt 10 ] && "
        "grep -q '^CapBnd:[[:space:]]*0*$' /proc/self/status && exit 7",
        Path(empty), Path(empty), [], network=False, unroutable=["10.255.255.1"],
        env={"PATH": "/usr/bin:/bin"})
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise InputError(f"containment probe failed: {error}") from None
    finally:
        shutil.rmtree(empty, ignore_errors=True)
    if done.returncode != 7:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        hint = (" (inside a container /proc is partly masked: run that container with "
                "--security-opt systempaths=unconfined, or use --backend docker)"
                if "mount proc" in last else "")
        raise InputError(f"this machine cannot contain commands (bwrap/namespaces): {last}{hint}")


@functools.cache
def programs() -> dict[str, str]:
    """Absolute paths of the wrapper's programs (the command's PATH is not the engine's)."""
    found = {}
    for tool, package in (("bwrap", "bubblewrap"), ("setpriv", "util-linux"),
                          ("unshare", "util-linux"), ("nsenter", "util-linux"),
                          ("ip", "iproute2"), ("env", "coreutils"), ("true", "coreutils"),
                          ("sh", "dash"), ("mount", "mount"), ("mkdir", "coreutils"),
                          ("sleep", "coreutils"), ("rmdir", "coreutils")):
        path = shutil.which(tool, path=BASE_PATH)
        if path is None:
            raise InputError(f"containment needs `{tool}`: apt-get install -y {package}")
        found[tool] = path
    return found


@functools.cache
def _unreadable_in_etc() -> tuple[str, ...]:
    """Files and folders under /etc that others may not read: uid 0 without capabilities still
    reads what root owns, so they are masked (the rest of /etc is world-readable anyway)."""
    found = []
    for folder, dirs, files in os.walk("/etc"):
        for name in dirs + files:
            path = os.path.join(folder, name)
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if not stat.S_ISLNK(mode) and not mode & stat.S_IROTH:
                found.append(path)
        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in found]
    return tuple(found)


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root + "/") for root in roots)


def _unique(items: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for item in items:
        if item and item not in seen:
            seen.append(item)
    return seen
