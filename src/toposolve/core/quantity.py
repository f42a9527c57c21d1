"""Kubernetes resource quantities (``500m``, ``16Gi``, ``1e3`` ...), parsed exactly.

The accepted language is that of Go's ``k8s.io/apimachinery/pkg/api/resource.ParseQuantity``:
the implementation, not just the grammar in its doc comment, which is narrower than what the
code accepts (no-digit numbers such as ``"Gi"`` parse as zero, ``"1."`` and ``".5"`` are
accepted, ``"1E"`` is exa, exponents are truncated to int32, nothing is trimmed;
``docs/formats.md`` lists the differences, confirmed against ``quantity.go``/``suffix.go``).

Values are exact ``Fraction`` values of the written number. Go's rounding to nano units and
its cap of binary-SI values at ``2**63 - 1`` change nothing in :func:`to_milli` for a
non-negative value below that cap.
"""

from __future__ import annotations

import functools
import math
import numbers
import re
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction

from toposolve.core.limits import MAX_BYTES, MAX_INTEGER, MAX_QUANTITY

__all__ = [
    "MilliUnits",
    "QuantityError",
    "format_amount",
    "format_quantity",
    "parse_quantity",
    "parse_resource_amount",
    "to_milli",
]


class QuantityError(ValueError):
    """A value that Kubernetes would not accept as a resource quantity (or amount)."""


class MilliUnits(dict):
    """A resource map whose integers are already in thousandths of the Kubernetes unit.

    The instance model reads a plain resource map as Kubernetes quantities (``"500m"``,
    ``"16Gi"``, ``8`` meaning eight units). Readers that have parsed the quantities
    themselves, to report errors with file and field, hand the result over in this
    wrapper so that nothing is scaled twice.
    """

    __slots__ = ()


# How Go's scanner takes a quantity apart.  It is greedy and never backtracks, so
# every repetition here is possessive.  A string this doesn't fully match is one
# Go rejects with ErrFormatWrong.  All classes are ASCII-only.
_SCANNER = re.compile(
    r"(?P<sign>[+-]?+)"
    r"(?P<whole>[0-9]*+)"
    r"(?:\.(?P<frac>[0-9]*+))?+"
    r"(?P<suffix>[eEinumkKMGTP]*+[+-]?+[0-9]*+)"
)

# suffix -> (base, exponent)
_SUFFIXES: dict[str, tuple[int, int]] = {
    "n": (10, -9),
    "u": (10, -6),
    "m": (10, -3),
    "": (10, 0),
    "k": (10, 3),
    "M": (10, 6),
    "G": (10, 9),
    "T": (10, 12),
    "P": (10, 15),
    "E": (10, 18),
    "Ki": (2, 10),
    "Mi": (2, 20),
    "Gi": (2, 30),
    "Ti": (2, 40),
    "Pi": (2, 50),
    "Ei": (2, 60),
}

# What follows the e/E of a decimal exponent: Go's ParseInt(s, 10, 64) syntax.
_EXPONENT_DIGITS = re.compile(r"[+-]?[0-9]+")
_INT64_MAX = 2**63 - 1

# A non-zero value whose exponent is larger than this in magnitude is refused.
# Go accepts it, but no resource is that large or small, and exact arithmetic on
# 10**(2**31) is out of reach.  Go itself hangs on some of these.
_MAX_ABS_EXPONENT = 100_000

_BINARY_SUFFIXES = (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10))
_MEMORY_LIKE = frozenset({"memory", "ephemeral-storage", "storage"})


def _reject(text: str, reason: str) -> QuantityError:
    return QuantityError(f"{text!r} is not a Kubernetes quantity: {reason}")


def _interpret_suffix(text: str, suffix: str) -> tuple[int, int]:
    """Return (base, exponent) for a suffix, as Go's ``suffixer.interpret`` would."""
    known = _SUFFIXES.get(suffix)
    if known is not None:
        return known
    if len(suffix) > 1 and suffix[0] in "eE" and _EXPONENT_DIGITS.fullmatch(suffix[1:]):
        digits = suffix[1:].lstrip("+-").lstrip("0") or "0"
        # Anything over 19 digits is out of int64 range (and long for int()).
        exponent = int(digits) if len(digits) <= 19 else _INT64_MAX + 2
        if suffix[1] == "-":
            exponent = -exponent
        if not -_INT64_MAX - 1 <= exponent <= _INT64_MAX:
            raise _reject(text, f"exponent {suffix[1:]!r} does not fit in 64 bits")
        # Go stores the parsed int64 in an int32, keeping its low 32 bits.
        return 10, (exponent + 2**31) % 2**32 - 2**31
    raise _reject(
        text,
        f"unknown suffix {suffix!r} (expected one of n u m k M G T P E Ki Mi Gi Ti Pi Ei, "
        "or e/E followed by an integer)",
    )


