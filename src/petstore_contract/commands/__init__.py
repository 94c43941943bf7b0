"""The `petstore-contract` subcommands: compare, certify, verify (bundle), replay."""
