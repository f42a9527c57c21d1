"""The progress lines ``toposolve solve`` prints (report/progress.py)."""

from __future__ import annotations

import sys

from toposolve.engines.contract import ProgressEvent
from toposolve.report.progress import LinePrinter, cut_short_line, stages_line


def test_the_cut_short_line_lists_what_the_time_limit_cut():
    assert cut_short_line(["model build (variables) (at 4.7 s)"]) == (
        "time limit: cut short: model build (variables) (at 4.7 s)"
    )
    assert cut_short_line([]) is None


def test_the_final_line_names_an_unproven_stage_and_its_gap():
    stages = [
        {"stage": "placed", "status": "OPTIMAL", "gap": 0.0},
        {"stage": "spread", "status": "FEASIBLE", "gap": 0.125},
        {"stage": "fragmentation", "status": "UNKNOWN", "gap": None, "kept_incumbent": True},
    ]
    assert stages_line("cpsat FEASIBLE", stages) == (
        "cpsat FEASIBLE: placed OPTIMAL, spread FEASIBLE gap 12.5 %, fragmentation UNKNOWN "
        "(incumbent kept) (no bound)"
    )


def test_after_refinement_the_final_line_shows_the_returned_plans_round():
    """Issue 19 §2: round 0's `placed` OPTIMAL belonged to counts that did not pack; the plan
    came from round 1, so its stages are the ones shown, labelled."""
    stages = [
        {"stage": "placed", "round": 0, "status": "OPTIMAL", "gap": 0.0},
        {"stage": "placed", "round": 1, "status": "FEASIBLE", "gap": 0.25},
        {"stage": "spread", "round": 1, "status": "OPTIMAL", "gap": 0.0},
    ]
    assert stages_line("cpsat FEASIBLE", stages, plan_round=1) == (
        "cpsat FEASIBLE: round 1 of 2: placed FEASIBLE gap 25.0 %, spread OPTIMAL"
    )
    assert stages_line("cpsat FALLBACK", stages).startswith("cpsat FALLBACK: round 1 of 2: ")


def test_the_printer_keeps_stage_lines_and_thins_solutions(capsys):
    printer = LinePrinter(sys.stderr)
    printer(ProgressEvent(1, 2, 0.1, "placed", 1.0, "solution", "a"))
    printer(ProgressEvent(1, 2, 0.2, "placed", 1.0, "solution", "b"))  # within a second: dropped
    printer(ProgressEvent(1, 1, 0.3, "placed", 0.0, "stage", "c"))
    assert capsys.readouterr().err.split() == ["a", "c"]