def _digits_value(digits: str) -> int:
    # int() on a str refuses more than sys.get_int_max_str_digits() digits; Go doesn't
    # limit them.  Decimal has no such cap, and int(Decimal) doesn't go through str.
    if len(digits) <= 4000:
        return int(digits)
    return int(Decimal(digits))


@functools.lru_cache(maxsize=4096)  # dumps repeat a few quantity strings thousands of times
def _parse_text(text: str) -> Fraction:
    if not text:
        raise QuantityError("'' is not a Kubernetes quantity: it is empty")
    scanned = _SCANNER.fullmatch(text)
    if scanned is None:
        raise _reject(
            text,
            "expected an optionally signed decimal number followed by an optional suffix "
            "(e.g. '500m', '1.5', '16Gi', '1e3')",
        )
    sign, whole, frac, suffix = scanned.group("sign", "whole", "frac", "suffix")
    frac = frac or ""
    base, exponent = _interpret_suffix(text, suffix)

    if not whole and not frac:
        # No digits at all.  Go takes these as zero, except where its slow path
        # (decimal exponent below -9, or Pi/Ei) tries to read digits and fails.
        if (base == 10 and exponent < -9) or (base == 2 and exponent >= 50):
            raise _reject(text, "the number has no digits")
        return Fraction(0)

    mantissa = _digits_value(whole + frac)
    if mantissa == 0:
        return Fraction(0)
    if sign == "-":
        mantissa = -mantissa
    if abs(exponent) > _MAX_ABS_EXPONENT:
        raise _reject(text, f"exponent {exponent} is outside the supported ±{_MAX_ABS_EXPONENT}")

    # mantissa * 10**-len(frac) * base**exponent, kept exact.
    if base == 2:
        return Fraction(mantissa * 2**exponent, 10 ** len(frac))
    shift = exponent - len(frac)
    if shift >= 0:
        return Fraction(mantissa * 10**shift)
    return Fraction(mantissa, 10**-shift)


def parse_quantity(text: str | int | float) -> Fraction:
    """Return the exact value of a Kubernetes quantity.

    Strings follow Go's ``ParseQuantity`` (see the module docstring).  Integers
    pass through.  Floats, which YAML makes of ``cpu: 2.5``, must be finite; they
    are read from their shortest round-tripping decimal (``repr``), so ``0.1``
    means 1/10 as written, not the nearest binary double.  That's also what
    Kubernetes does with a JSON number.  ``bool`` is rejected.
    """
    if isinstance(text, str):
        return _parse_text(text)
    if isinstance(text, bool):
        raise QuantityError(f"{text!r} is not a Kubernetes quantity: booleans are not numbers")
    if isinstance(text, numbers.Integral):
        return Fraction(int(text))
    if isinstance(text, float):
        if not math.isfinite(text):
            raise QuantityError(f"{text!r} is not a Kubernetes quantity: it is not finite")
        return _parse_text(repr(text))
    raise QuantityError(
        f"{text!r} is not a Kubernetes quantity: expected a string or a number, "
        f"got {type(text).__name__}"
    )


def to_milli(text: str | int | float) -> int:
    """Return the quantity in thousandths, rounded up as Kubernetes does (``"1n"`` -> 1)."""
    return math.ceil(parse_quantity(text) * 1000)


def parse_resource_amount(text: str | int | float, resource: str | None = None) -> int:
    """Like :func:`to_milli`, but refuse a negative amount (requests, capacity) and one beyond
    the limit of its unit: :data:`MAX_QUANTITY` units, or :data:`MAX_BYTES` for a memory-like
    ``resource`` (bytes; a ClusterQueue's memory quota runs to petabytes)."""
    value = parse_quantity(text)
    if value < 0:
        raise QuantityError(f"{_shown(text)} must not be negative (it is a resource amount)")
    if resource is not None and _is_memory_like(resource):
        if value > MAX_BYTES:
            raise QuantityError(f"{_shown(text)} is more than the largest amount of bytes "
                                f"toposolve takes, {MAX_BYTES:,} (8 PiB)")
    elif value > MAX_QUANTITY:
        raise QuantityError(
            f"{_shown(text)} is more than the largest amount toposolve takes, {MAX_QUANTITY:.0e} "
            "units")
    return math.ceil(value * 1000)


