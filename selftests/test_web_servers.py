"""Real web servers in front of the reference, configured as their users configure them: the HTTP layer's proof.

Apache httpd, nginx and lighttpd (Debian's packages) as the reverse proxy in front of the embedded
reference, each from a generated config (``webservers/``, its README): the compliant config passes
(error pages with the Error body for what the web server answers itself, compression only when asked,
no body limit under the document's needs); each line a vendor could leave wrong is caught on its own
clause(s); a line the document does not judge leaves the run conformant.  Tier 1 runs the compliant
config of nginx, lighttpd and Apache's CGI, and Apache's forced gzip (its compliant proxy config with one
line more: nothing but that line's clause may fail); tier 2 the other configs.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from devtools.launcher import SuiteRun
from hosted import run_hosted
from petstore_contract.reference import BackgroundServer, build_app

sys.path.insert(0, str(Path(__file__).parent / "webservers"))
from apache import Apache
from apache_cgi import ApacheCgi
from foreground import ForegroundServer, installed
from lighttpd import Lighttpd
from nginx import Nginx


class Server(NamedTuple):
    binary: str  # its executable (the test is skipped where the package is not installed)
    # (the upstream's port, the key, the fault) -> the server, up; a server that runs the application itself
    # (CGI) has no upstream and is given the key
    start: Callable[[int, str, str], ForegroundServer]


SERVERS = {
    "apache": Server("apache2", lambda upstream, key, fault: Apache(upstream, fault)),
    "apache-cgi": Server("apache2", lambda upstream, key, fault: ApacheCgi(key, fault)),
    "nginx": Server("nginx", lambda upstream, key, fault: Nginx(upstream, fault)),
    "lighttpd": Server("lighttpd", lambda upstream, key, fault: Lighttpd(upstream, fault)),
}


# (server, config) -> the clauses its run violates (none: the run is conformant), whether tier 1 runs it, and
# why the suite cannot see a fault yet (a strict xfail: it turns red the day the suite sees it).  A config
# is the compliant one ("") or the compliant one with one line changed (each server's FAULTS).
class Case(NamedTuple):
    violated: frozenset[str]
    tier_1: bool = False
    unseen: str = ""
    # clauses a run may violate besides ``violated``, each finding there an answer cut short (which refusals
    # are cut depends on how fast httpd reads the script's answer)
    cut_short_also: frozenset[str] = frozenset()
    inconclusive: str = ""  # the reason of a run that cannot be judged, as the run's summary gives it
    warned: frozenset[str] = frozenset()  # SHOULD clauses it violates: warnings, the run still conformant


CASES = {
    # Tier 2: tier 1's forced gzip runs this configuration with one line more, and fails on any clause but
    # http.content-coding; nginx's compliant run shows compression when asked accepted on a real server.
    ("apache", ""): Case(frozenset()),
    ("apache", "gzip-forced"): Case(
        frozenset({"http.content-coding"}), tier_1=True, warned=frozenset({"http.content-coding.refused"})
    ),
    # httpd's own pages: HTML (errors.body).  Its own 405 to TRACE (no Allow without the ErrorDocument's header
    # line) is the web server's answer to what is no request of the interface: only an echo would mislead.
    ("apache", "html-error-pages"): Case(frozenset({"errors.body"})),
    ("apache", "body-limit-html"): Case(frozenset({"errors.body"})),
    # Its HTML 404 to an encoded slash (AllowEncodedSlashes Off), a valid request-target.
    ("apache", "no-404-page"): Case(frozenset({"errors.body"})),
    ("apache-cgi", ""): Case(frozenset(), tier_1=True),
    # The script answers a refusal without reading the body: httpd's read of its answer fails and the client
    # gets an answer that never completes (RFC 9112 §6.3, §9.6), on the clause of each refusal so cut: always
    # the large creates without the key (auth.missing) and the create behind Expect: 100-continue
    # (http.framing); others as the timing falls (an answer cut before its body: an empty Error body).
    ("apache-cgi", "no-drain"): Case(
        frozenset({"auth.missing", "http.framing"}),
        cut_short_also=frozenset(
            {"auth.invalid", "auth.challenge", "errors.body", "responses.documented", "http.methods"}
        ),
    ),
    # httpd hands the script no Authorization header: every request is refused 401, which no client can tell
    # from a wrong key: the run says so, and judges nothing.
    ("apache-cgi", "no-pass-auth"): Case(
        frozenset(), inconclusive="the configured key was rejected on every operation"
    ),
    # httpd answers TRACE itself with the request echoed, the key in it (message/http).
    ("apache-cgi", "trace-on"): Case(frozenset({"http.methods"})),
    ("nginx", ""): Case(frozenset(), tier_1=True),
    # No fault: what nginx answers itself to the interface's requests under a 16 MiB limit is only what the
    # document leaves to a web server (400 to %zz and %00, 414 past 8 KiB, 405 to TRACE), any form allowed.
    ("nginx", "html-error-pages"): Case(frozenset()),
    # Its HTML 413 to a create past 1 MiB, before the key is checked.
    ("nginx", "body-limit-html"): Case(frozenset({"errors.body"})),
    # nginx's error_page for the application's 405s: the Allow header lost.
    ("nginx", "intercept-errors"): Case(frozenset({"http.methods"})),
    # No fault: nginx passes a normalised path on (dot segments resolved, %2F decoded to a slash), still a
    # 2xx as the document says or its 404.
    ("nginx", "proxy-pass-uri"): Case(frozenset()),
    ("lighttpd", ""): Case(frozenset(), tier_1=True),
    # lighttpd's HTML 400 to a query holding a control character (%15): a documented parameter's bad value.
    ("lighttpd", "html-error-pages"): Case(frozenset({"errors.body", "json.content-type"})),
    # lighttpd's pages for the application's errors: an HTML 401 (no page for it), 405s without Allow.
    ("lighttpd", "error-intercept"): Case(frozenset({"errors.body", "http.methods", "json.content-type"})),
    # lighttpd 1.4.69's mod_deflate compresses for Accept-Encoding: gzip;q=0 (RFC 9110 §12.5.3: not acceptable, a
    # SHOULD), answers past its minimum size only: the coding cases ask for the longest pages.
    ("lighttpd", "deflate-json"): Case(frozenset(), warned=frozenset({"http.content-coding.refused"})),
}


def _run(server: str, fault: str) -> SuiteRun:
    key = "webserver-" + secrets.token_urlsafe(12)
    with BackgroundServer(build_app(key)) as reference, SERVERS[server].start(reference.port, key, fault) as web:
        return run_hosted(web.base_url, key, "--contract-profile", "quick")


def _params() -> list[object]:
    params: list[object] = []
    for (server, fault), case in CASES.items():
        marks: list[pytest.MarkDecorator] = [] if case.tier_1 else [pytest.mark.tier_2]
        if case.unseen:
            marks.append(pytest.mark.xfail(reason=case.unseen, strict=True))
        if installed(SERVERS[server].binary) is None:
            marks.append(pytest.mark.skip(reason=f"Debian's {SERVERS[server].binary} is not installed"))
        params.append(pytest.param(server, fault, id=f"{server}-{fault or 'compliant'}", marks=marks))
    return params


@pytest.mark.parametrize(("server", "fault"), _params())
def test_web_server_in_front_is_judged_on_the_clause_its_wrong_line_breaks(server: str, fault: str) -> None:
    run = _run(server, fault)
    case, violated, output = CASES[server, fault], run.violated(), run.output[-3000:]
    if case.inconclusive:
        assert run.verdict == "inconclusive" and case.inconclusive in run.summary["reason"], output
        return
    if not case.violated:
        assert run.verdict == "conformant" and violated == case.warned, (violated, output)
        return
    assert run.verdict == "not_conformant" and case.violated <= violated, (violated, output)
    assert violated <= case.violated | case.cut_short_also | case.warned, (violated, output)
    for finding in run.findings():
        if finding["clause"] not in case.violated | case.warned:
            cut = "never completed" in finding["observed"] or "an empty body" in finding["observed"]
            assert cut, finding
