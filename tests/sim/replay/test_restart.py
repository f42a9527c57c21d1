"""``restart=keep|lose|checkpoint:INTERVAL``: what a restarted job keeps of its progress."""

from __future__ import annotations

import pytest

from toposolve.core.errors import InputError
from toposolve.sim.replay.restart import Restart, parse_restart


def bad(message):
    return InputError(message, obj="command line", field="--x")


@pytest.mark.parametrize("progress", [0.0, 59.0, 1800.0, 1801.0, 5399.0, 5400.0, 9000.5])
def test_checkpoint_keeps_the_last_multiple_of_the_interval(progress):
    kept = parse_restart("checkpoint:30m", bad).kept(progress)
    assert kept % 1800 == 0 and kept <= progress < kept + 1800
    assert Restart("keep").kept(progress) == progress and Restart("lose").kept(progress) == 0


def test_a_checkpoint_falling_on_the_progress_counts_despite_float_sums():
    assert parse_restart("checkpoint:0.1", bad).kept(0.7 - 0.4) == pytest.approx(0.3)


def test_parsing():
    assert parse_restart("keep", bad) == Restart("keep")
    assert parse_restart("checkpoint:2h", bad) == Restart("checkpoint", 7200.0)
    assert parse_restart("checkpoint:90", bad).interval == 90.0
    for text in ("checkpoint", "checkpoint:", "checkpoint:0", "checkpoint:-1h", "often", ""):
        with pytest.raises(InputError) as err:
            parse_restart(text, bad)
        assert "\n" not in str(err.value) and "--x" in str(err.value)


def test_checkpoint_costs_parse_in_any_order_and_default_to_zero():
    costs = Restart("checkpoint", 1800.0, save=120.0, restore=300.0)
    assert parse_restart("checkpoint:30m:save=2m:restore=5m", bad) == costs
    assert parse_restart("checkpoint:30m:restore=300:save=120", bad) == costs
    assert parse_restart("checkpoint:30m:save=0:restore=0", bad) == Restart("checkpoint", 1800.0)


@pytest.mark.parametrize(("text", "named"), [
    ("checkpoint:30m:save=", "save="), ("checkpoint:30m:save=-1m", "save="),
    ("checkpoint:30m:restore=soon", "restore="), ("checkpoint:30m:pause=2m", "pause=2m"),
    ("checkpoint:30m:2m", "2m"), ("checkpoint:30m:save=1m:save=2m", "save= given twice"),
    ("checkpoint:0:save=1m", "positive interval")])
def test_bad_checkpoint_costs_are_one_line_errors_naming_the_option(text, named):
    with pytest.raises(InputError) as err:
        parse_restart(text, bad)
    message = str(err.value)
    assert "\n" not in message and "--x" in message and named in message


def test_saves_come_after_each_interval_of_work_but_not_at_the_end():
    rule = parse_restart("checkpoint:25m:save=1m", bad)
    # 10 h of work: checkpoints after 25, 50, … 575 min of work (23), none at 600
    assert rule.overhead(36000.0) == 23 * 60
    assert parse_restart("checkpoint:30m:save=1m", bad).overhead(36000.0) == 19 * 60
    assert rule.overhead(1500.0) == 0 and rule.overhead(1501.0) == 60
    assert rule.overhead(None) == 0 and Restart("keep").overhead(36000.0) == 0
    # a checkpoint is complete every 26 min of run time (25 of work, 1 of saving)
    assert rule.kept(3 * 1560 - 1) == 2 * 1560 and rule.kept(3 * 1560) == 3 * 1560
