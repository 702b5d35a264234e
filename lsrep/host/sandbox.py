"""The adapter host's view of the machine: a minimal root and loopback-only networking (issue 17).

The zygote runs in its own user, PID, mount and network namespaces (`unshare ... --net`), with the
loopback interface brought up (a model gateway inside the host serves on 127.0.0.1; nothing in the
host needs TCP to the harness, whose calls travel over the host's pipes). Each forked host then
builds its filesystem view *by construction*, before any adapter code is imported (:func:`enter`):

1. a nested user namespace and a new mount namespace;
2. a fresh tmpfs as the new root, into which only these are bound: the system directories
   (`/usr`, `/etc`, and `/bin`, `/lib*`, `/sbin` as they are), the Python installation and the
   virtual environment, the folders of the `lsrep` core, adapters and systems, and the adapter's own
   top-level package — all read-only — plus the host's private working directory (read-write), a
   private `/tmp` and `/dev/shm`, a few device nodes, `/proc` (of the host's PID namespace) and `/sys`
   read-only;
3. over that view, every *protected* path that still falls inside it is covered (a file by an
   empty one, a folder by an empty read-only tmpfs): the campaign file, its trajectory, probe and
   reference files, the datasets it reads, the run store with its WAL/SHM/journal and cache folder,
   the harness's working directory and command-line paths (see :func:`protect`), and the bundled
   `lsrep.campaigns` / `lsrep.probes` / `lsrep.reports` / `lsrep.schedules` packages;
4. `pivot_root` into it and detach the old root, then one more user + mount namespace, so every mount
   is locked: the host cannot unmount a cover to see what is under it, nor remount a read-only bind.

The zygote is not dumpable, so a host cannot walk `/proc/1/root` (the zygote's view of the whole
disk) or its open files. Where the machine does not allow these namespaces the host runs with less
(`isolation()` in :mod:`lsrep.host.client` says which level), and the manifest records it.
"""

from __future__ import annotations

import ctypes
import fcntl
import importlib.util
import json
import os
import platform
import socket
import struct
import sys
from pathlib import Path
from typing import Any

PROTECTED_ENV = "LSREP_HOST_PROTECTED"
"""The harness's list of paths to cover (JSON); kept in the environment so spawned workers inherit
it. The host's own environment is rebuilt from scratch and never carries it."""

WRITABLE_ENV = "LSREP_HOST_WRITABLE"
"""Opt-in: folders (os.pathsep-separated) every host may also read and write, e.g. a test
recorder's log folder. Never point it at evaluation data: what is in it is in the view."""
PROTECTED_MAX = 500
"""Paths kept (the latest): a long-lived process running many campaigns does not grow without end."""
SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
CODE_PACKAGES = ("lsrep", "lsrep.adapters", "lsrep.systems")
"""The project's packages a host may import (the core, the adapters and the systems they wrap)."""
HARNESS_ONLY = ("lsrep.campaigns", "lsrep.probes", "lsrep.reports", "lsrep.schedules")
"""Packages with bundled campaigns, probe builders and reports: never needed in a host, covered."""

_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MNT_DETACH, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = 2, 0x8000, 1
_SYS = {"x86_64": {"pivot_root": 155, "mount_setattr": 442}, "aarch64": {"pivot_root": 41, "mount_setattr": 442}}
_PR_SET_DUMPABLE = 4
_libc = ctypes.CDLL(None, use_errno=True)


class SandboxError(OSError):
    """The host could not build its view; it refuses to run the adapter without it."""


# -- harness side ------------------------------------------------------------------------------------
def protect(*paths: str | os.PathLike[str] | None) -> None:
    """Add paths every host started from now on must not see (this process and its workers)."""
    current = protected()
    for p in paths:
        if p:
            current.append(os.path.realpath(p))
    os.environ[PROTECTED_ENV] = json.dumps(list(dict.fromkeys(current))[-PROTECTED_MAX:])


def protected() -> list[str]:
    try:
        return list(json.loads(os.environ.get(PROTECTED_ENV, "[]")))
    except ValueError:
        return []


def _package_dirs(names: tuple[str, ...]) -> list[str]:
    out = []
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        if spec.submodule_search_locations:
            out += [os.path.realpath(p) for p in spec.submodule_search_locations]
        elif spec.origin and os.path.isfile(spec.origin):
            out.append(os.path.realpath(spec.origin))
    return out


