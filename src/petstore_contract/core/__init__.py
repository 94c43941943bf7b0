"""The run's records (exchanges, findings, results) and the redaction every output passes.

- ``records``: ``Exchange``, ``Finding``, ``Note``, ``Violation``/``Mismatch``/``Undecided``,
  ``TestRecord``, ``ClauseResult``, ``RunResult``; outcomes, verdicts, exit codes; all plain data;
- ``redaction``: the key out of every recorded value, the boundary every output passes;
- ``atomic``: every report file written beside itself and renamed;
- ``replay``: a recorded request's ``curl`` line (the judged bytes, only the key's variable left to the shell).
"""
