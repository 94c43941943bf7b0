"""Stateful sequences (Schemathesis state machine over the spec's links): create → read → list.

Along every hop each field survives exactly and ids are never reused (§2, §4.1-§4.3).  In a
concurrent run the chain runs in a child process from the end of set-up on, beside the other
tests (``petstore_contract.sidecar``); this test then reports what it found.
"""

from __future__ import annotations

import pytest

from petstore_contract.run import Run
from petstore_contract.stateful import CLAUSE, run_sequences


@pytest.mark.generated
@pytest.mark.writes
@pytest.mark.sidecar("stateful")
@pytest.mark.clause(CLAUSE)
def test_create_read_list_sequences(run: Run) -> None:
    run.run_job("stateful", run_sequences)
