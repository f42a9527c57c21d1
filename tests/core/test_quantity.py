"""Kubernetes quantity parsing, checked against Go's ``resource.ParseQuantity``.

Expected values and the accept/reject verdicts in the tables were checked against
a build of apimachinery's ``pkg/api/resource`` (quantity.go, suffix.go) with
gopkg.in/inf.v0.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from toposolve.core.quantity import (
    QuantityError,
    format_amount,
    format_quantity,
    parse_quantity,
    parse_resource_amount,
    to_milli,
)

DECIMAL_SI = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
BINARY_SI = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

ACCEPTED = [
    ("0", Fraction(0)),
    ("500m", Fraction(1, 2)),
    ("16Gi", 16 * 2**30),
    ("1e3", 1000),
    ("2.5", Fraction(5, 2)),
    ("1.5Gi", 3 * 2**29),
    ("+1", 1),
    ("-1", -1),
    (".5", Fraction(1, 2)),
    ("1.", 1),
    ("100n", Fraction(1, 10**7)),
    ("1E-3", Fraction(1, 1000)),
    ("1E", 10**18),  # E alone is the decimal-SI suffix exa
    ("1E+3", 1000),
    ("1e03", 1000),
    ("1e-0", 1),
    ("5e-1", Fraction(1, 2)),
    ("1.e3", 1000),
    ("1.G", 10**9),
    ("100.035k", 100035),
    ("0.0005k", Fraction(1, 2)),
    ("7.123456M", 7123456),
    ("1.01E", 101 * 10**16),
    ("1u", Fraction(1, 10**6)),
    ("4u", Fraction(4, 10**6)),
    ("8k", 8000),
    ("7M", 7 * 10**6),
    ("5T", 5 * 10**12),
    ("2P", 2 * 10**15),
    ("1Ki", 1024),
    ("1.0Ki", 1024),
    ("0.5Mi", 2**19),
    ("100.035Ki", Fraction(100035 * 1024, 1000)),
    ("1.Pi", 2**50),
    ("3Ei", 3 * 2**60),
    ("-.5Gi", -(2**29)),
    ("+.5", Fraction(1, 2)),
    ("-9.01", Fraction(-901, 100)),
    ("00", 0),
    ("000.000", 0),
    ("-0", 0),
    ("0.1n", Fraction(1, 10**10)),  # exact here; Go stores it rounded up to 1n
    ("12345678901234567890", 12345678901234567890),
    ("9Ei", 9 * 2**60),  # exact here; Go caps binary-SI values at 2**63-1
    ("1e1000", 10**1000),
    # Go keeps the parsed int64 exponent in an int32.
    ("1e4294967297", 10),
    ("1e9223372036854775807", Fraction(1, 10)),
    ("1e-9223372036854775808", 1),
]

# Go's scanner lets the number have no digits; such strings are zero...
DIGITLESS_ZERO = [
    "+",
    "-",
    ".",
    "+.",
    "-.",
    "Gi",
    "-Gi",
    "Ki",
    "Mi",
    "Ti",
    ".Ki",
    "k",
    "m",
    "n",
    "u",
    "T",
    "P",
    "E",
    "e3",
    ".e3",
    "e+5",
    "e-9",
    "e-4294967296",
]
# ...except where Go's slow path tries to read the digits (exponent below -9, Pi, Ei).
DIGITLESS_REJECTED = ["Pi", "Ei", "-Pi", ".Pi", "+Ei", "e-10", "E-10", "-e-10", ".e-10"]

REJECTED = [
    "",
    " ",
    " 1",
    "1 ",
    "1\n",
    "\t1",
    "1 Gi",
    "1.2.3",
    "1..5",
    "1.5.Gi",
    "1gi",
    "1KiB",
    "1K",
    "1ki",
    "1mi",
    "1i",
    ".5i",
    "1Kii",
    "1kk",
    "1mm",
    "1EE",
    "1Ee3",
    "1ee3",
    "1e3e3",
    "1e3Ki",
    "1e18Ki",
    "1.5e3Ki",
    "1E3k",
    "1e-3k",
    "1Gi3",
    "1Ki1",
    "1n5",
    "1m3",
    "0x10",
    "1e",
    "1E-",
    "1e+",
    "1e+-3",
    "1e-+3",
    "1e3-",
    "1e3.5",
    "1e_3",
    "1e9223372036854775808",
    "1e-9223372036854775809",
    "--1",
    "+-1",
    "-+1",
    "1+3",
    "1-3",
    "1_000",
    "1,5",
    "١",  # Arabic-Indic digit one
    "１",  # fullwidth digit one
    "1µ",
    "²",
    "aoeu",
    "1.1.M",
    "1+1.0M",
    "0.1am",
    "-3.01i",
    "-3.01e-",
    "inf",
    "nan",
    "1e3 ",
]


@pytest.mark.parametrize(("text", "value"), ACCEPTED)
def test_accepted_values_are_exact(text, value):
    got = parse_quantity(text)
    assert isinstance(got, Fraction)
    assert got == value


@pytest.mark.parametrize("text", DIGITLESS_ZERO)
def test_digitless_numbers_are_zero_like_go(text):
    assert parse_quantity(text) == 0


@pytest.mark.parametrize("text", DIGITLESS_REJECTED)
def test_digitless_numbers_go_rejects(text):
    with pytest.raises(QuantityError, match="no digits"):
        parse_quantity(text)


@pytest.mark.parametrize("text", REJECTED)
def test_malformed_quantity_is_rejected(text):
    with pytest.raises(QuantityError, match="is not a Kubernetes quantity"):
        parse_quantity(text)


def test_error_names_the_text_and_is_a_value_error():
    with pytest.raises(ValueError, match=r"^'1\.2\.3' is not a Kubernetes quantity"):
        parse_quantity("1.2.3")
    with pytest.raises(QuantityError, match="unknown suffix 'Kii'"):
        parse_quantity("1Kii")
    with pytest.raises(QuantityError, match="empty"):
        parse_quantity("")


def test_huge_exponents_of_non_zero_values_are_refused():
    # Go accepts these (and hangs on some); exact arithmetic can't follow.
    for text in ("1e100001", "3e-200000", "1e2147483647"):
        with pytest.raises(QuantityError, match="outside the supported"):
            parse_quantity(text)
    assert parse_quantity("1e100000") == 10**100000
    assert parse_quantity("0e2147483647") == 0
    assert parse_quantity("-0.000e-99999999") == 0


def test_long_digit_strings():
    # More digits than int() reads from a str by default; Go has no such limit.
    digits = "7" * 5000
    assert parse_quantity(digits) == int(Decimal(digits))
    assert parse_quantity("0." + digits + "Ki") == Fraction(int(Decimal(digits)) * 1024, 10**5000)
    assert parse_quantity("1e" + "0" * 5000 + "3") == 1000


# MilliValue() of Go's parsed Quantity.
GO_MILLI_VALUE = [
    ("0", 0),
    ("1n", 1),
    ("100n", 1),
    ("1u", 1),
    ("0.1n", 1),
    ("1e-10", 1),
    ("1E-3", 1),
    ("1e-3", 1),
    ("0.000000000001Ki", 1),
    (".5", 500),
    ("500m", 500),
    ("1.", 1000),
    ("0.1234567890123456789", 124),
    ("1234567890123456789n", 1234567890124),
    ("1.5Gi", 1610612736000),
    ("16Gi", 17179869184000),
    ("1Mi", 1048576000),
    ("0.5Ki", 512000),
    ("1Pi", 1125899906842624000),
    ("1.G", 1000000000000),
    ("1T", 1000000000000000),
    ("1e+3", 1000000),
    ("1e4294967297", 10000),
    ("1e9223372036854775807", 100),
    ("-9.01", -9010),
    ("-1", -1000),
    ("-.5Gi", -536870912000),
]


@pytest.mark.parametrize(("text", "milli"), GO_MILLI_VALUE)
def test_to_milli_matches_go_milli_value(text, milli):
    assert to_milli(text) == milli


def test_to_milli_rounds_up():
    assert to_milli("1n") == 1
    assert to_milli("1001u") == 2
    assert to_milli("1500u") == 2
    assert to_milli("-1n") == 0  # ceiling, towards +infinity
    assert to_milli("-1.5") == -1500
    assert to_milli(3) == 3000


def test_numbers_from_yaml():
    assert parse_quantity(4) == 4
    assert parse_quantity(2.5) == Fraction(5, 2)
    assert parse_quantity(4.0) == 4
    assert parse_quantity(0.1) == Fraction(1, 10)  # as written, not the binary double
    assert parse_quantity(1e-05) == Fraction(1, 100000)
    assert parse_quantity(1e22) == 10**22
    assert parse_quantity(-0.0) == 0
    assert to_milli(0.1) == 100
    assert to_milli(2.5) == 2500
    for bad in (True, False, math.inf, -math.inf, math.nan, None, b"1", [1], Decimal("1")):
        with pytest.raises(QuantityError, match="is not a Kubernetes quantity"):
            parse_quantity(bad)


def test_parse_resource_amount():
    assert parse_resource_amount("500m") == 500
    assert parse_resource_amount("16Gi") == 16 * 2**30 * 1000
    assert parse_resource_amount("1n") == 1
    assert parse_resource_amount("-0") == 0
    assert parse_resource_amount(2) == 2000
    for negative in ("-1", "-1n", "-.5Gi", -1, -0.5):
        with pytest.raises(QuantityError, match="must not be negative"):
            parse_resource_amount(negative)
    with pytest.raises(QuantityError, match="is not a Kubernetes quantity"):
        parse_resource_amount("lots")


@pytest.mark.parametrize(
    ("milli", "resource", "text"),
    [
        (500, "cpu", "500m"),
        (4000, "cpu", "4"),
        (0, "cpu", "0"),
        (1500, "cpu", "1500m"),
        (-250, "cpu", "-250m"),
        (16 * 2**30 * 1000, "memory", "16Gi"),
        (1536 * 2**20 * 1000, "memory", "1536Mi"),
        (2**60 * 1000, "memory", "1Ei"),
        (1024 * 2**60 * 1000, "memory", "1024Ei"),
        (1000 * 1000, "memory", "1000"),
        (10**9 * 1000, "memory", "1000000000"),
        (1500, "memory", "1.5"),
        (1, "memory", "0.001"),
        (-1500, "memory", "-1.5"),
        (-(2**30) * 1000, "memory", "-1Gi"),
        (0, "memory", "0"),
        (2**20 * 1000, "ephemeral-storage", "1Mi"),
        (2**21 * 1000, "hugepages-2Mi", "2Mi"),
        (10 * 2**30 * 1000, "storage", "10Gi"),
        (8000, "nvidia.com/gpu", "8"),
        (110 * 1000, "pods", "110"),
        (2**30 * 1000, "cpu", "1073741824"),
    ],
)
def test_format_quantity(milli, resource, text):
    assert format_quantity(milli, resource) == text
    assert to_milli(text) == milli


# --- properties -------------------------------------------------------------------------

# The accepted language, written out independently of the implementation: the
# documented grammar, with the digits of the number optional as in Go's scanner.
REFERENCE = re.compile(
    r"(?P<sign>[+-]?)(?P<number>[0-9]*(?:\.[0-9]*)?)"
    r"(?P<suffix>[numkMGTPE]?|[KMGTPE]i|[eE](?P<exponent>[+-]?[0-9]+))",
    re.ASCII,
)


def _int32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def _go_verdict(text: str) -> str:
    """'accept', 'reject' or 'too-large' (Go accepts; we refuse the exponent)."""
    match = REFERENCE.fullmatch(text)
    if not text or match is None:
        return "reject"
    exponent = match["exponent"]
    if exponent is not None:
        if not -(2**63) <= int(exponent) < 2**63:
            return "reject"
        exponent = _int32(int(exponent))
    else:
        exponent = 0
    if not any(c.isdigit() for c in match["number"]):
        if match["suffix"] in ("Pi", "Ei") or exponent < -9:
            return "reject"
        return "accept"
    if abs(exponent) > 100_000 and any(c in "123456789" for c in match["number"]):
        return "too-large"
    return "accept"


QUANTITY_ALPHABET = "0123456789.+-eEinumkKMGTPB _x\n"
suffixes = st.sampled_from(sorted(DECIMAL_SI) + sorted(BINARY_SI))
exponents = st.integers(min_value=-40, max_value=40)


@given(st.integers(min_value=0, max_value=10**30), suffixes)
@example(0, "Ei")
@example(2**63, "Ki")
def test_integer_with_si_suffix_round_trips(n, suffix):
    multiplier = (
        Fraction(10) ** DECIMAL_SI[suffix] if suffix in DECIMAL_SI else 2 ** BINARY_SI[suffix]
    )
    assert parse_quantity(f"{n}{suffix}") == n * multiplier
    assert parse_quantity(f"+{n}{suffix}") == n * multiplier
    assert parse_quantity(f"-{n}{suffix}") == -n * multiplier
    assert parse_quantity(f"00{n}{suffix}") == n * multiplier


@given(
    st.integers(min_value=0, max_value=10**30),
    exponents,
    st.sampled_from(["e", "E"]),
    st.sampled_from(["", "+", "0"]),
)
def test_integer_with_exponent_round_trips(n, exponent, letter, padding):
    sign = "-" if exponent < 0 else padding
    text = f"{n}{letter}{sign}{abs(exponent)}"
    assert parse_quantity(text) == n * Fraction(10) ** exponent


@given(
    st.from_regex(r"\A[0-9]{0,25}\Z"),
    st.from_regex(r"\A[0-9]{0,25}\Z"),
    st.one_of(
        st.sampled_from(sorted(DECIMAL_SI)).map(lambda s: (s, DECIMAL_SI[s])),
        exponents.map(lambda e: (f"e{e}", e)),
    ),
)
def test_decimal_with_decimal_suffix(whole, frac, suffix_and_exponent):
    if not whole and not frac:
        whole = "0"
    suffix, exponent = suffix_and_exponent
    expected = Fraction(Decimal(f"{whole}.{frac}")) * Fraction(10) ** exponent
    assert parse_quantity(f"{whole}.{frac}{suffix}") == expected
    assert parse_quantity(f"-{whole}.{frac}{suffix}") == -expected


@given(
    st.from_regex(r"\A[0-9]{0,20}\Z"),
    st.from_regex(r"\A[0-9]{1,20}\Z"),
    st.sampled_from(sorted(BINARY_SI)),
)
def test_decimal_with_binary_suffix(whole, frac, suffix):
    expected = Fraction(Decimal(f"{whole}.{frac}")) * 2 ** BINARY_SI[suffix]
    assert parse_quantity(f"{whole}.{frac}{suffix}") == expected


@given(st.text(alphabet=QUANTITY_ALPHABET, max_size=12) | st.text(max_size=12))
@example("Gi")
@example("Pi")
@example("e-10")
@example("1e4294967296")
@example("9e-4294967297")
def test_strings_outside_the_grammar_are_rejected(text):
    verdict = _go_verdict(text)
    if verdict == "reject":
        with pytest.raises(QuantityError):
            parse_quantity(text)
    elif verdict == "too-large":
        with pytest.raises(QuantityError, match="outside the supported"):
            parse_quantity(text)
    else:
        assert isinstance(parse_quantity(text), Fraction)


@given(st.text(alphabet=QUANTITY_ALPHABET, max_size=12))
def test_signs_negate(text):
    if text[:1] in ("+", "-") or _go_verdict(text) != "accept":
        return
    value = parse_quantity(text)
    assert parse_quantity("+" + text) == value
    assert parse_quantity("-" + text) == -value


@given(st.text(alphabet=QUANTITY_ALPHABET, max_size=12))
def test_to_milli_is_the_ceiling(text):
    if _go_verdict(text) != "accept":
        return
    value = parse_quantity(text) * 1000
    milli = to_milli(text)
    assert milli - 1 < value <= milli


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_finite_floats_read_as_their_repr(number):
    assert parse_quantity(number) == Fraction(repr(number))


@given(
    st.integers(min_value=-(10**25), max_value=10**25)
    | st.integers(min_value=-64, max_value=64).map(lambda k: 1000 * 1024**4 * k),
    st.sampled_from(
        ["cpu", "memory", "ephemeral-storage", "storage", "hugepages-1Gi", "nvidia.com/gpu", "pods"]
    ),
)
def test_format_quantity_round_trips(milli, resource):
    text = format_quantity(milli, resource)
    assert to_milli(text) == milli
    assert parse_quantity(text) == Fraction(milli, 1000)
    if resource in ("memory", "storage") and milli and milli % (1000 * 1024) == 0:
        assert text.endswith("i")


GI, TI = 2**30 * 1000, 2**40 * 1000  # milli-units


@pytest.mark.parametrize(
    ("milli", "resource", "shown"),
    [
        (267_200 * GI, "memory", "261Ti"),  # not 267200Gi
        (221_016_647_680_704_000, "memory", "201Ti"),  # not a raw byte count
        (768 * TI, "memory", "768Ti"),
        (1536 * 2**20 * 1000, "ephemeral-storage", "1.5Gi"),
        (int(1023.9 * GI), "memory", "1Ti"),  # rounding up moves to the next suffix
        (512_000, "memory", "512"),
        (1_500, "hugepages-2Mi", "1.5"),
        (86_016_000, "cpu", "86016"),
        (16_500, "cpu", "16.5"),
        (250, "cpu", "0.25"),
        (3_072_000, "nvidia.com/gpu", "3072"),
        (229_376_000, "cpu", "229k"),
        (112_640_000, "pods", "113k"),
        (999_500_000, "cpu", "1M"),
        (0, "memory", "0"),
    ],
)
def test_format_amount_is_short_and_uses_binary_suffixes_for_memory(milli, resource, shown):
    assert format_amount(milli, resource) == shown


def test_amounts_are_limited_in_their_units_terms():
    """10^15 units of a counted resource, but about 8 PiB of a memory-like one (issue 19)."""
    from toposolve.core.limits import MAX_BYTES
    from toposolve.core.quantity import parse_resource_amount

    assert parse_resource_amount("2Pi", "memory") == 2 * 2**50 * 1000
    assert parse_resource_amount("1694Ti", "hugepages-2Mi") == 1694 * 2**40 * 1000
    assert parse_resource_amount(MAX_BYTES, "memory") <= 2**63 - 1
    with pytest.raises(QuantityError, match="largest amount of bytes"):
        parse_resource_amount("9Pi", "memory")
    with pytest.raises(QuantityError, match="1e\\+15 units"):
        parse_resource_amount("2Pi", "nvidia.com/gpu")
    with pytest.raises(QuantityError, match="1e\\+15 units"):
        parse_resource_amount("2Pi")  # no resource named: the stricter limit
