"""Keeping the API key out of every byte the suite writes or prints."""

from __future__ import annotations

import base64
from urllib.parse import quote, quote_plus

REDACTED = "[REDACTED]"


class Redactor:
    """Replaces the key, and the encodings of it that a request may carry, with [REDACTED]."""

    def __init__(self, secret: str | None) -> None:
        self.forms: list[str] = []
        if secret:
            forms = {secret, quote(secret, safe=""), quote_plus(secret)}
            for raw in (secret, f":{secret}", f"user:{secret}", f"{secret}:"):
                encoded = base64.b64encode(raw.encode()).decode()
                forms.update({encoded, encoded.rstrip("=")})
            self.forms = sorted(forms, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for form in self.forms:
            if form in text:
                text = text.replace(form, REDACTED)
        return text

    def contains_secret(self, text: str) -> bool:
        return any(form in text for form in self.forms)
