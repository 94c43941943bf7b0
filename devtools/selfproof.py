"""``python -m devtools.selfproof [pytest options]``: tier 2 of the self-tests, the whole self-proof.

Runs every test whose size depends on the tier (``selftests/tiers.py``), at its full size: every fault
scenario, compliant variant and unjudgeable target of the kill matrix, every server of every blind
round, the whole mutation sample and the repetition tests at their full counts.  Two xdist workers
share the catalogs' chunks, as in tier 1.  The last lines are one table of the figures (kills,
compliant passes and collateral per catalog, the blind rounds' scores, the mutation score); the same
figures go to ``reports/self-proof-tier-2.json`` with the commit they were measured on.  The exit
status is pytest's.  Extra options go to pytest (``-n 4`` on a larger machine, ``-x``, ``-k``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULTS = ("-n", "2", "--dist", "loadgroup")


def command(extra: list[str]) -> list[str]:
    workers = () if any(a == "-n" or a.startswith(("-n", "--numprocesses")) for a in extra) else DEFAULTS
    return [sys.executable, "-m", "pytest", "selftests", "--self-proof", "-m", "tiered", *workers, *extra]


def main(argv: list[str] | None = None) -> int:
    try:
        return subprocess.run(command(list(sys.argv[1:] if argv is None else argv)), cwd=ROOT, check=False).returncode
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
