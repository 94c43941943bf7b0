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
from enum import Enum
from typing import Any, TypeVar
from urllib.parse import quote, quote_plus

from petstore_contract.core.records import Exchange

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
        if isinstance(value, Enum):  # a closed vocabulary (an outcome, a verdict): never the key
            return value
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


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class KeyFragments:
    """Long runs of the key's characters, in any case: what near misses of the key show of it.

    The credential table sends the key with a character removed or added, a prefix of it, its case
    changed: none of them is the key, so ``Redactor`` leaves them, yet each gives the key away.  A
    record that keeps every request (a certification bundle's exchanges.har) passes this too: any
    run of at least half the key's characters (``MIN_KEY_LENGTH`` at least) that equals a run of the
    key, ASCII case ignored, becomes ``[REDACTED]``.  A key shorter than ``MIN_KEY_LENGTH`` has no
    fragments: ``Redactor`` replaces it only where it stands alone, and says so.
    """

    def __init__(self, secret: str | None) -> None:
        self.key = (secret or "").translate(_ASCII_LOWER)
        self.size = min(len(self.key), max(MIN_KEY_LENGTH, len(self.key) // 2))
        self.starts: dict[str, int] = {}
        self._pattern: re.Pattern[str] | None = None
        if len(self.key) < MIN_KEY_LENGTH:
            return
        for start in range(len(self.key) - self.size + 1):
            self.starts.setdefault(self.key[start : start + self.size], start)
        self._pattern = re.compile("|".join(re.escape(gram) for gram in self.starts))

    def __call__(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        lowered = text.translate(_ASCII_LOWER)  # ASCII only: the length stays, so positions match
        out, done = [], 0
        for match in self._pattern.finditer(lowered):
            if match.start() < done:
                continue
            start, end = self._widen(lowered, match.start(), match.end(), self.starts[match.group(0)], done)
            out += [text[done:start], REDACTED]
            done = end
        out.append(text[done:])
        return "".join(out)

    def _widen(self, lowered: str, start: int, end: int, at: int, floor: int) -> tuple[int, int]:
        """The match grown both ways for as long as the text goes on following the key."""
        after = at + (end - start)
        while end < len(lowered) and after < len(self.key) and lowered[end] == self.key[after]:
            end, after = end + 1, after + 1
        while start > floor and at > 0 and lowered[start - 1] == self.key[at - 1]:
            start, at = start - 1, at - 1
        return start, end