def option_files(options: Any) -> tuple[str, ...]:
    """Existing files a condition's options name (e.g. ICE's `documents`): the campaign author gives
    them to the system, so its host may read them. Never a protected path (a campaign, trajectory
    or probe file, a store) nor anything under the harness-only packages."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str) and value and len(value) < 4096 and os.path.isfile(value):
            found.append(os.path.realpath(value))
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v)

    walk(options)
    if not found:  # nothing to filter (the usual case): skip finding the harness's packages
        return ()
    barred = {os.path.realpath(p) for p in protected() if os.path.isfile(p)}
    barred |= {p + suffix for p in list(barred) for suffix in ("-wal", "-shm", "-journal")}
    harness = _package_dirs(HARNESS_ONLY)
    return tuple(dict.fromkeys(p for p in found if p not in barred and not _under(p, harness)
                               and not p.endswith((".sqlite", ".sqlite-wal", ".sqlite-shm", ".db"))))


def view(module: str | None, workdir: Path, grants: tuple[str, ...] = ()) -> dict[str, Any]:
    """What a host for an adapter from `module` may see: read-only binds, its folder, and covers.

    `grants` are files the condition's options name (:func:`option_files`), bound read-only."""
    ro = [p for p in SYSTEM_DIRS if os.path.lexists(p)]
    ro += list(grants)
    ro += [os.path.realpath(p) for p in {sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix}]
    ro.append(os.path.dirname(os.path.realpath(sys.executable)))
    ro += _package_dirs(CODE_PACKAGES)
    if module:
        ro += _package_dirs((module.partition(".")[0],))
    hide = protected() + _package_dirs(HARNESS_ONLY)
    hide += [os.path.realpath(os.getcwd())]
    # Files on the harness's command line (the campaign file), except Python modules (code, e.g. a
    # test file that defines the adapter); folders there may be the adapter's own package.
    hide += [os.path.realpath(a) for a in sys.argv[1:] if os.path.isfile(a) and not a.endswith(".py")]
    for path in list(hide):
        hide += [path + suffix for suffix in ("-wal", "-shm", "-journal")]
    extra = [os.path.realpath(p) for p in os.environ.get(WRITABLE_ENV, "").split(os.pathsep) if p and os.path.isdir(p)]
    return {"ro": list(dict.fromkeys(ro)), "rw": os.path.realpath(workdir), "hide": list(dict.fromkeys(hide)),
            "rw_extra": extra,
            "tmp": os.path.realpath(os.path.dirname(os.path.realpath(workdir)))}


