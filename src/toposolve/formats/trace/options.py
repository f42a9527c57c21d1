"""Checks of trace options (the openb reader's, the synthetic generator's): one line naming the
option, before any work."""

from __future__ import annotations

import math
from collections.abc import Sequence

from toposolve.core.errors import InputError
from toposolve.core.limits import count_problem


def number(value: object, name: str, obj: str, low: float, high: float, *,
           above_low: bool = False) -> float:
    """``value`` as a float in ``[low, high]`` (``(low, high]`` with ``above_low``).

    Numeric text is read too: ``--trace-option inflate=1e12`` arrives as the string ``"1e12"``.

    Raises
    ------
    InputError
        Naming ``obj`` and the option ``name``.
    """
    parsed = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        parsed = float(value)
    elif isinstance(value, str):
        try:
            parsed = float(value)
        except ValueError:
            pass
    bounds = f"({low:g}, {high:g}]" if above_low else f"[{low:g}, {high:g}]"
    if parsed is None or not math.isfinite(parsed) or not low <= parsed <= high or (
            above_low and parsed == low):
        raise InputError(f"expected a number in {bounds}, got {value!r}"[:200], obj=obj,
                         field=name)
    return parsed


def integer(value: object, name: str, obj: str, low: int, high: int) -> int:
    """``value`` as an integer in ``[low, high]``; InputError naming ``obj`` and ``name``."""
    problem = count_problem(value, low, high)
    if problem:
        raise InputError(problem[:200], obj=obj, field=name)
    assert isinstance(value, int)
    return value


def choice(value: object, name: str, obj: str, allowed: Sequence[str]) -> str:
    """``value`` if it is one of ``allowed``; InputError naming ``obj`` and ``name``."""
    if value not in allowed:
        raise InputError(f"must be one of {', '.join(allowed)}, not {value!r}"[:200], obj=obj,
                         field=name)
    return str(value)
