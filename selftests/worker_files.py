"""What a web server's workers read, put where they can read it, wherever the checkout lies.

Started as root, Apache httpd (its children, mod_wsgi's daemons, mod_cgid's scripts), nginx and lighttpd
switch their workers to ``nobody`` (``worker_user``).  Those workers must reach every file they read: the
server's own folder (error pages, sockets, the SQLite store) and what the self-tests give them from the
checkout (the WSGI app, the CGI script, the modules those import, the venv's packages).  A checkout in a
folder others cannot search (``mktemp -d`` makes it 0700; a 0700 home) hides all of it from them, so:

- ``folder(prefix)``: a server's fresh temporary folder (0755), in a temporary directory its workers reach;
- ``reachable(paths)``: the paths themselves when the workers can read them all; otherwise copies, each at
  its own absolute path under this process's staging folder (so that a file finds its neighbours by
  relative path as in the checkout: ``wsgi_app.py``'s ``../blind3``), made once a process, removed at exit;
- ``import_path(folders, modules)``: ``folders`` as a ``sys.path`` for workers that import ``modules``:
  the folders themselves when the workers can read them, else the staging copies of what the import
  loads from them (a venv is hundreds of MB: only the packages the app imports are copied).

Not root, no server switches users: the workers read what this process reads and nothing is copied.
"""

from __future__ import annotations

import atexit
import grp
import importlib
import importlib.metadata
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path

WORKER = "nobody"  # the account each server's workers switch to when it is started as root
_LOCK = threading.Lock()  # one staging folder a process, filled by the test threads one at a time
_COPIED: set[Path] = set()


def worker_user() -> tuple[str, str] | None:
    """The user and group a server's workers switch to when it runs as root (nobody and its group), or
    None when it does not run as root (no switch: the workers are this process's user)."""
    if os.geteuid() != 0:
        return None
    nobody = pwd.getpwnam(WORKER)
    return nobody.pw_name, grp.getgrgid(nobody.pw_gid).gr_name


def _allowed(path: Path, user: str, wanted: int) -> bool:
    """``path`` grants ``user`` the ``wanted`` bits (4 read, 1 search) by its owner, group or other bits."""
    account = pwd.getpwnam(user)
    if account.pw_uid == 0:
        return True
    try:
        info = path.stat()
    except OSError:  # a dangling link: nothing to read there
        return False
    groups = {account.pw_gid, *(g.gr_gid for g in grp.getgrall() if user in g.gr_mem)}
    shift = 6 if info.st_uid == account.pw_uid else 3 if info.st_gid in groups else 0
    return (info.st_mode >> shift) & wanted == wanted


def readable(path: Path, user: str | None = None) -> bool:
    """``user`` (the workers' by default; anyone when they are this process's) can search every folder up
    to ``path`` and read it (a folder: list and search it, and read everything in it)."""
    user = user or (worker_user() or (None, None))[0]
    if user is None:
        return True
    if not _searchable(path, user):
        return False
    path = path.resolve()
    if not path.is_dir():
        return _allowed(path, user, 4)
    for top, folders, files in os.walk(path):
        if not _allowed(Path(top), user, 5) or not all(_allowed(Path(top, f), user, 4) for f in files):
            return False
        folders[:] = [f for f in folders if f != "__pycache__"]  # the workers never need the byte code
    return True


def _searchable(path: Path, user: str) -> bool:
    """Every folder on the way to ``path``, as written and with its links followed, searchable by ``user``."""
    written, resolved = path.absolute(), path.resolve()
    return all(_allowed(p, user, 1) for p in {*written.parents, *resolved.parents})


