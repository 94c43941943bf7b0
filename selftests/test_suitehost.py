"""The suite host (``devtools/suitehost.py``) that runs the catalogs: each run a whole pytest session of
its own, run after run in one interpreter, and a host that hangs or dies costs its run, not the catalog.

- Runs in one host do not carry over: two faults in a row are each caught on their own clause alone, and
  the reference after them passes; each run's output holds its own verdict and not the key.
- The host's environment holds no key: each run brings its own and takes it away again.
- A run that outlasts its timeout ends ``TIMED_OUT`` and its host is replaced; a host that dies mid-run
  ends its run ``HOST_DIED``; the next run on the pool goes on in a fresh host.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from devtools.catalog import FAULTS, catalog_app
from devtools.killmatrix import QUICK, blackhole
from devtools.suitehost import HOST_DIED, TIMED_OUT, SuiteHost, suite_hosts
from petstore_contract.reference import REFERENCE, BackgroundServer, build_app

KEY = "suitehost-selftest-key-3b9e"


@pytest.mark.tier_2
def test_runs_in_one_host_do_not_carry_over() -> None:
    host = SuiteHost()
    try:
        for fault in ("list_wraps_array", "error_status_string", None):
            with BackgroundServer(catalog_app(KEY, REFERENCE, fault)) as server:
                run = host.run(server.base_url, KEY, QUICK, timeout=300)
            expected = {FAULTS[fault].clause} if fault else set()
            assert run.violated() == expected, f"{fault}: {sorted(run.violated())}\n{run.output[-2000:]}"
            assert run.exit_code == (1 if fault else 0)
            assert ("Not conformant" if fault else "Conformant") in run.output
            assert KEY not in run.output
        assert host.process.poll() is None, "one host served all three runs"
    finally:
        host.close()


def test_the_host_environment_holds_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PETSTORE_API_KEY", KEY)
    host = SuiteHost()
    try:
        assert KEY.encode() not in Path(f"/proc/{host.process.pid}/environ").read_bytes()
    finally:
        host.close()


def test_a_run_past_its_timeout_ends_and_the_pool_goes_on() -> None:
    with suite_hosts() as hosts, blackhole() as url:
        # A request timeout far beyond the host's: the run would wait on the silent port.
        run = hosts.run(url, KEY, *QUICK, "--contract-request-timeout", "60", timeout=3)
        assert run.exit_code == TIMED_OUT and "timed out" in run.output
        first = hosts.all[0]
        assert first.process.poll() is not None, "the timed-out host is gone"
        with BackgroundServer(build_app(KEY, REFERENCE)) as server:
            again = hosts.run(server.base_url, KEY, "--collect-only", timeout=120)
        assert again.exit_code == 0, again.output[-2000:]
        assert first not in hosts.all and len(hosts.all) == 1


def test_a_host_that_dies_mid_run_ends_that_run() -> None:
    host = SuiteHost()
    try:
        with blackhole() as url:
            threading.Timer(2.0, host.process.kill).start()
            run = host.run(url, KEY, (*QUICK, "--contract-request-timeout", "60"), timeout=120)
        assert run.exit_code == HOST_DIED and "ended without an answer" in run.output
    finally:
        host.close()


def test_a_host_refuses_what_an_interpreter_reads_at_start_up() -> None:
    """A run that sets PYTHONPATH or TMPDIR needs a process of its own: the host says so, it does not run."""
    host = SuiteHost()
    try:
        for name in ("PYTHONPATH", "TMPDIR"):
            with pytest.raises(ValueError, match=f"cannot change {name}: use launcher.run_suite"):
                host.run(None, KEY, ("--collect-only",), timeout=60, env={name: "/nowhere"})
        assert host.runs == 0
    finally:
        host.close()
