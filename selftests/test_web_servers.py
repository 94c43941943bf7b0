"""Real web servers in front of the reference, configured as their users configure them: the HTTP layer's proof.

Apache httpd (Debian's apache2) as the reverse proxy in front of the embedded reference, from a generated
config (``webservers/apache.py``, its README): the compliant config passes (error pages through
``ErrorDocument`` with the Error body, compression only when asked, no body limit under the document's
needs, TRACE off); each line a vendor could leave wrong is caught on its own clause.  Tier 1 runs the
compliant config and one fault; tier 2 the other faults.
"""

from __future__ import annotations

import secrets
import shutil
import sys
from pathlib import Path

import pytest

from hosted import run_hosted
from petstore_contract.reference import BackgroundServer, build_app

sys.path.insert(0, str(Path(__file__).parent / "webservers"))
from apache import Apache

pytestmark = pytest.mark.skipif(
    shutil.which("apache2") is None and not Path("/usr/sbin/apache2").exists(),
    reason="Debian's apache2 is not installed",
)

# fault -> the clauses it violates ("" the compliant config)
EXPECTED = {
    "": set(),
    # httpd's own pages: HTML (errors.body).  Its own 405 to TRACE (no Allow without the ErrorDocument's header
    # line) is the web server's answer to what is no request of the interface: only an echo would mislead.
    "html-error-pages": {"errors.body"},
    "body-limit-html": {"errors.body"},
    "gzip-forced": {"http.content-coding"},
    "no-404-page": {"errors.body"},
}
TIER_1 = ("", "gzip-forced")


def _run(fault: str) -> tuple[str, set[str], str]:
    key = "httpd-" + secrets.token_urlsafe(12)
    with BackgroundServer(build_app(key)) as server, Apache(server.port, fault) as httpd:
        run = run_hosted(httpd.base_url, key, "--contract-profile", "quick")
        return run.verdict, run.violated(), run.output[-3000:]


@pytest.mark.parametrize(
    "fault", [pytest.param(f, id=f or "compliant", marks=[] if f in TIER_1 else [pytest.mark.tier_2]) for f in EXPECTED]
)
def test_apache_in_front_is_judged_on_the_clause_its_wrong_line_breaks(fault: str) -> None:
    verdict, violated, output = _run(fault)
    if not fault:
        assert verdict == "conformant", output
    else:
        assert verdict == "not_conformant" and violated == EXPECTED[fault], (violated, output)