def base() -> Path:
    """A temporary directory the workers can reach: this process's (``$TMPDIR``), else ``/tmp``."""
    for candidate in (Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp")):
        owner = worker_user()
        if candidate.is_dir() and (owner is None or _searchable(candidate / "x", owner[0])):
            return candidate
    raise OSError(f"no temporary directory that {WORKER} can reach ({tempfile.gettempdir()} is not)")


def folder(prefix: str) -> Path:
    """A fresh folder for one server (its config, pid, logs, pages, sockets), 0755 where its workers reach."""
    made = Path(tempfile.mkdtemp(prefix=prefix, dir=base()))
    made.chmod(0o755)
    return made


@cache
def _stage() -> Path:
    root = folder("petstore-worker-files-")
    atexit.register(shutil.rmtree, root, True)
    return root


def _open_up(path: Path) -> None:
    """Readable by all (folders searchable, executables still executable), whatever the umask was; a link
    is left alone (its target is not the copy's)."""
    if path.is_symlink():
        return
    if not path.is_dir():
        path.chmod(0o755 if path.stat().st_mode & stat.S_IXUSR else 0o644)
        return
    for top, _folders, files in os.walk(path):  # links to folders are not walked into
        Path(top).chmod(0o755)
        for name in files:
            _open_up(Path(top, name))


def _copy(path: Path) -> Path:
    """``path`` copied (a folder whole) to its own absolute path under the staging folder, once."""
    path = path.resolve()
    copy = _stage() / path.relative_to(path.anchor)
    if path not in _COPIED:
        _COPIED.add(path)
        copy.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            shutil.copytree(path, copy, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copy2(path, copy)  # its time kept: byte code compiled from it stays valid
        _open_up(copy)
        for parent in copy.relative_to(_stage()).parents:
            (_stage() / parent).chmod(0o755)
    return copy


def reachable(paths: Sequence[Path]) -> list[Path]:
    """``paths`` where the workers can read them all: themselves, or their copies, all staged together."""
    with _LOCK:
        if all(readable(p) for p in paths):
            return list(paths)
        return [_copy(p) for p in paths]


def import_path(folders: Sequence[Path], modules: Sequence[str]) -> list[Path]:
    """``folders`` as the ``sys.path`` of workers that import ``modules`` from them (see the docstring)."""
    if all(_shallow(f) for f in folders):
        return list(folders)
    loaded = _loaded(tuple(str(f) for f in folders), tuple(modules))
    with _LOCK:
        return [_copy_entries(Path(f), entries) for f, entries in loaded.items()]


def _shallow(path: Path) -> bool:
    """A package folder the workers can list: what pip put in it is readable (no walk of a whole venv)."""
    owner = worker_user()
    if owner is None:
        return True
    return _searchable(path, owner[0]) and _allowed(path.resolve(), owner[0], 5)


def _copy_entries(where: Path, entries: Sequence[str]) -> Path:
    """The staging copy of ``where`` holding only ``entries`` (the folder itself, empty, when none)."""
    for entry in entries:
        _copy(where / entry)
    copy = _stage() / where.resolve().relative_to(where.resolve().anchor)
    copy.mkdir(parents=True, exist_ok=True)
    for parent in [copy, *copy.relative_to(_stage()).parents]:
        (_stage() / parent).chmod(0o755)
    return copy


@cache
def _loaded(folders: tuple[str, ...], modules: tuple[str, ...]) -> dict[str, list[str]]:
    """For each folder, the top-level entries (packages, modules) importing ``modules`` loads from it (in a
    process of its own, this interpreter: the workers' is the same Python minor version)."""
    done = subprocess.run(
        [sys.executable, __file__, json.dumps(folders), json.dumps(modules)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise OSError(f"importing {', '.join(modules)} failed: {done.stderr.strip()[-300:]}")
    entries: dict[str, set[str]] = {f: set() for f in folders}
    for file in json.loads(done.stdout):
        for f in folders:
            if file.startswith(f.rstrip("/") + "/"):
                entries[f].add(file[len(f.rstrip("/")) + 1 :].split("/")[0])
    return {f: sorted(found) for f, found in entries.items()}


def _files_loaded(folders: list[str], modules: list[str]) -> list[str]:
    """In the child: the files importing ``modules`` from ``folders`` loads, and the metadata of their
    distributions (a package may read its own: webargs reads its version)."""
    sys.path[:0] = folders
    for name in modules:
        importlib.import_module(name)
    files = [getattr(module, "__file__", None) or "" for module in list(sys.modules.values())]
    tops = {name.split(".")[0] for name in sys.modules}
    for top, names in importlib.metadata.packages_distributions().items():
        for name in names if top in tops else ():
            dist = importlib.metadata.distribution(name)
            files += [str(dist.locate_file(f)) for f in dist.files or () if f.parts[0].endswith(".dist-info")]
    return files


if __name__ == "__main__":
    print(json.dumps(_files_loaded(json.loads(sys.argv[1]), json.loads(sys.argv[2]))))
