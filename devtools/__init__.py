"""The repository's development tools, not part of the installed package (the wheel leaves them out).

- ``launcher``: the one way the self-tests and the benchmark run the contract suite as a user would;
- ``catalog``: the fault catalog, the compliant variants and the unjudgeable targets, served through the
  reference's ``build_app`` (``python -m devtools.catalog --fault NAME``, ``--variant NAME``, ``--list``);
- ``killmatrix``: the suite against every fault, compliant variant and unjudgeable target;
- ``samerun``: the same seed's requests and reports recorded per target and compared between two commits
  (``python -m devtools.samerun record DIR``, ``compare A B``; docs/self-proof.md);
- ``mutation``: mutation testing of the reference server (``python -m devtools.mutation``, needs the
  dev extra's cosmic-ray and a git checkout).

Importable from the checkout: pytest's ``pythonpath`` (pyproject.toml) puts the checkout's root on the
path for the self-tests, and ``python -m devtools...`` run from the checkout finds it as well.
"""

from devtools.launcher import SuiteRun, run_suite

__all__ = ["SuiteRun", "run_suite"]
