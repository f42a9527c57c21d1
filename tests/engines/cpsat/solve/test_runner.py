"""The stage runner's arithmetic (:mod:`toposolve.engines.cpsat.solve.runner`): how stages share the
budget and how a stage expression is read from a hint."""

from __future__ import annotations

import pytest
from ortools.sat.python import cp_model

from toposolve.engines.cpsat.solve.runner import expr_value, stage_shares


def test_a_single_stage_takes_the_whole_budget():
    assert stage_shares(1) == [1.0]


def test_the_first_stage_gets_twice_what_each_later_stage_gets_and_the_last_takes_what_is_left():
    shares = stage_shares(3)
    assert shares == [0.5, 0.5, 1.0]
    remaining, spent = 1.0, []
    for share in shares:  # every stage uses its whole share
        spent.append(remaining * share)
        remaining -= spent[-1]
    assert spent == pytest.approx([0.5, 0.25, 0.25]) and remaining == pytest.approx(0.0)


def test_a_stage_expression_is_read_from_the_hint_values():
    model = cp_model.CpModel()
    x, y = model.new_int_var(0, 5, "x"), model.new_int_var(0, 5, "y")
    expr = 2 * x + 3 * y + 1
    assert expr_value(expr, {x.index: 1, y.index: 2}) == 9
    assert expr_value(expr, {x.index: 1}) is None  # y has no value: unknown, not 0
    assert expr_value(7, {}) == 7  # a stage with nothing to optimise is a constant
