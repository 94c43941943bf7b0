"""Where a contract run keeps Hypothesis' computed tables (``plugin/start.py``): the user's cache directory
(the XDG base directories' rule), or, where none can be written, a directory of the run's own.

The tables are what Hypothesis computes the same in every run (its Unicode tables, each module's
constants by the hash of its source), about 2.5 s of CPU a run when computed (docs/performance.md).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from petstore_contract.plugin.start import cache_home

VERSION = "6.170.0"


@pytest.mark.parametrize(
    ("xdg", "home", "expected"),
    [
        ("{tmp}/xdg", "{tmp}/home", "{tmp}/xdg/petstore-contract/hypothesis-6.170.0"),
        ("", "{tmp}/home", "{tmp}/home/.cache/petstore-contract/hypothesis-6.170.0"),
        # the rule ignores a relative XDG_CACHE_HOME
        ("relative/cache", "{tmp}/home", "{tmp}/home/.cache/petstore-contract/hypothesis-6.170.0"),
        (None, None, None),  # no HOME, no XDG_CACHE_HOME: no cache directory
        ("", "relative-home", None),
    ],
    ids=["xdg", "home", "relative-xdg", "no-home", "relative-home"],
)
def test_the_cache_directory_follows_the_xdg_rule(
    xdg: str | None, home: str | None, expected: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in (("XDG_CACHE_HOME", xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value.format(tmp=tmp_path))
    monkeypatch.chdir(tmp_path)
    found = cache_home(VERSION)
    assert found == (expected.format(tmp=tmp_path) if expected else None)
    assert found is None or Path(found).is_dir()
    assert not (tmp_path / "relative-home").exists() and not (tmp_path / "relative").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_cache_directory_that_cannot_be_written_is_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    closed = tmp_path / "closed"
    closed.mkdir()
    closed.chmod(0o500)
    try:
        monkeypatch.setenv("XDG_CACHE_HOME", str(closed))
        assert cache_home(VERSION) is None
    finally:
        closed.chmod(0o700)


def test_a_cache_path_that_is_a_file_is_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whoever runs it (root writes anywhere): a file where the directory would be."""
    (tmp_path / "petstore-contract").write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_home(VERSION) is None
