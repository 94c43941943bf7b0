"""The transport self-tests' shared pieces (``test_transport*.py``): the key, a transport's options, and
the one-line check of a target problem.  Their fixtures (``make_transport``, ``server``) are in
``conftest.py``.
"""

from __future__ import annotations

from dataclasses import replace

from petstore_contract.transport import TargetProblem, TransportOptions

KEY = "sk-test-4f9a2c7e1b"


def options(base_url: str, **changes: object) -> TransportOptions:
    return replace(TransportOptions(base_url=base_url, api_key=KEY, timeout=2.0), **changes)  # type: ignore[arg-type]


def one_line(problem: TargetProblem) -> str:
    text = str(problem)
    assert "\n" not in text and "Traceback" not in text and KEY not in text
    return text
