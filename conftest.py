"""Thin hook: the contract suite's pytest plugin lives in the package."""

pytest_plugins = ["petstore_contract.plugin"]
