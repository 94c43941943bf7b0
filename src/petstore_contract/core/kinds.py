"""The kinds of check a finding records: the check registry's vocabulary (``judging.checks``)."""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    """Every kind of check a finding can record (``Finding.expectation`` is "<kind>" or "<kind>:<argument>").

    Each kind has one entry in the check registry (``judging.checks.REGISTRY``): its check, the clause the
    pipeline of every exchange places it on, and whether a finding of it can be asked again.
    """

    OWN = ""  # a check written in the test itself (a comparison the registry has no function for)
    STATUS = "status"  # argument: the statuses expected, "201" or "400,422"
    KEY_ACCEPTED = "key-accepted"
    NO_SERVER_ERROR = "no-5xx"
    DOCUMENTED_STATUS = "documented-status"  # a status the OpenAPI document lists for the operation
    JSON_MEDIA_TYPE = "json-media-type"
    JSON_BODY = "json-body"
    ERROR_BODY = "error-body"
    PET_BODY = "pet-body"  # the whole body is one Pet
    PET_LIST = "pet-list"
    PET = "pet"  # one animal inside a larger answer
    SAME_FIELD = "same-field"  # argument: the field's name
    SAME_ANIMAL = "same-animal"  # argument: the field's name; the store model's one representation
    BEARER_CHALLENGE = "bearer-challenge"
    DEPRECATION_SCOPE = "deprecation-scope"
    DEPRECATION_HEADER = "deprecation-header"
    DEPRECATION_FUTURE = "deprecation-future"
    SCHEMATHESIS = "schemathesis"  # argument: Schemathesis' failure label

    def expectation(self, argument: str = "") -> str:
        return f"{self.value}:{argument}" if argument else self.value