# -- host side (run in the forked host, before any adapter code) -----------------------------------------
def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise SandboxError(err, f"adapter host sandbox: {what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def enc(s: str | None) -> bytes | None:
        return None if s is None else s.encode()

    _check(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           f"mount {source or fstype} on {target}")


def _syscall(name: str) -> int:
    table = _SYS.get(platform.machine())
    if table is None:
        raise SandboxError(0, f"adapter host sandbox: no syscall table for {platform.machine()}")
    return table[name]


def _read_only(target: str, recursive: bool = True) -> None:
    # struct mount_attr {u64 attr_set, attr_clr, propagation, userns_fd}
    attr = struct.pack("QQQQ", _MOUNT_ATTR_RDONLY, 0, 0, 0)
    buf = ctypes.create_string_buffer(attr, len(attr))
    flags = _AT_RECURSIVE if recursive else 0
    _check(_libc.syscall(_syscall("mount_setattr"), -100, target.encode(), flags, buf, len(attr)),
           f"read-only {target}")


def _unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def set_dumpable(flag: bool) -> None:
    _libc.prctl(_PR_SET_DUMPABLE, int(flag), 0, 0, 0)


def _new_user_namespace(uid: int, gid: int, extra: int) -> None:
    set_dumpable(True)  # /proc/self/*_map of a non-dumpable process belong to root
    try:
        _unshare(_CLONE_NEWUSER | extra)
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    finally:
        set_dumpable(False)


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _mkdirs(root: str, path: str) -> str:
    """Create `path` (a real path, no symlinks) as directories inside `root`; the inner path."""
    inner = root + path
    os.makedirs(inner, exist_ok=True)
    return inner


def _place(root: str, path: str, is_dir: bool) -> str:
    """Make `path` reachable inside `root` as outside: symlinks recreated, the mount point made."""
    cur = ""
    parts = [p for p in path.split("/") if p]
    for i, part in enumerate(parts):
        cur = f"{cur}/{part}"
        if os.path.islink(cur):
            inner = root + os.path.realpath(os.path.dirname(cur)) + "/" + part
            if not os.path.lexists(inner):
                os.makedirs(os.path.dirname(inner), exist_ok=True)
                os.symlink(os.readlink(cur), inner)
            if i == len(parts) - 1:
                return ""
    real = os.path.realpath(path)
    if is_dir:
        return _mkdirs(root, real)
    _mkdirs(root, os.path.dirname(real))
    inner = root + real
    if not os.path.exists(inner):
        Path(inner).touch()
    return inner


def enter(spec: dict[str, Any]) -> None:
    """Build the view `spec` (from :func:`view`) and make it this process's root, locked."""
    uid, gid = os.getuid(), os.getgid()
    _new_user_namespace(uid, gid, _CLONE_NEWNS)
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    workdir = spec["rw"]
    root = os.path.join(workdir, ".root")
    os.makedirs(root, exist_ok=True)
    _mount("lsrep-host", root, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=1m")
    binds: list[str] = []
    for src in sorted({os.path.realpath(p) for p in spec["ro"] if os.path.exists(p)}, key=len):
        if not _under(src, binds):
            binds.append(src)
    # A private /tmp (and the harness's temporary folder), mounted first: binds may lie inside.
    for tmp in dict.fromkeys(["/tmp", spec.get("tmp") or "/tmp"]):
        if not _under(tmp, binds):
            _mount("lsrep-tmp", _mkdirs(root, tmp), "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=1777")
    for path in spec["ro"]:
        if os.path.islink(path):
            _place(root, path, True)
    for src in binds:
        inner = _place(root, src, os.path.isdir(src))
        _mount(src, inner, None, _MS_BIND | _MS_REC)
        _read_only(inner)
    # The host's own folder, read-write (in the private /tmp).
    _mount(workdir, _mkdirs(root, workdir), None, _MS_BIND)
    for extra in spec.get("rw_extra", ()):
        _mount(extra, _mkdirs(root, extra), None, _MS_BIND | _MS_REC)
    _devices(root)
    _mount("/proc", _mkdirs(root, "/proc"), None, _MS_BIND | _MS_REC)
    if os.path.isdir("/sys"):
        _mount("/sys", _mkdirs(root, "/sys"), None, _MS_BIND | _MS_REC)
        _read_only(root + "/sys")
    _cover(root, spec["hide"], [*binds, *spec.get("rw_extra", ())], workdir)
    os.chdir(root)
    _check(_libc.syscall(_syscall("pivot_root"), b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", _MNT_DETACH), "detach the old root")
    os.chdir("/")
    _read_only("/", recursive=False)
    # Lock it: in a namespace owned by a further user namespace every mount above is locked.
    _new_user_namespace(uid, gid, _CLONE_NEWNS)
    os.chdir(workdir)
    importlib.invalidate_caches()
    sys.path_importer_cache.clear()


def _devices(root: str) -> None:
    dev = _mkdirs(root, "/dev")
    _mount("lsrep-dev", dev, "tmpfs", _MS_NOSUID | _MS_NOEXEC, "mode=0755")
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            Path(f"{dev}/{name}").touch()
            _mount(f"/dev/{name}", f"{dev}/{name}", None, _MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{dev}/{name}")
    os.mkdir(f"{dev}/shm")
    _mount("lsrep-shm", f"{dev}/shm", "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=1777")


def _cover(root: str, hide: list[str], binds: list[str], workdir: str) -> None:
    """Cover every protected path the view shows; never one that holds code or the host's folder."""
    keep = [*binds, workdir]
    for path in hide:
        if not os.path.lexists(path):
            continue
        real = os.path.realpath(path)
        if not _under(real, binds) or any(_under(k, [real]) for k in keep):
            continue  # outside the view, or an ancestor of what the host needs (then it shows only those)
        inner = root + real
        if not os.path.lexists(inner):
            continue  # already hidden: under a folder covered before it (e.g. a protected campaign in the covered package)
        if os.path.isdir(real):
            _mount("lsrep-cover", inner, "tmpfs", _MS_RDONLY | _MS_NOSUID | _MS_NODEV, "mode=0555,size=4k")
        else:
            _mount("/dev/null", inner, None, _MS_BIND)


def loopback_up() -> None:
    """Bring up `lo` in this (new) network namespace: 127.0.0.1 works, nothing else is there."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s.fileno(), siocgifflags, req))[1]
        fcntl.ioctl(s.fileno(), siocsifflags, struct.pack("16sH14x", b"lo", flags | iff_up))


def selftest(workdir: str) -> None:
    """Enter a minimal view (system folders only) and exit 0: this machine allows the sandbox."""
    enter({"ro": [p for p in SYSTEM_DIRS if os.path.lexists(p)], "rw": workdir, "hide": [],
           "tmp": os.path.dirname(workdir)})
    if not os.path.isdir("/proc/self") or os.path.exists(os.path.join(workdir, ".root", "usr")):
        raise SandboxError(0, "adapter host sandbox: the view is not what was built")
