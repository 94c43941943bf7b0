"""Mutation testing of the reference server (``python -m devtools.mutation``): see ``mutate``."""
