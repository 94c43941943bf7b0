"""A pytest plugin for ``benchmarks.distance`` only: writes go out on kept-alive connections like reads.

Unsafe against a server that closes kept-alive connections (a write sent as it closes is lost,
``transport/connections.py``); it gives the figure the default is measured against.
"""

from petstore_contract.transport import connections

connections.WRITES_ON_NEW_CONNECTIONS = False
