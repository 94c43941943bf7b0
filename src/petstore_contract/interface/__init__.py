"""The interface document modelled: its constants, the OpenAPI document, the clause registry.

The bottom layer: it imports nothing else of the package.

- ``document``: the document's constants, each defined once;
- ``spec``: the OpenAPI document (``spec/openapi.yaml``) and its validators (``schema_errors``, a
  Pet's verdict kept per distinct object);
- ``clauses`` + ``clauses.toml``: the clause registry (id, section, level, quote, statement,
  whole-store flag, ``blocked-by``, ``undecided-ok``, the operation whose success it judges);
- ``silence``: where the document is silent: each request the run sends placed once, within the
  document or in a silence that HTTP decides.
"""
