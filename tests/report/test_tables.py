"""The one table printer."""

from toposolve.report.tables import format_table


def test_columns_fit_their_widest_cell_and_align_right():
    text = format_table([["engine", "jobs"], ["volcano", "7"], ["cpsat", "12"]])
    assert text.splitlines() == [" engine  jobs", "volcano     7", "  cpsat    12"]


def test_fixed_widths_left_columns_and_no_separator():
    text = format_table([["metric", "a"], ["gap", "0.1"]], widths=[8, 5], left={0}, sep="")
    assert text.splitlines() == ["metric      a", "gap       0.1"]


def test_an_empty_table_is_empty_text():
    assert format_table([]) == ""
