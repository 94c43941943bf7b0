"""A run whose reports cannot be written is refused before it sends anything, in one line.

A read-only checkout (the default ``./reports`` lies in it), a folder of another user, a path under a
file: the run would judge the target and then lose every report (a traceback at the end, once).  The
run checks each output's folder first (``reporting.outputs.unwritable``) and stops with a usage error
(exit 4) naming the folder and its option.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.launcher import ROOT
from petstore_contract.reporting.outputs import can_write_in


@contextlib.contextmanager
def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder on a read-only file system (a read-only bind mount: what a read-only checkout is), or a
    skip where this user may not mount."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "--bind", "-o", "ro", str(folder), str(folder)], capture_output=True, timeout=30, check=False
    )
    if mounted.returncode != 0:
        pytest.skip("this user cannot make a read-only bind mount")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True, timeout=30, check=False)


def test_a_folder_is_writable_where_it_or_the_folder_it_would_be_made_in_can_be_written(tmp_path: Path) -> None:
    assert can_write_in(tmp_path)
    assert can_write_in(tmp_path / "not" / "yet" / "made")
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    assert not can_write_in(blocker / "reports")  # under a file: nothing can be made there
    if os.geteuid() != 0:  # root writes through permission bits
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert not can_write_in(locked / "reports")


def test_a_read_only_file_system_is_not_writable(tmp_path: Path) -> None:
    with read_only_folder(tmp_path) as folder:
        assert not can_write_in(folder / "reports")


def suite(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests", *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("where", ["under-a-file", "read-only"])
def test_a_run_whose_reports_cannot_be_written_stops_first_in_one_line(where: str, tmp_path: Path) -> None:
    if where == "read-only":
        with read_only_folder(tmp_path) as folder:
            reports = folder / "reports"
            done = suite(f"--contract-report-dir={reports}", f"--junitxml={tmp_path / 'junit.xml'}")
    else:
        (tmp_path / "a-file").write_text("", encoding="utf-8")
        reports = tmp_path / "a-file" / "reports"
        done = suite(f"--contract-report-dir={reports}", f"--junitxml={tmp_path / 'a-file' / 'junit.xml'}")
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stdout + done.stderr
    assert lines[-1].startswith(f"ERROR: cannot write the reports into {reports} (--contract-report-dir)")
    if where == "under-a-file":
        assert f"{tmp_path / 'a-file'} (--junitxml)" in lines[-1]
    assert "requests" not in done.stdout  # nothing was sent: no run line
