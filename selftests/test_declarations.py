"""The pipeline's checks are declarations (judging/checks.py): each kind once, each check of every answer
with its clause, its routes and its words, and every route but the quiet ones judged beyond the 5xx gate.
A kind is its declaration's string: ``Kind`` names only those the shared expectations raise."""

from __future__ import annotations

from petstore_contract.judging import checks
from petstore_contract.judging.declaration import DECLARED, Kind, Route

# Where an answer stands that no check of one answer judges: the web server's own answer (its rules are
# judging/http_layer.py's), invalid data accepted (its rejection clause's), outside the document with
# nothing more to judge.
QUIET = {Route.WEB_SERVER, Route.ADMITTED, Route.OUTSIDE_QUIET}


def test_every_kind_is_declared_once() -> None:
    kinds = [declared.kind for declared in DECLARED]
    assert sorted(kinds) == sorted(set(kinds))  # none twice
    assert set(Kind) <= set(kinds)  # every kind the shared expectations raise
    assert set(checks.REGISTRY) == set(kinds)


def test_a_kind_of_checks_py_alone_is_named_by_its_declaration() -> None:
    """A check of a new kind touches checks.py only: its declaration's string is what its finding records."""
    own = {declared.kind for declared in DECLARED} - set(Kind)
    assert own >= {checks.DOCUMENTED_STATUS, "pet-body"}
    assert checks.registered(checks.DOCUMENTED_STATUS) is checks.REGISTRY[checks.DOCUMENTED_STATUS]
    assert checks.registered("no-such-kind:1") is None


def test_every_check_of_every_answer_has_its_clause_routes_and_words() -> None:
    run = [declared for declared in DECLARED if declared.run is not None]
    assert {declared.kind for declared in run} >= {Kind.NO_SERVER_ERROR, Kind.STATUS, Kind.BEARER_CHALLENGE}
    for declared in run:
        assert declared.on, declared.kind
        assert declared.clause is not None or declared.place is not None, declared.kind
        assert declared.expected, declared.kind
    assert [declared.kind for declared in run if declared.gate] == [Kind.NO_SERVER_ERROR]


def test_every_route_but_the_quiet_ones_is_judged() -> None:
    gate = checks.REGISTRY[Kind.NO_SERVER_ERROR]
    judged = {route for declared in DECLARED if declared.run is not None and not declared.gate for route in declared.on}
    assert set(Route) - judged == QUIET
    assert set(Route) - gate.on == {Route.WEB_SERVER, Route.REDIRECT}  # the service read every other request


def test_a_finding_is_judged_again_by_its_declaration() -> None:
    assert checks.registered("status:401") is checks.REGISTRY[Kind.STATUS]
    assert checks.REGISTRY[Kind.STATUS].reaskable
    assert not checks.REGISTRY[checks.DOCUMENTED_STATUS].reaskable
