"""The `petstore-contract` subcommands: compare, certify, verify (bundle), replay.

- ``compare``: two runs' ``summary.json`` clause by clause (regressed, fixed, newly undecided, ...);
- ``certify``: a certification run of the whole suite into a bundle;
- ``bundle``: a bundle's manifest, and ``verify`` (hashes, row consistency, the verdict recomputed);
- ``replay``: a finding of a bundle sent again and judged by its check.

``cli.py`` loads each module by name, when asked for.
"""
