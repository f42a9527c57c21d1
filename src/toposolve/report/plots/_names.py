"""Private: domain names short enough for tick labels and legends."""

from __future__ import annotations

import os
from collections.abc import Sequence

SEPARATORS = "/.-_"
MAX_LABEL = 24  # characters of a tick label; longer names keep their ends around an ellipsis
MIN_LEFT = 3  # a shared prefix or suffix is cut only if every name keeps this many characters


def _cut_prefix(names: Sequence[str]) -> int:
    """Length of the common prefix of ``names`` up to and including its last separator ("/"
    first: path parts stay whole), if every name keeps :data:`MIN_LEFT` characters after it."""
    if len(names) < 2:
        return 0
    common = os.path.commonprefix(list(names))
    cut = common.rfind("/") + 1 or max(common.rfind(sep) for sep in SEPARATORS) + 1
    return cut if all(len(n) - cut >= MIN_LEFT for n in names) else 0


def short_names(names: Sequence[str], limit: int = MAX_LABEL) -> list[str]:
    """``names`` without the prefix and suffix they all share (cut at a separator: the
    ``top/`` of label paths, the ``.ec2.internal`` of hostnames), each at most ``limit``
    characters (an ellipsis in the middle)."""
    head = _cut_prefix(names)
    rest = [n[head:] for n in names]
    tail = _cut_prefix([n[::-1] for n in rest])
    out = []
    for name in rest:
        short = name[:len(name) - tail]
        if len(short) > limit:
            keep = (limit - 1) // 2
            short = short[:keep] + "…" + short[len(short) - (limit - 1 - keep):]
        out.append(short)
    return out
