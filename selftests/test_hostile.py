"""No target can hang or crash the run: the suite against deliberately hostile local servers.

Each case runs the contract suite as a user would (a subprocess, ``--base-url`` and the key in
the environment) against one misbehaving server on 127.0.0.1, and checks the exit code, that the
cause is named in one line (no Python traceback), that every selected test is still reported,
and that the run ended in bounded time.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from hostile import (
    Handler,
    HostileServer,
    empty_list,
    endless,
    free_port,
    has_authorization,
    not_json,
    redirect_to,
    reset_mid_body,
    silent,
    trickle,
)
from petstore_contract.reference import BackgroundServer, build_app
from petstore_contract.reference.server import bind_loopback
from petstore_contract.selfcheck import ROOT, SuiteRun, run_suite

KEY = "hostile-selftest-key-5c1e9a"
FAST = ("--request-timeout", "1")
TARGETED = ("-m", "not generated")
ALL_QUICK = ("--contract-profile", "quick")


def collected(*selection: str) -> int:
    """How many tests a selection holds (collected against the embedded reference)."""
    with tempfile.TemporaryDirectory(prefix="petstore-collect-") as reports:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "tests",
                "--collect-only",
                "-q",
                "-p",
                "no:cacheprovider",
                f"--report-dir={reports}",
                *selection,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    found = re.search(r"(\d+)(?:/\d+)? tests? (?:collected|selected)", done.stdout)
    assert found, done.stdout[-2000:]
    return int(found.group(1))


@pytest.fixture(scope="module")
def targeted_count() -> int:
    return collected(*TARGETED)


@pytest.fixture(scope="module")
def all_count() -> int:
    return collected(*ALL_QUICK)


def assert_clear_failure(run: SuiteRun, cause: str, reported: int, max_seconds: float) -> None:
    """Exit 1, the cause in one line, no traceback dump, every test reported, bounded time."""
    assert run.exit_code == 1, run.output[-3000:]
    assert re.search(cause, run.output), f"{cause!r} not in:\n{run.output[-3000:]}"
    assert "Traceback" not in run.output, run.output[-3000:]
    assert len(run.failed) + run.passed + run.skipped == reported, run.output[-3000:]
    assert run.failed, "a hostile target must never pass"
    assert run.seconds < max_seconds, f"took {run.seconds:.1f} s"
    assert KEY not in run.output


def against(handler: Handler, *args: str) -> SuiteRun:
    with HostileServer(handler) as server:
        return run_suite(server.base_url, KEY, *FAST, *args, timeout=300)


def test_connection_refused(all_count: int) -> None:
    run = run_suite(f"http://127.0.0.1:{free_port()}/v1", KEY, *FAST, *ALL_QUICK, timeout=300)
    refused = r"target problem: GET http://127\.0\.0\.1:\d+/v1/pets\S*: connection refused"
    assert_clear_failure(run, refused, all_count, 60)


def test_server_that_never_answers_trips_the_breaker(all_count: int) -> None:
    run = against(silent, *ALL_QUICK)
    assert_clear_failure(run, r"no answer within 1 s", all_count, 60)
    assert "target unusable: 3 requests in a row got no answer" in run.output


def test_body_that_trickles_in_is_cut_off(targeted_count: int) -> None:
    run = against(trickle, *TARGETED)
    assert_clear_failure(run, r"answer body still arriving after 3 s; stopped reading", targeted_count, 90)


def test_reset_mid_body(targeted_count: int) -> None:
    run = against(reset_mid_body, *TARGETED)
    assert_clear_failure(run, r"connection broke mid-body \(", targeted_count, 60)


def test_body_that_is_not_json(all_count: int) -> None:
    run = against(not_json, *ALL_QUICK)
    assert_clear_failure(run, r"expected a JSON body, got '<html>", all_count, 120)


def test_endless_body_is_capped(targeted_count: int) -> None:
    run = against(endless, *TARGETED, "--max-body-bytes", "100000")
    capped = r"answer body exceeds 100000 bytes \(--max-body-bytes\); stopped reading"
    assert_clear_failure(run, capped, targeted_count, 60)


def test_redirect_to_another_origin_keeps_the_key(all_count: int) -> None:
    with HostileServer(empty_list) as other, HostileServer(redirect_to(other.base_url)) as redirecting:
        run = run_suite(redirecting.base_url, KEY, *FAST, *ALL_QUICK, timeout=300)
        assert redirecting.requests, "the suite never reached the redirecting server"
        assert not any(has_authorization(head) for head in other.requests), "the key reached another host"
        assert not other.requests, "a redirect to another origin was followed"
    refused = r"was redirected to another origin \(http://127\.0\.0\.1:\d+\); not followed"
    assert_clear_failure(run, refused, all_count, 120)


# -- TLS: verification on by default, --ca-bundle to trust a private CA ---------------------------


class TlsReference:
    """The reference app over HTTPS with a given certificate, in a background thread."""

    def __init__(self, cert: Path, key: Path) -> None:
        self.sock = bind_loopback()
        self.port = int(self.sock.getsockname()[1])
        config = uvicorn.Config(
            build_app(KEY), log_level="critical", lifespan="off", ssl_certfile=str(cert), ssl_keyfile=str(key)
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> TlsReference:
        self.thread.start()
        for _ in range(500):
            if self.server.started or not self.thread.is_alive():
                break
            threading.Event().wait(0.01)
        assert self.server.started, "the TLS reference server did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=5)
        self.sock.close()


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make a self-signed certificate")
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        capture_output=True,
        check=True,
        timeout=60,
    )
    return cert, key


@pytest.fixture(scope="module")
def tls_server(self_signed: tuple[Path, Path]) -> Iterator[TlsReference]:
    with TlsReference(*self_signed) as server:
        yield server


def test_self_signed_certificate_fails_by_default(tls_server: TlsReference, all_count: int) -> None:
    run = run_suite(tls_server.base_url, KEY, *FAST, *ALL_QUICK, timeout=300)
    assert_clear_failure(run, r"TLS error\S* .*certificate verification failed \(see --ca-bundle\)", all_count, 60)


def test_self_signed_certificate_passes_with_ca_bundle(
    tls_server: TlsReference, self_signed: tuple[Path, Path]
) -> None:
    run = run_suite(tls_server.base_url, KEY, *FAST, *ALL_QUICK, "--ca-bundle", str(self_signed[0]), timeout=300)
    assert run.exit_code == 0, run.output[-3000:]
    assert run.passed > 100 and not run.failed


# -- the whole-run budget -------------------------------------------------------------------------


def test_run_budget_bounds_a_run_without_the_breaker(all_count: int) -> None:
    """A silent target, breaker off: each test would wait 1 s; the budget ends the run instead."""
    run = against(silent, *ALL_QUICK, "--circuit-breaker", "0", "--run-budget", "4")
    assert_clear_failure(run, r"run budget of 4 s spent \(--run-budget\)", all_count, 30)
    assert run.output.count("run budget of 4 s spent") >= 100, run.output[-3000:]


def test_run_budget_fails_the_rest_even_of_a_good_target(all_count: int) -> None:
    """Against the reference, a too-small budget never gives a pass: what is left fails at once."""
    with BackgroundServer(build_app(KEY)) as server:
        run = run_suite(server.base_url, KEY, *FAST, *ALL_QUICK, "--run-budget", "1.5", timeout=300)
    assert_clear_failure(run, r"run budget of 1\.5 s spent \(--run-budget\)", all_count, 30)
