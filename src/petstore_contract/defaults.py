"""The run's defaults, each in one place: the plugin's options show them, the run's settings and the
transport's options (what ``petstore-contract replay`` uses) take them from here.

A module of its own, importing nothing: pytest loads the plugin into every session of its environment,
and a session that does not run the suite should not pay for importing the run (``plugin/__init__.py``).
"""

from __future__ import annotations

DEFAULT_TIMEOUT = 10.0  # seconds to wait for a connection or the next bytes of an answer
DEFAULT_CONCURRENCY = 16  # independent requests in flight at once
DEFAULT_SEED = 20301205  # fixed, so a CI failure replays exactly on a laptop
DEFAULT_MAX_BODY_BYTES = 4_000_000  # the most of an answer read
DEFAULT_CIRCUIT_BREAKER = 3  # requests in a row without answer that open the circuit breaker; 0: never
