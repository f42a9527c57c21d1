"""CP-SAT run settings and raw parameter overrides (engines/cpsat/solve/parameters.py)."""

from __future__ import annotations

import pytest

from toposolve.core.errors import InputError
from toposolve.engines.cpsat.solve.parameters import (
    PORTFOLIO_BATCH,
    SEQUENTIAL_UP_TO,
    Settings,
    sat_overrides,
)


def settings(workers: int = 1, deterministic: bool = True, **overrides) -> Settings:
    return Settings(
        time_limit=10,
        workers=workers,
        seed=7,
        deterministic=deterministic,
        log=False,
        overrides=sat_overrides(overrides),
    )


def test_deterministic_mode_counts_deterministic_time_under_a_wall_cap():
    p = settings(workers=2).parameters(3.0, wall_cap=5.0)
    assert (p.num_workers, p.max_deterministic_time, p.max_time_in_seconds) == (
        1,
        3.0,
        5.0,
    )  # sequential
    assert (
        p.random_seed == 7 and p.symmetry_level == 0 and not p.fix_variables_to_their_hinted_value
    )
    wide = settings(workers=8).parameters(3.0)
    assert (wide.num_workers, wide.interleave_search) == (8, True)
    assert wide.max_time_in_seconds == 10 * 10 + 60  # no cap given: a generous wall-clock backstop


def _without_threads(p) -> dict:
    return {fd.name: value for fd, value in p.ListFields() if fd.name != "num_workers"}


@pytest.mark.parametrize("workers", [3, 4, 16, 64, 1024])
def test_portfolio_is_the_same_whatever_the_thread_count(workers):
    """Every default of OR-Tools' portfolio that follows num_workers is pinned: only the number
    of threads differs between worker counts."""
    three = settings(workers=3).parameters(3.0, wall_cap=5.0)
    many = settings(workers=workers).parameters(3.0, wall_cap=5.0)
    assert many.num_workers == workers and three.num_workers == 3
    assert _without_threads(many) == _without_threads(three)
    assert (many.interleave_search, many.interleave_batch_size) == (True, PORTFOLIO_BATCH)
    assert many.HasField("num_violation_ls") and many.num_violation_ls == 0
    assert (many.use_lb_relax_lns, many.variables_shaving_level, many.shared_tree_num_workers) == (
        False, 0, 0)
    assert list(many.ignore_subsolvers) == ["fj*", "fs*"]  # first-solution subsolvers


def test_sequential_up_to_two_workers_and_no_portfolio_pins():
    for workers in range(1, SEQUENTIAL_UP_TO + 1):
        p = settings(workers=workers).parameters(3.0, wall_cap=5.0)
        assert p.num_workers == 1 and not p.interleave_search
        assert not p.HasField("interleave_batch_size") and not p.ignore_subsolvers


def test_parallel_mode_counts_wall_clock_seconds():
    p = settings(workers=8, deterministic=False).parameters(3.0)
    assert (p.num_workers, p.max_time_in_seconds, p.interleave_search) == (8, 3.0, False)
    assert settings(deterministic=False).parameters(0.0).max_time_in_seconds == 0.01  # never zero


def test_raw_parameters_are_applied_last():
    p = settings(workers=2, linearization_level=0, num_workers=3).parameters(1.0)
    assert (p.linearization_level, p.num_workers) == (0, 3)


def test_enum_values_by_name_and_repeated_fields():
    p = sat_overrides(
        {"preferred_variable_order": "IN_RANDOM_ORDER", "subsolvers": ["core", "no_lp"]}
    )
    assert p.preferred_variable_order == p.IN_RANDOM_ORDER and list(p.subsolvers) == [
        "core",
        "no_lp",
    ]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"no_such_parameter": 1}, "unknown CP-SAT parameter 'no_such_parameter'"),
        ({"log_search_progress": 1}, "expected true or false"),
        ({"preferred_variable_order": "SIDEWAYS"}, "invalid value 'SIDEWAYS' (one of:"),
        ({"max_time_in_seconds": float("nan")}, "invalid value nan"),
        ({"num_workers": 10**6}, "solver.parameters.num_workers"),
        ({"random_seed": "seven"}, "invalid value 'seven'"),
    ],
)
def test_bad_overrides_are_input_errors_naming_the_parameter(raw, message):
    with pytest.raises(InputError, match="solver.parameters") as err:
        sat_overrides(raw)
    assert message in str(err.value)