def _shown(text: str | int | float) -> str:
    shown = repr(text)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _is_memory_like(resource: str) -> bool:
    return resource in _MEMORY_LIKE or resource.startswith("hugepages-")


def _plain_decimal(milli: int) -> str:
    whole, rest = divmod(abs(milli), 1000)
    sign = "-" if milli < 0 else ""
    if rest == 0:
        return f"{sign}{whole}"
    return f"{sign}{whole}.{rest:03d}".rstrip("0")


def format_quantity(milli: int, resource: str) -> str:
    """Render a milli-unit amount for people, in a form :func:`to_milli` reads back.

    ``cpu`` (and any other resource that isn't memory-like) becomes ``"4"`` or
    ``"500m"``.  Memory-like resources (``memory``, ``ephemeral-storage``,
    ``storage``, ``hugepages-*``) get the largest binary suffix that divides them exactly
    (``"16Gi"``, ``"1536Mi"``), or else a plain integer or decimal of bytes.
    """
    if isinstance(milli, bool) or not isinstance(milli, numbers.Integral):
        raise TypeError(f"milli must be an int, got {type(milli).__name__}")
    milli = int(milli)
    if not _is_memory_like(resource):
        return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"
    if milli == 0 or milli % 1000 != 0:
        return _plain_decimal(milli)
    amount = milli // 1000
    for suffix, power in _BINARY_SUFFIXES:
        if amount % (1 << power) == 0:
            return f"{amount >> power}{suffix}"
    return str(amount)


_DECIMAL_PREFIXES = (("E", 18), ("P", 15), ("T", 12), ("G", 9), ("M", 6), ("k", 3))
_PLAIN_BELOW = 100_000  # counts (cores, GPUs, pods) are shown whole up to here


def format_quantities(amounts: Mapping[str, int]) -> dict[str, str]:
    """:func:`format_quantity` of each amount of a resource map (name order kept)."""
    return {name: format_quantity(milli, name) for name, milli in amounts.items()}


def _three_figures(value: float) -> str:
    size = abs(value)
    text = f"{value:.0f}" if size >= 100 else f"{value:.1f}" if size >= 10 else f"{value:.2f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _scaled(units: float, scales: list[tuple[str, int]]) -> str:
    """Three figures with the smallest scale (ascending list) that keeps the figure below 1000."""
    for k, (suffix, scale) in enumerate(scales):
        text = _three_figures(units / scale)
        if k + 1 == len(scales) or abs(float(text)) < 1000:
            return text + suffix
    raise AssertionError("unreachable")  # pragma: no cover


def format_amount(milli: int, resource: str) -> str:
    """Render a milli-unit amount for reading, rounded to three figures where it is large.

    Memory-like resources take binary suffixes (``261Ti``, ``1.5Gi``, ``512``); every other
    resource is a plain number of units (``86016``, ``16.5``, ``0.25``) below 100,000 and a
    decimal prefix above (``229k``). Unlike :func:`format_quantity` the text is not exact.
    """
    units = milli / 1000
    if _is_memory_like(resource):
        if abs(units) < 1024:
            return _plain_decimal(milli) if abs(units) < 100 else _three_figures(units)
        return _scaled(units, [(s, 1 << p) for s, p in reversed(_BINARY_SUFFIXES)])
    if abs(units) < _PLAIN_BELOW:
        return _plain_decimal(milli)
    return _scaled(units, [(s, 10**p) for s, p in reversed(_DECIMAL_PREFIXES)])


def atoi(text: str) -> int | None:
    """``text`` as Go's ``strconv.Atoi`` reads it (an optional sign and ASCII digits, within
    int64), or None. Python's ``int()`` also takes other scripts' digits (``'٢'`` is 2) and
    fails on ``'²'``, which ``str.isdigit()`` lets through; Kubernetes takes neither."""
    if not re.fullmatch(r"[+-]?[0-9]{1,19}", text):
        return None
    value = int(text)
    return value if -MAX_INTEGER - 1 <= value <= MAX_INTEGER else None
