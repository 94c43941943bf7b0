"""Issue 30, principles 2 and 4: set-up's plan of writes and the values at the edges of int64 and of names;
issue 47: the writes follow the selection (``-k test_orders`` writes nothing, the create tests no fillers).

On an empty store, whatever the service's list order (newest first, oldest first, by name), every
animal set-up created is seen on every list path (``list.found`` conforms: it is undecided as soon as
one animal lies past every page the suite read) and the run is conformant.  The plan holds every
value edge the issue names, once, on an empty and on a crowded store.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from types import SimpleNamespace
from typing import Any

import pytest

from devtools import SuiteRun
from devtools.killmatrix import Scenario, run_catalog
from hosted import run_hosted
from petstore_contract.defaults import DEFAULT_MAX_BODY_BYTES
from petstore_contract.interface.document import INT64_MAX, INT64_MIN
from petstore_contract.reference import BackgroundServer, build_app
from petstore_contract.run import setup, writeplan
from tests.test_crossings import BIG_BODIES

ORDERS = ("reference", "oldest-first", "by-name")  # newest first, oldest first, by name
INT_EDGES = {0, -1, 2**31 - 1, 2**31, 2**53 + 1, INT64_MIN, INT64_MAX}


class _Run:
    """What ``plan_bodies`` asks of a run: names and the answer cap."""

    def __init__(self, max_body_bytes: int = 4_000_000) -> None:
        self.settings = SimpleNamespace(max_body_bytes=max_body_bytes, run_id="t")
        self.count = 0

    def name(self, tag: str) -> str:
        return f"pc-t-{tag}"

    def new_pet(self, tag: str, status: str | None, **fields: Any) -> dict[str, Any]:
        self.count += 1
        body: dict[str, Any] = {"name": self.name(f"{tag}-{self.count}"), "categoryId": 1, **fields}
        return body | ({"status": status} if status else {})


def test_the_answer_cap_reads_a_page_of_everything_the_suite_itself_writes() -> None:
    """A faulty service that keeps the size probes it should refuse (tests/test_crossings.py, 3.2 MB) beside
    the million-character name and the 100 KiB refusal lists them all on one page: the default answer cap
    reads it, with room for 100 ordinary animals, so that the fault leaves the other clauses decided."""
    own = writeplan.HUGE_NAME + writeplan.TOO_LARGE + sum(BIG_BODIES.values())
    assert own + 100 * 1_000 <= DEFAULT_MAX_BODY_BYTES, (DEFAULT_MAX_BODY_BYTES, own)
    assert writeplan.huge_name(DEFAULT_MAX_BODY_BYTES) == writeplan.HUGE_NAME


@pytest.mark.parametrize("crowded", [False, True], ids=["empty", "crowded"])
def test_the_plan_holds_every_value_edge(crowded: bool) -> None:
    bodies = writeplan.plan_bodies(_Run(), crowded)  # type: ignore[arg-type]
    names = [body["name"] for body in bodies.values()]
    categories = {body["categoryId"] for body in bodies.values()}
    assert categories >= INT_EDGES
    assert "" in names and any(len(n) == 1 for n in names)
    assert any(len(n) == 10_000 for n in names)
    # A shared, crowded store is never given a megabyte animal (its pages would grow by one a run).
    assert any(len(n) == 1_000_000 for n in names) is not crowded
    text = "".join(names)
    assert {ord(c) >> 16 for c in text} >= set(range(17)), "a character of every Unicode plane"
    assert {chr(code) for code in range(0x20)} <= set(text), "every C0 control character, U+0000 included"
    # Within the usual 1 MiB request limit of proxies (nginx's client_max_body_size default).
    assert max(len(json.dumps(body, ensure_ascii=False).encode()) for body in bodies.values()) < 2**20
    if crowded:
        assert len(bodies) <= 16, "few animals on a store that never shrinks"
        sent = sorted(set(writeplan.OPEN) - set(writeplan.NOT_WHEN_CROWDED))
        assert sorted(writeplan.OPEN_GROUP) == sent, "every open case in one merged body"


def test_the_huge_name_stays_within_the_answer_cap() -> None:
    bodies = writeplan.plan_bodies(_Run(max_body_bytes=600_000), crowded=False)  # type: ignore[arg-type]
    assert len(bodies["open-long-1000000"]["name"]) == 200_000


def test_reads_probe_the_int64_edges() -> None:
    assert set(setup._probe_ids([])) >= INT_EDGES
    assert set(setup._probe_ids([{"id": 5}])) >= INT_EDGES


@pytest.fixture(scope="module")
def orders() -> dict[Scenario, Any]:
    return run_catalog(chosen=[Scenario("variant", name) for name in ORDERS])


# Tier 2: in tier 1 the kill matrix's reference, on both stores, is judged on list.found.
@pytest.mark.tier_2
@pytest.mark.parametrize("order", ORDERS)
def test_every_animal_is_seen_on_every_path_whatever_the_order(orders: dict[Scenario, Any], order: str) -> None:
    run = orders[Scenario("variant", order)]
    clauses = {c["id"]: c for c in run.summary.get("clauses", ())}
    assert run.verdict == "conformant", run.output[-2000:]
    found = clauses["list.found"]
    assert found["outcome"] == "conforms", found
    # Every animal set-up created (101 on an empty store), unfiltered and under its status.
    assert found["exchanges"] >= 2 * 100, found
    for clause in ("create.echo", "read.found", "list.status.found", "list.limit.maximum"):
        assert clauses[clause]["outcome"] == "conforms", clauses[clause]


# -- writes follow the selection (issue 47) ------------------------------------------------------------

SELECTION_KEY = "write-plan-selection-key-61c2a9"
# set-up's animals by the tag of their name (``Run.name``: pc-<run id>-<tag>...)
SET_UP_TAG = re.compile(r"^pc-[0-9a-z]+-(own|plain|open|client-id|no-status|twin|fill)(?:-|$)")


def _run_counting(*selection: str) -> tuple[SuiteRun, int, Counter[str]]:
    """A quick run against a fresh reference; the POSTs that reached it, set-up's animals by tag."""
    with BackgroundServer(build_app(SELECTION_KEY)) as server:
        run = run_hosted(server.base_url, SELECTION_KEY, "--contract-profile", "quick", *selection, timeout=300)
        store = server.app.state.store
        tags = Counter(m.group(1) for pet in store.pets.values() if (m := SET_UP_TAG.match(str(pet.get("name")))))
        return run, int(store.write_count), tags


