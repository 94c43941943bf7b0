"""``petstore-contract certify --product NAME --product-version V --out DIR [pytest options]``.

Runs the whole contract suite as a certification run (``--contract-certify``: the plugin asks
``refusal`` and refuses ``-k``, ``-m``, read-only mode, waivers, a run budget and the quick
profile, one line each, exit 4), keeping
every exchange (``--contract-record``), and writes the bundle into DIR (new or empty): the run's
reports (summary.json, report.html, summary.md, junit.xml), exchanges.har and manifest.json
(``bundle``).  The exit code is the run's verdict's.  ``petstore-contract verify DIR`` checks it.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest

from petstore_contract import __version__
from petstore_contract.commands import bundle
from petstore_contract.core.redaction import KeyFragments, Redactor
from petstore_contract.interface.jsontypes import JsonObject
from petstore_contract.interface.spec import suite_dir
from petstore_contract.reporting.readback import SummaryError, load
from petstore_contract.transport import har

EXIT_USAGE, EXIT_INTERNAL = 4, 3
VERDICT_EXITS = (0, 1, 6)
# What a certification run refuses (the plugin asks ``refusal`` with pytest's options): (asked?, why).
REFUSES: tuple[tuple[Callable[[argparse.Namespace], object], str], ...] = (
    (lambda o: o.keyword, "-k: a certification run judges every test"),
    (lambda o: o.markexpr, "-m: a certification run judges every test"),
    (lambda o: o.deselect, "--deselect: a certification run judges every test"),
    (lambda o: getattr(o, "maxfail", 0), "-x/--maxfail: a certification run does not stop at a failure"),
    (lambda o: o.collectonly, "--collect-only: a certification run runs its tests"),
    (lambda o: o.contract_waivers, "waivers (--contract-waivers): a certificate shows every violation as it is"),
    (
        lambda o: o.contract_run_budget,
        "--contract-run-budget: the default is no budget, and a certification run is not cut short",
    ),
    (lambda o: o.contract_profile == "quick", "--contract-profile quick: a certification run is at least the default"),
)
READ_ONLY_REFUSED = (
    "certify refuses read-only mode (--contract-read-only, or a read-only --contract-target without "
    "--contract-allow-writes): the tests that POST would be left out"
)


def refusal(option: argparse.Namespace, args: list[str]) -> str:
    """Why pytest's options make no certification run ("" when they do): the whole suite as shipped."""
    for asked, why in REFUSES:
        if asked(option):
            return f"certify refuses {why}"
    suite = suite_dir().resolve()
    narrowed = [arg for arg in args if Path(arg.split("::", 1)[0]).resolve() != suite]
    return f"certify runs the whole suite: no test paths or ids ({narrowed[0]})" if narrowed else ""


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"petstore-contract certify: {message}\n")


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """certify's own options; the rest (``--base-url``, ``--contract-target``, ...) goes to the suite."""
    parser = _OneLineParser(prog="petstore-contract certify", description=__doc__)
    parser.add_argument("--product", required=True, metavar="NAME", help="the product certified")
    parser.add_argument("--product-version", required=True, metavar="V", help="its version")
    parser.add_argument("--out", required=True, metavar="DIR", help="a new or empty directory for the bundle")
    args, rest = parser.parse_known_args(argv)
    for name in ("product", "product_version"):
        if not getattr(args, name).strip():
            parser.error(f"--{name.replace('_', '-')} must not be empty")
    return args, rest


def main(argv: list[str]) -> int:
    args, rest = parse(argv)
    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        print(f"petstore-contract certify: --out {out} must be a new or empty directory", file=sys.stderr)
        return EXIT_USAGE
    record = tempfile.mkdtemp(prefix="petstore-exchanges-")
    try:
        started = _now()
        code = int(pytest.main([*_suite_args(out, record), *rest]))
        if code not in VERDICT_EXITS:
            if code != EXIT_USAGE:  # a usage error has printed its one line already
                print(f"petstore-contract certify: the run reached no verdict (exit {code}); no bundle written")
            return code
        line = _bundle(out, Path(record), args, started)
    except (SummaryError, OSError) as exc:
        print(f"petstore-contract certify: no bundle written: {exc}", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        shutil.rmtree(record, ignore_errors=True)
    print(line)
    return code


def _suite_args(out: Path, record: str) -> list[str]:
    """The suite by its path (the wheel's package, or the checkout's tests/), as a certification run."""
    reports = out.resolve()
    return [
        str(suite_dir()),
        "-p",
        "no:cacheprovider",
        "-o",
        "junit_family=xunit1",
        "--assert=plain",  # as every run of the suite: no rewriting of a package imported already (cli.py)
        f"--contract-report-dir={reports}",
        f"--junitxml={reports / 'junit.xml'}",
        "--contract-certify",
        f"--contract-record={record}",
    ]


def _bundle(out: Path, record: Path, args: argparse.Namespace, started: str) -> str:
    """exchanges.har and manifest.json beside the run's reports; every string through the run's redactor."""
    summary = load(out / bundle.SUMMARY)
    scrub = _scrubber(str(summary.get("key_env") or "PETSTORE_API_KEY"))
    bundle.scrub_reports(out, scrub)
    summary = load(out / bundle.SUMMARY)
    title = f"{args.product} {args.product_version}: Pet Store contract certification"
    exchanges = har.build(record, title=title, creator_version=__version__)
    har.write(out / bundle.HAR_FILE, exchanges, scrub)
    about = _about(args, started, har.entry_count(exchanges))
    bundle.write_manifest(out, bundle.manifest(out, summary, about), scrub)
    return f"bundle: {out} ({summary['verdict_line']}); check it with: petstore-contract verify {out}"


def _scrubber(key_env: str) -> Callable[[str], str]:
    """The run's redaction for every string of the bundle: the key as ``$<variable>``, its encodings and
    long runs of its characters (near misses of it the credential table sent) as [REDACTED]."""
    key = os.environ.get(key_env)  # the embedded reference's key is there too (the plugin put it there)
    redactor, fragments = Redactor(key, key_env), KeyFragments(key)
    return lambda text: fragments(redactor.for_exchange(text))


def _about(args: argparse.Namespace, started: str, exchanges: int) -> JsonObject:
    return {
        "product": {"name": args.product, "version": args.product_version},
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "certify_started": started,
        "certify_finished": _now(),
        "exchanges": exchanges,
    }


def _now() -> str:
    return har.iso(time.time())
