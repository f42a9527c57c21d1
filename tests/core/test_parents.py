"""Parent links: one cycle found, depths computed, both linear and without recursion."""

from __future__ import annotations

import time

from toposolve.core.parents import find_parent_cycle, nesting_depths


def test_depths_count_from_the_top_and_an_unknown_parent_is_the_top():
    links = {"c": "b", "b": "a", "a": None, "x": "elsewhere"}
    assert nesting_depths(links) == {"c": 3, "b": 2, "a": 1, "x": 1}


def test_a_chain_of_200000_is_walked_once_without_recursion():
    links = {f"g{k}": (f"g{k - 1}" if k else None) for k in range(200_000)}
    start = time.perf_counter()
    depths = nesting_depths(dict(reversed(links.items())))  # children first: the worst order
    assert find_parent_cycle(links) == []
    assert time.perf_counter() - start < 5
    assert depths["g199999"] == 200_000 and depths["g0"] == 1


def test_a_cycle_is_named_from_where_the_walk_meets_it():
    assert find_parent_cycle({"a": "b", "b": "c", "c": "b"}) == ["b", "c"]