def test_a_run_of_the_orders_test_writes_nothing() -> None:
    run, writes, _ = _run_counting("-k", "test_orders")
    assert (run.exit_code, run.verdict) == (0, "conformant"), run.output[-3000:]
    assert writes == 0 and run.summary["writes"] == 0, f"{writes} POSTs for a test that reads /store/orders"


def test_a_run_of_the_create_tests_writes_no_fillers_and_a_full_run_writes_the_whole_plan() -> None:
    create, create_writes, create_tags = _run_counting("-k", "test_create")
    full, full_writes, full_tags = _run_counting()
    for run in (create, full):
        assert (run.exit_code, run.verdict) == (0, "conformant"), run.output[-3000:]
    # The create tests judge set-up's own animals and its plan of writes: both made, no filler.
    assert create_tags["own"] == 6 and create_tags["plain"] == 3 and create_tags["twin"] == 2, create_tags
    assert create_tags["open"] >= 1 and create_tags["fill"] == 0, create_tags  # (an open case may rename it)
    # The whole suite: the whole plan, and the fillers past a page of 100, as before the selection counted.
    assert {tag: full_tags[tag] for tag in ("own", "plain", "open", "twin")} == {
        tag: create_tags[tag] for tag in ("own", "plain", "open", "twin")
    }
    assert full_tags["fill"] >= 1 and full.summary["created"] >= 101, (full_tags, full.summary["created"])
    assert 0 < create_writes < full_writes
