"""Keeping the API key out of every byte the suite writes or prints.

Two views of the same rule:

- ``redact(text)`` for free text (messages, bodies, report lines): the key and the encodings of
  it that a request may carry (URL-encoded, base64 of ``key``, ``:key``, ``user:key``, ``key:``)
  become ``[REDACTED]``;
- ``redact.for_exchange(text)`` for recorded exchanges: the key itself becomes ``$<key variable>``
  (``$PETSTORE_API_KEY``), so that a replay command takes it from the environment; its encodings
  still become ``[REDACTED]``.

A key shorter than ``MIN_KEY_LENGTH`` characters would match inside unrelated words (a key ``k``
is in "key", "ok", every JSON object...), so it and its encodings are replaced only where they
stand as a whole token: not preceded or followed by a character that can be part of a token
(``[A-Za-z0-9._~+/=-]``).  ``Redactor.note`` then carries a one-line warning for the run.

``redact.scrub(value)`` is the boundary every output passes: it walks a record (a ``RunResult``, a
finding, a note, plain lists, dicts and strings) and redacts every string in it, whatever produced
that string (a check's observation quoting a body, Schemathesis' own message, a transport problem),
recorded exchanges in their replayable form.
"""

from __future__ import annotations

import base64
import dataclasses
import re
from typing import Any, TypeVar
from urllib.parse import quote, quote_plus

from petstore_contract.record import Exchange

REDACTED = "[REDACTED]"
MIN_KEY_LENGTH = 8
_TOKEN_CHARS = r"A-Za-z0-9._~+/=\-"
T = TypeVar("T")


class Redactor:
    """Replaces the key (and the encodings of it a request may carry) in text."""

    def __init__(self, secret: str | None, key_env: str = "PETSTORE_API_KEY") -> None:
        self.secret = secret or ""
        self.key_env = key_env
        self.forms: list[str] = []
        self.note = ""
        self._pattern: re.Pattern[str] | None = None
        if not self.secret:
            return
        forms = {self.secret, quote(self.secret, safe=""), quote_plus(self.secret)}
        for raw in (self.secret, f":{self.secret}", f"user:{self.secret}", f"{self.secret}:"):
            encoded = base64.b64encode(raw.encode()).decode()
            forms.update({encoded, encoded.rstrip("=")})
        forms.discard("")
        # Longest first: at one position the longest form wins (a base64 form over its unpadded prefix).
        self.forms = sorted(forms, key=lambda form: (-len(form), form))
        alternatives = "|".join(re.escape(form) for form in self.forms)
        if len(self.secret) < MIN_KEY_LENGTH:
            self._pattern = re.compile(f"(?<![{_TOKEN_CHARS}])(?:{alternatives})(?![{_TOKEN_CHARS}])")
            self.note = (
                f"the API key is shorter than {MIN_KEY_LENGTH} characters: it is redacted only where it stands "
                "alone, so a report may still show it inside longer words or values; use a longer key"
            )
        else:
            self._pattern = re.compile(alternatives)

    def __call__(self, text: str) -> str:
        """Free text with the key and its encodings shown as ``[REDACTED]``."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(REDACTED, text)

    def for_exchange(self, text: str) -> str:
        """Text for a recorded exchange: the key as ``$<key variable>``, its encodings as ``[REDACTED]``."""
        if self._pattern is None or not text:
            return text
        variable = "$" + self.key_env
        return self._pattern.sub(lambda m: variable if m.group(0) == self.secret else REDACTED, text)

    def scrub(self, value: T) -> T:
        """``value`` with every string in it redacted: records, lists, tuples, dicts (keys too), strings.

        Exchanges keep the key as its variable (their ``curl`` replays it); other text shows
        ``[REDACTED]``.  Numbers, booleans and None pass unchanged; a record is copied, never changed.
        """
        if self._pattern is None:
            return value
        return self._scrub(value, self)  # type: ignore[no-any-return]

    def _scrub(self, value: Any, text: Any) -> Any:
        if isinstance(value, str):
            return text(value)
        if isinstance(value, Exchange):
            text = self.for_exchange
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes = {f.name: self._scrub(getattr(value, f.name), text) for f in dataclasses.fields(value)}
            return dataclasses.replace(value, **changes)
        if isinstance(value, list | tuple):
            return type(value)(self._scrub(item, text) for item in value)
        if isinstance(value, dict):
            return {self._scrub(k, text): self._scrub(v, text) for k, v in value.items()}
        return value
