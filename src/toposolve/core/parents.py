"""Parent links (a HyperNode's parent, a GangGroup's or a KAI SubGroup's): cycles and depths,
each in linear time, without recursion (a chain may be as long as the input is)."""

from __future__ import annotations

from collections.abc import Mapping


def find_parent_cycle(parent_of: Mapping[str, str | None]) -> list[str]:
    """One cycle of the parent links (``[a, parent(a), …]``), or ``[]``; linear time.

    Each walk stops at the first name an earlier walk finished, so every link is followed once.
    """
    done: set[str] = set()
    for start in parent_of:
        walk: dict[str, int] = {}  # name -> position on this walk
        cur: str | None = start
        while cur is not None and cur not in done:
            if cur in walk:
                return list(walk)[walk[cur]:]
            walk[cur] = len(walk)
            cur = parent_of.get(cur)
        done.update(walk)
    return []


def nesting_depths(parent_of: Mapping[str, str | None]) -> dict[str, int]:
    """How deep each name is nested: 1 without a parent (or with one that is not a key), its
    parent's depth + 1 otherwise; linear time.

    Parameters
    ----------
    parent_of
        Name → parent name (None: at the top); the links must have no cycle
        (:func:`find_parent_cycle`).

    Returns
    -------
    dict
        Name → depth, in the order of ``parent_of``.
    """
    depth: dict[str, int] = {}
    for start in parent_of:
        walk = []
        cur: str | None = start
        while cur is not None and cur in parent_of and cur not in depth:
            walk.append(cur)
            cur = parent_of[cur]
        level = depth.get(cur, 0) if cur is not None else 0
        for name in reversed(walk):
            level += 1
            depth[name] = level
    return {name: depth[name] for name in parent_of}
