"""JSON as the target answers it and as the reports hold it.

A body the target sent may be any JSON value (the target is hostile input too), so these aliases carry
no ``Any``: each use narrows the value (``isinstance``) before it reads a field, and mypy holds every
use to that.  Data that passes between the suite's own modules is a dataclass, not one of these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JsonValue: TypeAlias = "dict[str, JsonValue] | list[JsonValue] | str | int | float | bool | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"
# What a function only reads: any mapping or sequence of JSON values (a dict[str, int] included).
JsonLike: TypeAlias = "Mapping[str, JsonLike] | Sequence[JsonLike] | str | int | float | bool | None"
