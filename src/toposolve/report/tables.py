"""The one table printer: every text table toposolve prints goes through :func:`format_table`."""

from __future__ import annotations

from collections.abc import Collection, Sequence


def format_table(rows: Sequence[Sequence[str]], *, widths: Sequence[int] | None = None,
                 left: Collection[int] = (), sep: str = "  ") -> str:
    """Rows of cells as aligned text lines.

    Parameters
    ----------
    rows
        The table, header row first; every row has one cell per column.
    widths
        The width of each column; None: each column as wide as its widest cell.
    left
        Columns aligned left (the others are aligned right).
    sep
        Text between two columns.

    Returns
    -------
    str
        One line per row, without a trailing newline.
    """
    if widths is None:
        widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))] if rows else []
    return "\n".join(sep.join(cell.ljust(w) if c in left else cell.rjust(w) for c, (cell,
            w) in enumerate(zip(row, widths, strict=True))) for row in rows)
