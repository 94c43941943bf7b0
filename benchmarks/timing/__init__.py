"""The benchmark's parts (benchmarks/bench.py is its command line): recording at the server, the
floor replay, the measured rows, the plan, the machine, the report."""
