"""A spec-driven contract test suite for the Pet Store interface.

The folders are the architecture (``docs/architecture.md``): ``interface`` (the document modelled) at the
bottom, then ``core``, ``transport``, ``judging``, ``run``, ``reporting``, ``commands``, the ``plugin``
and ``cli`` on top; ``reference`` is the embedded server.  Beside them, ``defaults`` (the run's defaults
the options show; it imports nothing, as the plugin loads in every session) and ``versions`` (the
suite's and its judge's versions: Schemathesis, Hypothesis, pytest).
"""

__version__ = "0.1.0"
