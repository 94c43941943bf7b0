"""The run's records (exchanges, findings, results) and the redaction every output passes.

- ``records``: ``Exchange``, ``Finding``, ``Note``, ``Violation``/``Mismatch``/``Undecided``,
  ``TestRecord``, ``ClauseResult``, ``RunResult``; each as JSON (``to_dict``/``from_dict``) where it crosses
  between processes or becomes a file;
- ``outcomes``: their closed vocabularies as enums: outcomes, verdicts and exit codes, why a clause is
  undecided, what asking a finding again showed;
- ``wire``: the JSON the suite wrote read back narrowed to each field's type (one ``WireError`` otherwise);
- ``redaction``: the key out of every recorded value, the boundary every output passes;
- ``atomic``: every report file written beside itself and renamed;
- ``replay``: a recorded request's ``curl`` line (the judged bytes, only the key's variable left to the shell).
"""
