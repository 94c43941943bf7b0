"""The interface document modelled: its constants, the OpenAPI document, the clause registry.

The bottom layer: it imports nothing else of the package.

- ``document``: the document's constants, each defined once;
- ``files``: where the spec's files and the suite's tests are (the wheel's, or the checkout's);
- ``spec``: the OpenAPI document (``spec/openapi.yaml``) and its validators (``schema_errors``, a
  Pet's verdict kept per distinct object);
- ``clauses`` + ``clauses.toml``: the clause registry (id, section, level, quote, statement,
  whole-store flag, ``blocked-by``, ``undecided-ok``, the operation whose success it judges);
- ``jsontypes``: JSON as the target answers it (``JsonValue``, ``JsonObject``), with no ``Any``;
- ``silence``: where the document is silent: each request the run sends placed once, within the
  document or in a silence that HTTP decides.
"""
