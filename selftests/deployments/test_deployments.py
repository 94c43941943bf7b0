"""The contract suite against small real deployments of a compliant Pet Store, as CI users gate Staging.

Each deployment (``deploykit.DEPLOYMENTS``, README.md) serves a compliant store, started on an empty
store for every run from a configuration generated in a temporary folder; the suite runs as a user runs
it (``launcher.run_suite``: a process of its own, ``--base-url``, the key in the environment, the default
profile, which is the CI gate's). Every run must end *conformant* with no write's answer lost: these
servers close kept-alive connections when they may (RFC 9112 §9.6: at their keep-alive timeout, or, for
Apache's event MPM, when every worker is busy), and a gate that calls such a deployment inconclusive fails
its users' pipelines.

Tier 2 only (``tier_2``): ten runs a deployment. Tier 1 shows the mechanisms these runs repeat on real
servers: a compliant server judged conformant (``test_blind_catalog.py``, each blind round's first
server) and a connection closed under a request (``test_transport.py``,
``test_keep_alive_closed_by_the_server_is_sent_again_once`` and
``test_a_write_whose_connection_dropped_is_never_sent_again``); here tier 1 only checks that Apache's
generated configuration and the Node store are ones their runtimes accept.
"""

from __future__ import annotations

import http.client
import os
import secrets
import socket
import subprocess
import time
from pathlib import Path

import configs
import deploykit
import pytest

from devtools.launcher import SuiteRun, run_suite

RUNS = 10
SUITE_ARGS: tuple[str, ...] = ()  # the default profile: what a CI gate runs
RUN_SECONDS = 900
COUNTERS = (
    "requests",
    "writes",
    "no_answer",
    "connection_resets",
    "unknown_writes",
    "throttled",
    "stalled_answers",
    "concurrency",
    "concurrency_min",
)
LOG_LINES = 15  # of a server's log, in a failure message


def runnable(deployment: deploykit.Deployment) -> None:
    """A deployment whose runtime is missing: skipped, or failed when CI requires every runtime."""
    problem = deploykit.unavailable(deployment)
    if problem:
        required = os.environ.get(deploykit.REQUIRED) == "1"
        (pytest.fail if required else pytest.skip)(f"{deploykit.REQUIRED}={int(required)}: {problem}")


def judged(name: str) -> tuple[SuiteRun, str]:
    """One suite run on a fresh deployment (an empty store); the server's log as it was when it stopped."""
    key = "deploy-" + secrets.token_urlsafe(16)
    with deploykit.deployed(name, key) as running:
        run = run_suite(running.base_url, key, *SUITE_ARGS, timeout=RUN_SECONDS)
    return run, running.last_log


def line(run: SuiteRun) -> str:
    counters = ", ".join(f"{name} {run.summary.get(name, '-')}" for name in COUNTERS)
    return f"{run.verdict} (exit {run.exit_code}, {run.seconds:.0f} s): {run.summary.get('reason', '')} [{counters}]"


def acceptable(run: SuiteRun) -> bool:
    return run.verdict == "conformant" and run.exit_code == 0 and run.count("unknown_writes") == 0


def last_warning(log: str) -> str:
    """The server log's last line that is not a notice (Apache's AH00484 when its pool was full), or none."""
    kept = [text for text in log.splitlines() if text.strip() and ":notice]" not in text and not text.startswith("---")]
    kept = [text for text in kept if not text.startswith("listening on ")]  # the Node store's first line
    return kept[-1][-200:] if kept else "nothing but notices"


def tail(log: str) -> str:
    """The log's last lines, Apache's notices about starting and stopping left out."""
    kept = [text for text in log.splitlines() if ":notice]" not in text]
    return "\n".join(kept[-LOG_LINES:])


@pytest.mark.tier_2
@pytest.mark.parametrize("name", list(deploykit.DEPLOYMENTS))
def test_every_run_on_the_deployment_is_conformant_with_no_write_lost(name: str) -> None:
    deployment = deploykit.DEPLOYMENTS[name]
    runnable(deployment)
    results = [judged(name) for _ in range(RUNS)]
    lines = [f"run {n + 1}: {line(run)} | server log: {last_warning(log)}" for n, (run, log) in enumerate(results)]
    print(f"\n{name} ({deployment.summary}):\n" + "\n".join(lines))  # shown with -s, and on failure
    failed = [(n, run, log) for n, (run, log) in enumerate(results) if not acceptable(run)]
    evidence = [
        f"run {n + 1}: {line(run)}\n  server log:\n{tail(log) or '(empty)'}\n  suite output:\n{run.output[-1500:]}"
        for n, run, log in failed[:2]
    ]
    assert not failed, (
        f"{name} ({deployment.summary}): {RUNS - len(failed)} of {RUNS} runs conformant with no write lost\n"
        + "\n".join(lines)
        + "\n"
        + "\n".join(evidence)
    )


