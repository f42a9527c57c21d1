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
