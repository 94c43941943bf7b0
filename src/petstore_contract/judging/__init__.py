"""Judging answers: checks, the placement of findings on clauses, the store arithmetic, the verdict.

The modules (docs/architecture.md gives the judging model they make up):

- ``expect``: the judgements shared by the tests, and the ``judge`` that puts each on its clause
  (``JUDGE_FACTORY``: the seam a self-test plugin swaps);
- ``declaration``: a check as one declaration (``declare``): its clause, the routes and answers the
  pipeline runs it on, whether its finding can be asked again; ``Route``, where an answer stands;
  ``Kind``, the kinds the shared expectations raise;
- ``checks``: every kind a finding records declared once (a kind is its declaration's string), beside its function, in
  the order the pipeline runs them; placement derived from clauses.toml and the OpenAPI document;
- ``pipeline``: the pipeline of every exchange, a watcher of the transport in every process that judges
  every answer by the checks of its operation and status; ``tally`` merges what it judged at the end
  and makes the findings no test reported into one record; ``flicker`` tells the service's 5xx (its
  Error body) from the deployment's;
- ``http_layer``: the rules of the HTTP layer's answers (methods, request-targets, codings, framings);
- ``model``: the model of the store (one animal, one representation: ``list.item.same``);
- ``refusals``: every refused create held against every animal the run sees
  (``create.reject.nothing-created``);
- ``generated`` and ``custom_checks``: Schemathesis' wiring, the suite's own checks of generated
  answers, and the table that places each failure on a clause; ``failure_words``: each failure said in
  the document's words (what its Responses table lists, the answer's status), never a check's name;
- ``headers``: total readers of header values (sf-dates, HTTP dates, challenges, media types);
- ``store``: page arithmetic and the complete-view proof, pure functions;
- ``coverage``: what the run exercised, per request the answer meant and the answer got;
- ``reask``: a finding's request asked once more at the end (reproduced, seen once, not re-asked);
- ``verdict``: records -> clause outcomes -> verdict; ``waivers``: waivers.toml and the gate's exit code.
"""