@pytest.mark.tier_2
@pytest.mark.parametrize("name", list(deploykit.FAULTY))
def test_a_line_a_vendor_left_wrong_is_caught_on_its_clause(name: str) -> None:
    """The compliant Apache deployment with one line left as httpd has it by default (TraceEnable on: TRACE
    echoed with the key) or without its error pages (httpd's HTML for what it answers itself): what the web
    server answers is the service's answer, caught on its own clause and nothing else."""
    deployment, clauses = deploykit.FAULTY[name]
    runnable(deployment)
    run, log = judged(name)
    assert run.verdict == "not_conformant" and run.violated() == clauses, f"{line(run)}\n{tail(log)}"


def answered(connection: http.client.HTTPConnection, key: str) -> http.client.HTTPResponse:
    connection.request("GET", "/v1/pets", headers={"Authorization": f"Bearer {key}"})
    response = connection.getresponse()
    response.read()
    assert response.status == 200, response.status
    return response


CLOSE_WAIT = 10  # how long the end of an idle connection may take to arrive, past its keep-alive timeout


def closed_by_the_server(sock: socket.socket) -> bool:
    """The server closes the idle connection within CLOSE_WAIT: its end of the stream arrives (or a reset)."""
    sock.settimeout(CLOSE_WAIT)
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


@pytest.mark.tier_2
@pytest.mark.parametrize("name", list(deploykit.DEPLOYMENTS))
def test_the_deployment_closes_connections_as_its_server_is_configured(name: str) -> None:
    """What the runs above meet: a kept-alive connection serves a second request, and the server closes it
    on its own once idle past its keep-alive timeout (a server that keeps idle connections much longer, as
    nginx's 75 s, fails: its end does not come within CLOSE_WAIT more); gunicorn's sync workers close every
    connection after its answer. Then SIGTERM stops the server cleanly (exit 0, nothing left behind)."""
    deployment = deploykit.DEPLOYMENTS[name]
    runnable(deployment)
    key = "deploy-" + secrets.token_urlsafe(16)
    running = deploykit.Running(deployment, key)
    connection = http.client.HTTPConnection("127.0.0.1", running.port, timeout=30)
    try:
        first = answered(connection, key)
        if deployment.keep_alive is None:
            assert first.getheader("Connection") == "close" and connection.sock is None, running.log()
        else:
            sock = connection.sock
            assert sock is not None, f"{name} closed the connection after one answer"
            answered(connection, key)
            assert connection.sock is sock, f"{name} did not keep the connection alive for a second request"
            time.sleep(deployment.keep_alive)
            idle = deployment.keep_alive + CLOSE_WAIT
            assert closed_by_the_server(sock), f"{name}: a connection idle {idle} s is still open\n{running.log()}"
    finally:
        connection.close()
        status = running.stop()
    assert status == 0, f"{name} did not stop cleanly on SIGTERM (exit {status})\n{running.last_log}"
    assert not port_open(running.port), f"{name} left its port open"


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return True
    except OSError:
        return False


CHECKS = {  # each server's own check of what the harness generates, no server started
    "apache_event_wsgi": lambda folder: [
        str(configs.apache_binary()),
        "-t",
        "-f",
        str(configs.write_apache(folder, configs.runtimes.free_port())),
        "-d",
        str(folder),
    ],
    "apache_wsgi_app_error_pages": lambda folder: [
        str(configs.apache_binary()),
        "-t",
        "-f",
        str(configs.write_apache(folder, configs.runtimes.free_port(), pages="application")),
        "-d",
        str(folder),
    ],
    "node_http": lambda folder: ["node", "--check", str(deploykit.HERE / "node" / "petstore.js")],
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_the_generated_configuration_is_one_its_server_accepts(name: str, tmp_path: Path) -> None:
    """Tier 1, cheap: Apache's ``-t`` on the generated httpd.conf (the modules it loads, the MPM's pool,
    mod_wsgi's daemon), Node's ``--check`` on the store; gunicorn's file is read only by a start (tier 2)."""
    runnable(deploykit.DEPLOYMENTS[name])
    done = subprocess.run(CHECKS[name](tmp_path), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"{name}: {done.stdout}{done.stderr}"
