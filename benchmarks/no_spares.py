"""A pytest plugin for ``benchmarks.distance`` only: no connection is opened ahead of a write
(``transport/spares.py``); each write opens its new connection when it is sent."""

from petstore_contract.transport import spares

spares.MOST = 0
