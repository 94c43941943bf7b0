"""Findings as every output tells them: identical ones folded, the most directly broken clause first,
each shown by its plainest exchange (``view`` re-exports these for the outputs)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from petstore_contract.core.records import REPEAT_WORDS, Finding
from petstore_contract.interface.clauses import registry

TIMES = "\u00d7"  # the multiplication sign of a folded count: "\u00d712"


# -- findings -------------------------------------------------------------------------------------


@dataclass
class Folded:
    """Findings that say the same (clause, expectation, observation but for the body) as one, with who saw it."""

    finding: Finding
    count: int = 1
    tests: list[str] = field(default_factory=list)
    repeats: Counter[str] = field(default_factory=Counter)  # repeat outcome -> findings of the group

    @property
    def line(self) -> str:
        """The finding's one line (clause: expected; observed (METHOD URL))."""
        return self.finding.summary()

    @property
    def repeat(self) -> str:
        """Asked again, in words: "reproduced", "seen once", or for a mixed group each word with its count."""
        words = [(REPEAT_WORDS[kind], n) for kind, n in self.repeats.items() if kind in REPEAT_WORDS]
        if len(words) == 1:
            return words[0][0]
        return ", ".join(f"{word} {TIMES}{n}" for word, n in words)


# An observation that is a status and the body it came with ("HTTP 200 with {...}", ``expect.status``): the
# status is the reason, the body the example's own.
_STATUS_WITH_BODY = re.compile(r"(HTTP \d{3}) with .*", re.DOTALL)


def reason(finding: Finding) -> tuple[str, str, str]:
    """What a finding says, without the body its example came with: findings that differ only in the
    answer's body (three creates answered 200 instead of 201, each with its own Pet) say one thing."""
    clause, expected, observed = finding.fold_key()
    return clause, expected, _STATUS_WITH_BODY.sub(r"\1", observed)


def fold(findings: list[Finding]) -> list[Folded]:
    """Findings that say the same (``reason``) folded into one, each shown by its plainest exchange
    (``plainness``), the plainest group first, then the most frequent, then in the order seen."""
    groups: dict[tuple[str, str, str], Folded] = {}
    for finding in findings:
        group = groups.get(reason(finding))
        if group is None:
            group = groups[reason(finding)] = Folded(finding, 0)
        elif plainness(finding) < plainness(group.finding):
            group.finding = finding
        group.count += 1
        group.repeats[finding.repeat] += 1
        if finding.test and finding.test not in group.tests:
            group.tests.append(finding.test)
    return sorted(groups.values(), key=lambda g: (plainness(g.finding), -g.count))


def story_order(findings: list[Finding]) -> list[Finding]:
    """A test's findings as its failure tells them: the most directly broken clause first, each clause's
    plainest exchange first (the order of every report's violated clauses and first examples)."""
    clauses = registry()

    def rank(finding: Finding) -> int:
        known = clauses.get(finding.clause)
        return known.directness if known is not None else 1

    return sorted(findings, key=lambda f: (rank(f), plainness(f)))


def plainness(finding: Finding) -> tuple[bool, bool, bool, int]:
    """How plainly a finding's exchange shows its clause broken, plainest least: one with a request to
    replay, a request of set-up or a targeted test before a generated one (a drawn case holds whatever
    Hypothesis drew), printable ASCII before other characters, then the shorter request (method, URL, body)."""
    exchange = finding.exchange
    request = f"{exchange.method} {exchange.url} {exchange.request_body or ''}" if exchange else ""
    plain = request.isascii() and request.isprintable()
    return exchange is None, finding.source == "generated", not plain, len(request)
