"""The pytest plugin's entry module (entry point ``pytest11``): options, markers, the run.

It acts only on runs that collect the contract suite, so that another project's tests in the same
environment (and the project's own ``selftests/``) run untouched: it registers its options (all
``--contract-*``) in every session, and only for a contract run its markers, the run's settings and
the one session object (``session.ContractSession``) whose methods are the run's hooks.  The suite's
fixtures are in its own conftest, which only a contract run loads.

This module imports only what every session needs (the options, where the suite lives): the run's
modules (Schemathesis' schemas, jsonschema, PyYAML, the reports) load in ``start`` when a session turns
out to be a contract run, so another project's session starts as fast as without the suite.

The modules: ``options`` (the command-line options as data, and the checks of their values),
``start`` (what a contract run loads), ``loaded`` (every module of the suite loaded before
the first case, so that one seed draws the same cases), ``session`` (the session object, one per pytest process,
controller or xdist worker), ``classify`` (one test's outcome classified into a ``TestRecord``),
``stopping`` (SIGTERM and SIGHUP end a contract run as Ctrl-C does), ``finish`` (the end of a run in
the controller: records, re-asks, verdict, reports, exit code).
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from petstore_contract.interface.files import suite_dir
from petstore_contract.plugin import options

if TYPE_CHECKING:
    from petstore_contract.run import Run


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_to(parser)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> Generator[None, object, object]:
    options.declare_base_url(early_config, parser)
    loaded = yield  # the initial conftests declare their own options: then an option nobody declared is known
    typo = options.unknown_option_line(parser, args)
    if typo:
        raise pytest.UsageError(typo)
    return loaded


# -- the run ----------------------------------------------------------------------------------------


def is_contract_run(config: pytest.Config) -> bool:
    if hasattr(config, "workerinput"):
        return "petstore_settings" in config.workerinput
    suite = suite_dir().resolve()
    args = config.args or [str(Path.cwd())]
    for arg in args:
        if config.option.pyargs and arg.split("::", 1)[0].startswith("petstore_contract"):
            return True
        path = Path(arg.split("::", 1)[0]).resolve()
        if path == suite or suite in path.parents or (path in suite.parents and not config.option.pyargs):
            return path == suite or suite in path.parents or _testpaths_include(config, suite)
    return False


def _testpaths_include(config: pytest.Config, suite: Path) -> bool:
    paths = config.getini("testpaths") or []
    return any((config.rootpath / p).resolve() == suite for p in paths)


def pytest_configure(config: pytest.Config) -> None:
    options.notice_deprecated(config)
    rooted = options.path_taken_for_tests(config) if not hasattr(config, "workerinput") else ""
    if rooted:
        raise pytest.UsageError(rooted)
    # An earlier contract run of this process (it imported the heap module) leaves nothing frozen for
    # this session; a process that never ran the suite has nothing to release.
    heap = sys.modules.get("petstore_contract.run.heap")
    if heap is not None:
        heap.release()
    if not is_contract_run(config):
        return
    from petstore_contract.plugin import start

    start.contract_run(config)


def run_of(config: pytest.Config) -> Run:
    """The contract run of this session (the suite's conftest makes it a fixture); a skip outside one.

    The run's one home is ``petstore_contract.run`` (``active_run``): the generated tests' module reads it at
    import, where no config is at hand; a process runs one contract session at a time."""
    from petstore_contract.run import active_run

    run = active_run() if is_contract_run(config) else None
    if run is None:
        pytest.skip("not a contract run")
    return run
