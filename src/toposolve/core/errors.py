"""Input errors: one line, naming the file, the object and the field."""

from __future__ import annotations


class InputError(Exception):
    """Bad input: rendered as ``file: object: field: what is wrong`` (missing parts left out).

    The CLI prints ``str(err)`` on one line and exits with status 2; Python callers can read the
    parts from the attributes.
    """

    def __init__(self, message: str, *, file: str | None = None, obj: str | None = None,
                 field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.obj = obj
        self.field = field

    def located(self, *, file: str | None = None, obj: str | None = None) -> InputError:
        """Fill in the file/object if the raiser did not know them."""
        return InputError(self.message, file=self.file or file, obj=self.obj or obj,
                          field=self.field)

    def __str__(self) -> str:
        parts = [p for p in (self.file, self.obj, self.field) if p]
        text = " ".join(self.message.split())  # always one line
        return ": ".join([*parts, text])


def require_type(value: object, expected: type, name: str) -> None:
    """Raise :class:`TypeError` naming parameter ``name`` unless ``value`` is an ``expected``.

    Public entry points call it first, so that ``None`` or a dict where an Instance or a Plan
    belongs fails there, in the caller's terms, not as an AttributeError frames deeper.
    """
    if not isinstance(value, expected):
        raise TypeError(f"{name} must be a toposolve {expected.__name__}, not "
                        f"{type(value).__name__} (see toposolve.{expected.__name__})")
