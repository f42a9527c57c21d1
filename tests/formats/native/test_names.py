"""Names in the native format both ways (patterns, ranges) and the one duplicate-name rule."""

from __future__ import annotations

import pytest

from toposolve.core.errors import InputError
from toposolve.formats.native.names import (
    compress_names,
    escape_braces,
    expand_range,
    name_pattern,
    reject_duplicates,
)


@pytest.mark.parametrize(
    "names",
    [
        ["dgx-0008", "dgx-0009", "dgx-0010", "dgx-0011"],
        ["n8", "n9", "n10", "n11"],
        ["a", "rack-1", "rack-2", "rack-3", None, "b"],
    ],
)
def test_compressed_ranges_expand_back_to_the_same_names(names):
    compressed = compress_names(names)
    assert len(compressed) < len(names)
    expanded = []
    for item in compressed:
        expanded.extend(expand_range(item) or [item] if item is not None else [None])
    assert expanded == names


def test_name_pattern_formats_back_to_the_name():
    pattern, index = name_pattern("dgx-0042")
    assert (pattern, index) == ("dgx-{i:04d}", 42) and pattern.format(i=index) == "dgx-0042"
    assert name_pattern("plain") is None
    assert escape_braces("a{b}").format() == "a{b}"


def test_reject_duplicates_names_the_first_repeat():
    def fail(position, name):
        return InputError(f"{name} again at {position}")

    reject_duplicates(["a", "b"], fail)
    with pytest.raises(InputError, match="a again at 2"):
        reject_duplicates(["a", "b", "a", "b"], fail)
