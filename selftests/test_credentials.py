"""Near-miss credentials are never the key itself, for keys of 1 to 4,096 characters.

With a 1-character key the old "first half" of the key was the key: every conformant server
"accepted an invalid key".  The property over every key length, and the templates filled in one
pass (a key that looks like a marker stays itself).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from petstore_contract.run.api import MARKER, Api, near_misses

keys = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=4096)
TEMPLATES = [f"Bearer {marker}" for marker in near_misses("k")] + ["{key}{key}", "Bearer {key}x", "Token {key}"]


@settings(max_examples=300, deadline=None)
@given(key=keys)
def test_no_near_miss_is_the_key(key: str) -> None:
    api = Api(transport=None, api_key=key)  # type: ignore[arg-type]
    valid = api.fill("Bearer {key}")
    assert valid == f"Bearer {key}"
    for template in TEMPLATES:
        assert api.fill(template) != valid, template
    for value in near_misses(key).values():
        assert value != key


def test_every_marker_is_filled_and_a_key_that_looks_like_one_stays_itself() -> None:
    assert {m for t in TEMPLATES for m in MARKER.findall(t)} >= set(near_misses("k"))
    api = Api(transport=None, api_key="{key_half}")  # type: ignore[arg-type]
    assert api.fill("Bearer {key}") == "Bearer {key_half}"
    assert near_misses("k") == {
        "{key_prefix}": "",
        "{key_half}": "",
        "{key_swapcase}": "K",
        "{wrong_key}": "not-the-key-0123456789",
    }
