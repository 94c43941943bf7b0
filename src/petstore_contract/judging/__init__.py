"""Judging answers: checks, the placement of findings on clauses, the store arithmetic, the verdict."""
