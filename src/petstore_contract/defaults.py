"""The run's defaults, each in one place: the plugin's options show them, the run's settings and the
transport's options (what ``petstore-contract replay`` uses) take them from here.

A module of its own, importing nothing: pytest loads the plugin into every session of its environment,
and a session that does not run the suite should not pay for importing the run (``plugin/__init__.py``).
"""

from __future__ import annotations

DEFAULT_TIMEOUT = 10.0  # seconds to wait for a connection or the next bytes of an answer
DEFAULT_CONCURRENCY = 16  # independent requests in flight at once
DEFAULT_SEED = 20301205  # fixed, so a CI failure replays exactly on a laptop
# The most of an answer read: a page of everything the suite's own writes can leave on a store it sees whole
# (the million-character name, and the size probes past 100 KiB, 1 MiB and 2 MiB that a faulty service keeps:
# about 4.4 MB) fits, so that a fault that keeps them leaves the pages readable (selftests/test_write_plan.py).
DEFAULT_MAX_BODY_BYTES = 8_000_000
DEFAULT_CIRCUIT_BREAKER = 3  # requests in a row without answer that open the circuit breaker; 0: never
