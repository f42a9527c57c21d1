"""Presentation: the table printer, progress lines, the comparison table, plots."""
