"""Report files written in one step: a kill at any moment leaves the previous file or the new one, whole.

Every file a run writes as a report (summary.json, summary.md, report.html, the JUnit rewrite, the
bundle's HAR and manifest, a comparison) goes through ``write_text`` / ``write_bytes``: the bytes go
to a temporary file in the same folder (a rename is atomic only within one file system), are flushed
to disk, and the temporary file is then renamed over the report.  A CI system that ends a job with
SIGKILL while it writes leaves at most a stray ``.<name>.*.partial`` beside the reports, never a
truncated report where a complete one stood.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

PARTIAL = ".partial"
CHUNK = 1 << 16
MODE = 0o644  # what a plain write gives a new file under the usual umask (mkstemp gives 0600)


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """``text`` (UTF-8) into ``path`` in one step; the path."""
    return write_bytes(path, text.encode("utf-8"))


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """``data`` into ``path`` in one step (folder created); the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=PARTIAL, dir=target.parent)
    try:
        try:
            view = memoryview(data)
            while view:  # os.write may write less than it was given
                view = view[os.write(fd, view[:CHUNK]) :]
            os.fchmod(fd, _mode(target))
            os.fsync(fd)  # on disk before the rename: a power cut must not leave an empty report either
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return target


def _mode(target: Path) -> int:
    """The report's own permissions when it exists (a rename replaces them), else ``MODE``."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        return MODE
