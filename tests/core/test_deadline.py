"""Deadline: what is left of a limit, when it expires, deterministic against wall-clock."""

from __future__ import annotations

import time

import pytest

from toposolve.core.deadline import Deadline


def test_wall_clock_arithmetic():
    d = Deadline(10.0, started=100.0)
    assert d.wall_deadline == 110.0
    assert d.elapsed(now=103.0) == 3.0
    assert d.wall_left(now=103.0) == 7.0
    assert d.remaining(used=5.0, now=103.0) == 7.0  # wall mode: deterministic units ignored
    assert not d.expired(now=109.9) and d.expired(now=110.0)


def test_deterministic_limit_counts_units_and_the_wall_cap_only_stops():
    d = Deadline(2.0, started=100.0, deterministic=True, wall_cap=60.0)
    assert d.remaining(used=0.5, now=150.0) == 1.5  # load on the machine does not count
    assert d.wall_deadline == 160.0
    assert not d.expired(now=150.0) and d.expired(now=160.5)
    assert Deadline(2.0, started=100.0, deterministic=True).wall_deadline == 102.0


def test_started_defaults_to_now_and_a_past_start_has_expired():
    before = time.perf_counter()
    assert before <= Deadline(1.0).started <= time.perf_counter()
    assert Deadline(1.0, started=time.perf_counter() - 2).expired()


def test_negative_limits_are_refused():
    with pytest.raises(ValueError, match="time limit"):
        Deadline(-1.0)
    with pytest.raises(ValueError, match="wall-clock cap"):
        Deadline(1.0, wall_cap=float("nan"))
