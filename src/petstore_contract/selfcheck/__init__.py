"""The project proving itself: one launcher for suite runs, and the kill matrix over the catalog."""

from petstore_contract.selfcheck.launcher import SuiteRun, run_suite

__all__ = ["SuiteRun", "run_suite"]
