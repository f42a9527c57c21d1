"""Kubernetes resource quantities, parsed exactly as apimachinery's ``resource.ParseQuantity``.

Grammar (``k8s.io/apimachinery/pkg/api/resource/quantity.go``)::

    <quantity>   ::= <signedNumber><suffix>
    <signedNumber> ::= [+|-] <digits> [ . <digits> ]     (either side of the dot may be empty)
    <suffix>     ::= <binarySI> | <decimalExponent> | <decimalSI>
    <binarySI>   ::= Ki | Mi | Gi | Ti | Pi | Ei
    <decimalSI>  ::= n | u | m | "" | k | M | G | T | P | E
    <decimalExponent> ::= e <signedInt> | E <signedInt>

Like Go's scanner, a number with no digits reads as zero (``"."``, ``"+"``), and the suffix is
the run of ``eEinumkKMGTP`` letters, an optional sign, then digits. Anything else is rejected.
Values are exact (:class:`fractions.Fraction`); engines use integer milli-units rounded up, as
Kubernetes rounds milli-values up.
"""

from __future__ import annotations

import math
from fractions import Fraction

_SUFFIX_LETTERS = set("eEinumkKMGTP")
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_MEMORY_LIKE = ("memory", "ephemeral-storage", "storage")


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


def _digits(text: str, pos: int) -> int:
    while pos < len(text) and "0" <= text[pos] <= "9":
        pos += 1
    return pos


def _split(text: str) -> tuple[bool, str, str, str]:
    """(positive, integer digits, fraction digits, suffix) per Go's ``parseQuantityString``."""
    pos, end = 0, len(text)
    positive = True
    if pos < end and text[pos] in "+-":
        positive = text[pos] == "+"
        pos += 1
    num_end = _digits(text, pos)
    integer = text[pos:num_end]
    pos = num_end
    fraction = ""
    if pos < end and text[pos] == ".":
        frac_end = _digits(text, pos + 1)
        fraction = text[pos + 1 : frac_end]
        pos = frac_end
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_LETTERS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    pos = _digits(text, pos)
    if pos != end:
        raise QuantityError(f"{text!r} is not a Kubernetes quantity")
    return positive, integer or "0", fraction, text[suffix_start:]


def _scale(suffix: str, text: str) -> Fraction:
    if suffix in _DECIMAL:
        return Fraction(10) ** _DECIMAL[suffix]
    if suffix in _BINARY:
        return Fraction(2) ** _BINARY[suffix]
    if len(suffix) > 1 and suffix[0] in "eE":
        exponent = suffix[1:]
        body = exponent[1:] if exponent[0] in "+-" else exponent
        if body.isdigit() and body.isascii():
            return Fraction(10) ** int(exponent)
    raise QuantityError(f"{text!r} is not a Kubernetes quantity (unknown suffix {suffix!r})")


def parse_quantity(text: str | int | float) -> Fraction:
    """Exact value of a quantity; YAML integers and finite floats are accepted as they are."""
    if isinstance(text, bool):
        raise QuantityError(f"{text!r} is not a Kubernetes quantity")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        if not math.isfinite(text):
            raise QuantityError(f"{text!r} is not a Kubernetes quantity")
        return Fraction(str(text))
    if not isinstance(text, str) or not text:
        raise QuantityError(f"{text!r} is not a Kubernetes quantity")
    positive, integer, fraction, suffix = _split(text)
    value = (Fraction(int(integer)) + (Fraction(int(fraction), 10 ** len(fraction)) if fraction else 0)) * _scale(
        suffix, text
    )
    return value if positive else -value


def to_milli(text: str | int | float) -> int:
    """Milli-units, rounded up (``1n`` → 1)."""
    return math.ceil(parse_quantity(text) * 1000)


def parse_resource_amount(text: str | int | float) -> int:
    """Milli-units of a request or allocatable amount; negative amounts are rejected."""
    value = to_milli(text)
    if value < 0:
        raise QuantityError(f"{text!r} must not be negative")
    return value


def format_quantity(milli: int, resource: str) -> str:
    """Readable form: ``500m`` / ``4`` for cpu-like, ``16Gi`` for memory-like when exact."""
    if milli % 1000:
        return f"{milli}m"
    units = milli // 1000
    if any(resource == m or resource.startswith(m) for m in (*_MEMORY_LIKE, "hugepages-")) and units:
        for suffix, power in sorted(_BINARY.items(), key=lambda kv: -kv[1]):
            if units % (1 << power) == 0:
                return f"{units >> power}{suffix}"
    return str(units)
