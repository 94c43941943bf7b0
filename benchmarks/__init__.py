"""The benchmarks: bench.py (time to a verdict) and process_ab.py (the process models side by side)."""
