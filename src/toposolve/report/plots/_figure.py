"""Private helpers shared by the plot modules: axes creation and number formatting."""

from __future__ import annotations

from typing import Any


def pyplot() -> Any:
    """``matplotlib.pyplot``, or an ImportError that says which extra to install."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "toposolve's plots need matplotlib: pip install 'toposolve[plot]'"
        ) from None
    return plt


def axes_or_new(ax: Any, size: tuple[float, float]) -> Any:
    """``ax`` itself, or the Axes of a new pyplot figure of ``size`` inches.

    pyplot (not a bare ``Figure``) so that notebooks display the figure inline; the backend is
    whatever matplotlib chose (Agg when there is no display).
    """
    if ax is not None:
        return ax
    _, new = pyplot().subplots(figsize=size, layout="constrained")
    return new


def compact(value: float | int | None) -> str:
    """A short label for a bar: ``1,557``, ``98.5M``, ``1.19``, ``-``."""
    if value is None:
        return "-"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.2f}"
    number = abs(float(value))
    for limit, suffix in ((1e9, "G"), (1e6, "M")):
        if number >= limit:
            return f"{value / limit:.1f}{suffix}"
    return f"{int(value):,}"


def axes_width_points(ax: Any) -> float:
    """Width of ``ax`` on the page in points (used to decide which labels fit)."""
    # display pixels → points; before the layout engine runs this is an estimate, which is
    # all a "does this label fit" decision needs
    root = ax.figure
    while getattr(root, "figure", root) not in (None, root):  # a SubFigure's parent chain
        root = root.figure
    return ax.get_window_extent().width * 72.0 / root.dpi


def record_field(record: Any, name: str) -> Any:
    """A field of a replay record, whether it is a mapping (read from JSON) or an object."""
    return record[name] if isinstance(record, dict) else getattr(record, name)


def percent_formatter() -> Any:
    """A matplotlib formatter that shows fractions as percentages."""
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(1.0)
