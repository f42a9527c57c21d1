"""Names in the native format, both directions: ``{i}`` patterns and ``first..last`` ranges
(read by :mod:`.native`, written by :mod:`.native_writer`), and one duplicate-name rule for
every reader. The format itself: ``instances/README-native.md``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from string import Formatter

from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_NAME_LENGTH, MAX_PODS
from toposolve.formats.k8s.fields import Field

MAX_RANGE = MAX_PODS  # names one list may expand to: more is a typo, not a cluster
# a format spec's fill, alignment, sign, width and precision (``{i:04d}``); nested fields refused
_FORMAT_SPEC = re.compile(r"^(?:.?[<>=^])?[+\- ]?z?#?0?(\d*)[,_]?(?:\.(\d+))?[a-zA-Z%]?$")
TRAILING_NUMBER = re.compile(r"^(.*?)(\d+)(\D*)$")  # text, last run of digits, text after it


def reject_duplicates(names: Iterable[str], fail: Callable[[int, str], InputError]) -> None:
    """Raise ``fail(position, name)`` for the first name seen twice."""
    seen: set[str] = set()
    for position, name in enumerate(names):
        if name in seen:
            raise fail(position, name)
        seen.add(name)


# -- reading --------------------------------------------------------------------------------


class NamePattern:
    """A name pattern with the single field ``{i}``; raises :class:`InputError` via ``field``."""

    def __init__(self, field: Field) -> None:
        self.text = field.required_text()
        try:
            fields = [f for _, f, _, _ in Formatter().parse(self.text) if f is not None]
        except ValueError as exc:
            raise field.fail(f"bad name pattern {self.text!r}: {exc}") from None
        for f in fields:
            if f != "i":
                raise field.fail(
                    f"name pattern {self.text!r} may only use the field {{i}}, not {{{f}}}")
        if len(self.text) > MAX_NAME_LENGTH:
            raise field.fail(
                f"name pattern is {len(self.text):,} characters, longer than a name may be "
                f"({MAX_NAME_LENGTH})")
        for _, _, spec, _ in Formatter().parse(self.text):
            shape = _FORMAT_SPEC.match(spec or "")
            if shape is None or any(int(n or 0) > MAX_NAME_LENGTH for n in shape.groups()):
                raise field.fail(
                    f"name pattern {self.text[:60]!r}: format spec {spec[:20]!r} would make names "
                    "longer "
                    f"than {MAX_NAME_LENGTH} characters or is not a plain width/precision"
                )
        self.has_index = bool(fields)
        self.field = field
        try:
            self(0)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise field.fail(f"bad name pattern {self.text!r}: {exc}") from None

    def __call__(self, i: int) -> str:
        name = self.text.format(i=i)  # the spec check above keeps this short
        if len(name) > MAX_NAME_LENGTH:
            raise self.field.fail(
                f"name {name[:40]!r}… is longer than {MAX_NAME_LENGTH} characters")
        return name

    def require_index(self, count: int) -> None:
        if count > 1 and not self.has_index:
            raise self.field.fail(f"{count} names from one pattern need {{i}} in {self.text!r}")


def expand_range(text: str) -> list[str] | None:
    """``"a-008..a-011"`` → ``[a-008, a-009, a-010, a-011]``; ``None`` if ``text`` is no range.

    Raises ValueError for a malformed range.
    """
    if ".." not in text:
        return None
    first, _, last = text.partition("..")
    a, b = TRAILING_NUMBER.match(first), TRAILING_NUMBER.match(last)
    if a is None or b is None:
        raise ValueError(f"range {text!r}: both ends must end in a number")
    if (a[1], a[3]) != (b[1], b[3]):
        raise ValueError(f"range {text!r}: both ends must differ only in their last number")
    lo, hi = int(a[2]), int(b[2])
    if hi < lo:
        raise ValueError(f"range {text!r} runs backwards")
    if hi - lo + 1 > MAX_RANGE:
        raise ValueError(f"range {text!r} is longer than {MAX_RANGE:,} names")
    if len(a[2]) == len(b[2]):
        width = len(a[2])
    elif a[2].startswith("0") and len(a[2]) > 1:  # a lone 0 is no padding: x-0..x-15
        raise ValueError(f"range {text!r}: zero-padded ends must have the same width")
    else:
        width = 0
    return [f"{a[1]}{n:0{width}d}{a[3]}" for n in range(lo, hi + 1)]


# -- writing --------------------------------------------------------------------------------


def escape_braces(text: str) -> str:
    """``text`` as a pattern that formats to itself (braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def name_pattern(name: str) -> tuple[str, int] | None:
    """``dgx-0042`` → (``dgx-{i:04d}``, 42); ``n7`` → (``n{i}``, 7); ``None`` without a number."""
    m = TRAILING_NUMBER.match(name)
    if m is None:
        return None
    digits = m[2]
    field = f"{{i:0{len(digits)}d}}" if len(digits) > 1 and digits.startswith("0") else "{i}"
    return escape_braces(m[1]) + field + escape_braces(m[3]), int(digits)


def compress_names(names: Sequence[str | None]) -> list[str | None]:
    """Replace runs of three or more consecutive names by ``first..last`` ranges."""
    out: list[str | None] = []
    i = 0
    while i < len(names):
        first = names[i]
        j = i + 1
        if first is not None and ".." not in first:
            while j < len(names) and names[j] is not None and _follows(names[j - 1], names[j]):
                j += 1
        if j - i >= 3:
            text = f"{first}..{names[j - 1]}"
            if expand_range(text) == list(names[i:j]):
                out.append(text)
                i = j
                continue
            j = i + 1
        out.extend(names[i:j])
        i = j
    return out


def _follows(prev: str, name: str) -> bool:
    a, b = TRAILING_NUMBER.match(prev), TRAILING_NUMBER.match(name)
    return (a is not None and b is not None and (a[1], a[3]) == (b[1],
            b[3]) and int(b[2]) == int(a[2]) + 1)
