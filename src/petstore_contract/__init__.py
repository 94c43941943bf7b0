"""A spec-driven contract test suite for the Pet Store interface."""

__version__ = "0.1.0"
