"""Set-up's knowledge crosses between the run's processes as data (``Run.once``): what a worker reads back
is the record the process that set up made, field for field (``run/setup_records.py``).

A real set-up against the reference, on an empty store (every step: refusals, the plan, the looks, the
fillers) and on a crowded one (set-up's own first animals, the probes after the first id), goes through
the same JSON text the run's shared folder holds and comes back equal.
"""

from __future__ import annotations

import json

import pytest
import requests

from petstore_contract.reference import BackgroundServer, build_app
from petstore_contract.run import Run, RunSettings, setup
from petstore_contract.run.setup_records import Probe, Seeded

KEY = "setup-record-selftest-key-5d1e07"
CROWD = 105  # animals already in the store: more than a page of 100 shows


def _set_up(base_url: str) -> Seeded:
    settings = RunSettings("local", base_url, "PETSTORE_API_KEY", read_only=False, run_id="rt")
    run = Run(settings, KEY)
    try:
        return setup.own_data(run, run.api)
    finally:
        run.close()


@pytest.mark.parametrize("crowded", [False, True], ids=["empty-store", "crowded-store"])
def test_a_real_set_up_survives_the_trip_between_processes_equal(crowded: bool) -> None:
    with BackgroundServer(build_app(KEY)) as server:
        if crowded:
            with requests.Session() as session:
                for n in range(CROWD):
                    pet = {"name": f"crowd-{n}", "categoryId": 1}
                    answer = session.post(
                        f"{server.base_url}/pets", json=pet, headers={"Authorization": f"Bearer {KEY}"}, timeout=10
                    )
                    assert answer.status_code == 201
        seeded = _set_up(server.base_url)
    assert seeded.crowded is crowded
    # What the set-up learnt is all there: the trip is only exact if it holds something of each kind.
    assert seeded.own and seeded.own_answers and seeded.sent and seeded.created and seeded.plan and seeded.probes
    assert all(isinstance(probe, Probe) for probe in seeded.probes.values())
    assert bool(seeded.early) is not crowded and bool(seeded.own_look.pages) is not crowded
    assert (seeded.fillers > 0) is not crowded
    text = json.dumps(seeded.to_dict())  # what ``Run.once`` publishes for the other processes
    again = Seeded.from_dict(json.loads(text))
    assert again == seeded
    assert json.dumps(again.to_dict()) == text


def test_a_record_that_is_not_set_ups_is_a_clear_error() -> None:
    data = Seeded().to_dict() | {"probes": {"1": {"status": "200", "body": ""}}}
    with pytest.raises(ValueError, match="not a probe of set-up"):
        Seeded.from_dict(data)
