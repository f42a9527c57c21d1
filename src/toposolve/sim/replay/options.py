"""``NAME=VALUE,…`` option strings of the replay's policies (``--defrag``, ``--fail-rate``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from toposolve.core.errors import InputError

Bad = Callable[[str], InputError]


def option_values(items: Iterable[str], known: Sequence[str], bad: Bad) -> dict[str, str]:
    """The ``NAME=VALUE`` ``items`` as a dict; ``bad(message)`` is raised for an item without
    ``=``, a name given twice or a name not in ``known``."""
    values: dict[str, str] = {}
    for item in items:
        name, sep, value = (s.strip() for s in item.partition("="))
        if not sep or not name or not value:
            raise bad(f"expected NAME=VALUE, got {item!r}")
        if name in values:
            raise bad(f"{name} given twice")
        values[name] = value
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise bad(f"unknown option {unknown[0]!r}")
    return values


def choice(values: dict[str, str], name: str, allowed: Sequence[str], bad: Bad) -> str:
    """``values[name]`` (default: the first of ``allowed``), which must be one of ``allowed``."""
    value = values.get(name, allowed[0])
    if value not in allowed:
        raise bad(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
    return value


def number(text: str, low: float, bad: Bad, message: str) -> float:
    """``text`` as a finite number ≥ ``low``; ``bad(f"{message}, not {text!r}")`` otherwise."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not low <= value < math.inf:
        raise bad(f"{message}, not {text!r}")
    return value
