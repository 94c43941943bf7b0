"""The self-tests' web servers work wherever the checkout lies (``worker_files.py``).

Started as root, Apache httpd, nginx and lighttpd run their workers as ``nobody``: a checkout in a folder
only its owner can enter (``mktemp -d`` makes 0700 folders) hides the WSGI app, the CGI script, the modules
they import and the venv's packages from them, unless what they read is copied where they can read it.
Tier 1: a copy of ``selftests/`` with a venv of its own, in a 0700 folder whose name holds a space, run
without ``$HOME`` (``any_checkout.py``): every path its generated configurations name readable by the
workers, and the Apache + mod_wsgi deployment and the CGI server answering from it.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

import worker_files

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "selftests" / "deployments"))
import deploykit  # noqa: E402 (the deployments' table: what Apache with mod_wsgi needs installed)


def test_a_path_is_readable_by_the_workers_only_if_every_folder_above_it_lets_them_through() -> None:
    top = worker_files.folder("worker-files-test-")
    try:
        inner = top / "a folder"
        inner.mkdir(mode=0o700)
        inner.chmod(0o700)
        page = inner / "page.json"
        page.write_text("{}", "utf-8")
        page.chmod(0o644)
        assert not worker_files.readable(page, "nobody")
        inner.chmod(0o755)
        assert worker_files.readable(page, "nobody") and worker_files.readable(inner, "nobody")
        page.chmod(0o600)
        assert not worker_files.readable(page, "nobody") and not worker_files.readable(inner, "nobody")
    finally:
        shutil.rmtree(top)


def test_files_the_workers_cannot_read_are_copied_together_where_they_can(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each copy at its own absolute path under one staging folder: a module finds its neighbours as in the
    checkout; a folder the workers can read is used as it is."""
    monkeypatch.setattr(worker_files, "worker_user", lambda: ("nobody", "nogroup"))
    top = worker_files.folder("worker-files-test-")
    try:
        hidden = top / "hidden"
        (hidden / "app").mkdir(parents=True)
        (hidden / "lib").mkdir()
        hidden.chmod(0o700)
        script, library = hidden / "app" / "main.py", hidden / "lib"
        script.write_text("print('hi')\n", "utf-8")
        (library / "helper.py").write_text("X = 1\n", "utf-8")
        script.chmod(0o600)  # as a checkout made under umask 077 holds it
        copies = worker_files.reachable([script, library])
        assert copies[0] != script and copies[0].read_text("utf-8") == "print('hi')\n"
        assert copies[0].parent.parent / "lib" == copies[1] and (copies[1] / "helper.py").exists()
        assert all(worker_files.readable(copy, "nobody") for copy in copies)
        hidden.chmod(0o755)
        assert worker_files.reachable([script]) != [script]  # the file itself is still its owner's only
        script.chmod(0o644)
        assert worker_files.reachable([script]) == [script]
    finally:
        shutil.rmtree(top)


def hidden_checkout(tmp_path: Path) -> Path:
    """``selftests/`` copied into a 0700 folder named with a space, and a venv inside it: this interpreter's
    (its site-packages a link to this one's, as reachable from the hidden folder as a venv of its own)."""
    checkout = tmp_path / "a checkout"
    checkout.mkdir()
    checkout.chmod(0o700)
    shutil.copytree(ROOT / "selftests", checkout / "selftests", ignore=shutil.ignore_patterns("__pycache__"))
    venv.EnvBuilder(symlinks=True, with_pip=False).create(checkout / ".venv")
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = checkout / ".venv" / "lib" / version / "site-packages"
    site.rmdir()
    site.symlink_to(sysconfig.get_paths()["purelib"], target_is_directory=True)
    return checkout


def test_the_web_servers_read_what_they_need_from_a_checkout_only_its_owner_can_enter(tmp_path: Path) -> None:
    problem = deploykit.unavailable(deploykit.DEPLOYMENTS["apache_event_wsgi"])
    if problem:
        required = os.environ.get(deploykit.REQUIRED) == "1"
        (pytest.fail if required else pytest.skip)(f"{deploykit.REQUIRED}={int(required)}: {problem}")
    checkout = hidden_checkout(tmp_path)
    key = "checkout-" + secrets.token_urlsafe(12)
    python = checkout / ".venv" / "bin" / "python"
    done = subprocess.run(
        [str(python), str(checkout / "selftests" / "any_checkout.py"), key],
        cwd=checkout,
        env={name: value for name, value in os.environ.items() if name != "HOME"},
        capture_output=True,
        text=True,
        timeout=600,  # past the deployment's own bound on its starts (deploykit: 5 of START_SECONDS), its log
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["unreadable"] == [], result["unreadable"]
    assert result["answers"] == {"apache_event_wsgi": 200, "apache-cgi": 200}, result["answers"]
