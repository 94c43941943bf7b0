"""Reading back the JSON the suite wrote itself (an xdist worker's report, a counters file, summary.json).

The records' ``from_dict`` read with these: each value is narrowed to the type its field holds, and a value
of another type (a file edited by hand, a version of the suite that wrote another form) is one ``WireError``
naming the field, never a record holding the wrong type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from petstore_contract.interface.jsontypes import JsonLike, JsonValue


class WireError(ValueError):
    """A record's JSON is not in the form the suite writes: one line naming the field."""


def fields(value: JsonLike, what: str) -> Mapping[str, JsonLike]:
    """``value`` as a JSON object, or WireError."""
    if not isinstance(value, Mapping):
        raise WireError(f"{what}: a JSON object expected, got {type(value).__name__}")
    return value


def items(data: Mapping[str, JsonLike], key: str) -> Sequence[JsonLike]:
    """The array under ``key`` (an absent key: empty)."""
    value = data.get(key, ())
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise WireError(f"{key}: a JSON array expected, got {type(value).__name__}")
    return value


def text(data: Mapping[str, JsonLike], key: str, default: str | None = None) -> str:
    """The string under ``key``; ``default`` when absent (no default: required)."""
    value = data.get(key, default)
    if not isinstance(value, str):
        raise WireError(f"{key}: a string expected, got {type(value).__name__}")
    return value


def maybe_text(data: Mapping[str, JsonLike], key: str) -> str | None:
    value = data.get(key)
    return None if value is None else text(data, key)


def number(data: Mapping[str, JsonLike], key: str, default: int | None = None) -> int:
    """The integer under ``key``; ``default`` when absent (no default: required)."""
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise WireError(f"{key}: an integer expected, got {type(value).__name__}")
    return value


def maybe_number(data: Mapping[str, JsonLike], key: str) -> int | None:
    value = data.get(key)
    return None if value is None else number(data, key)


def texts(data: Mapping[str, JsonLike], key: str) -> tuple[str, ...]:
    """The array of strings under ``key``."""
    values = items(data, key)
    if not all(isinstance(value, str) for value in values):
        raise WireError(f"{key}: an array of strings expected")
    return tuple(str(value) for value in values)


def numbers(data: Mapping[str, JsonLike], key: str) -> tuple[int, ...]:
    """The array of integers under ``key``."""
    values = items(data, key)
    found = tuple(value for value in values if isinstance(value, int) and not isinstance(value, bool))
    if len(found) != len(values):
        raise WireError(f"{key}: an array of integers expected")
    return found


def pairs(data: Mapping[str, JsonLike], key: str) -> tuple[tuple[str, str], ...]:
    """The array of [name, value] pairs under ``key`` (header fields in their order)."""
    found: list[tuple[str, str]] = []
    for pair in items(data, key):
        if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise WireError(f"{key}: [name, value] pairs expected")
        name, value = pair
        if not isinstance(name, str) or not isinstance(value, str):
            raise WireError(f"{key}: [name, value] pairs of strings expected")
        found.append((name, value))
    return tuple(found)


def table(data: Mapping[str, JsonLike], key: str) -> Mapping[str, JsonLike]:
    """The object under ``key`` (absent: empty)."""
    return fields(data.get(key, {}), key)


def counts(data: Mapping[str, JsonLike], key: str) -> dict[str, int]:
    """The object of integers under ``key`` (absent: empty)."""
    values = table(data, key)
    return {name: number(values, name) for name in values}


def copy(value: JsonLike) -> JsonValue:
    """A read-only JSON value as a value of its own (a gate's waiver copied into a finding's row)."""
    if isinstance(value, Mapping):
        return {name: copy(item) for name, item in value.items()}
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return [copy(item) for item in value]
