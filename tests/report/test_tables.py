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


def test_bench_table_aligns_instance_and_engine_left():
    from toposolve.report.bench_table import bench_table

    metrics = {"gap": None, "mean_domain_tier": 1.5, "status": "OPTIMAL", "jobs_placed": 3,
               "accelerators_placed": 24, "elapsed_s": 0.5}
    lines = bench_table([{"instance": "tiny", "nodes": 4, "jobs": 3,
                          "engines": {"cpsat": metrics}}]).splitlines()
    assert lines[0].startswith("instance") and lines[0].endswith("time s")
    assert lines[1] == "tiny" + " " * 18 + "      4     3  cpsat        OPTIMAL       3      24" \
        "   1.50       -     0.50"
