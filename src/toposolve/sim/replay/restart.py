"""What a job's progress becomes when a replay moves, repairs or evicts it (``restart=``).

``keep`` resumes where it was, ``lose`` starts over, ``checkpoint:INTERVAL`` resumes from the
last checkpoint: checkpoints are taken every INTERVAL of the job's run time, counted from its
start (run time already saved counts). ``checkpoint:INTERVAL:save=S:restore=R`` adds costs:
each checkpoint takes S of run time (a job's run grows by S per checkpoint it takes before its
end) and a job restarted from a checkpoint spends R before making progress again. Rationale:
``docs/replay.md``, "Checkpoint intervals" and "Checkpoint costs".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from toposolve.formats.trace.model import parse_duration
from toposolve.sim.replay.options import Bad

MODES = ("lose", "keep", "checkpoint:INTERVAL[:save=S][:restore=R]")
COSTS = ("save", "restore")


@dataclass(frozen=True)
class Restart:
    """A restart rule: ``mode`` is ``keep``, ``lose`` or ``checkpoint`` (with ``interval``
    seconds of work between checkpoints, ``save`` seconds each checkpoint takes and ``restore``
    seconds a job restarted from a checkpoint spends before making progress)."""

    mode: str
    interval: float | None = None
    save: float = 0.0
    restore: float = 0.0

    def kept(self, progress: float) -> float:
        """The run seconds a job that has run ``progress`` seconds (checkpoint saves included)
        keeps when it restarts."""
        if self.mode == "keep":
            return progress
        if self.mode == "lose":
            return 0.0
        assert self.interval is not None
        # a checkpoint is complete every interval + save of run time; one falling exactly at
        # ``progress`` counts (1e-9: float sums of run times)
        period = self.interval + self.save
        return math.floor(progress / period + 1e-9) * period

    def overhead(self, duration: float | None) -> float:
        """Run seconds a job of ``duration`` seconds of work spends saving checkpoints: one
        after every ``interval`` of work before its end (none at the end itself)."""
        if self.mode != "checkpoint" or not self.save or duration is None:
            return 0.0
        assert self.interval is not None
        return self.save * max(0, math.ceil(duration / self.interval - 1e-9) - 1)


def parse_restart(text: str, bad: Bad) -> Restart:
    """``lose``, ``keep`` or ``checkpoint:INTERVAL[:save=S][:restore=R]`` (durations: seconds,
    or ``30m``, ``2h``…) as a :class:`Restart`; ``bad(message)`` for anything else."""
    if text in ("lose", "keep"):
        return Restart(text)
    mode, *parts = text.split(":")
    if mode == "checkpoint" and parts:
        interval = parts[0].strip()
        seconds = _duration(interval)
        if not 0 < seconds < math.inf:
            raise bad(f"restart=checkpoint:INTERVAL needs a positive interval (30m, 2h…), "
                      f"not {interval!r}")
        return Restart("checkpoint", seconds, **_costs(parts[1:], bad))
    raise bad(f"restart must be one of {', '.join(MODES)}, not {text!r}")


def _duration(text: str) -> float:
    """``text`` as seconds; -1 when it is no duration."""
    try:
        return parse_duration(text)
    except ValueError:
        return -1.0


def _costs(parts: list[str], bad: Bad) -> dict[str, float]:
    """``save=S`` / ``restore=R`` items of a checkpoint rule as keyword arguments."""
    costs: dict[str, float] = {}
    for part in parts:
        key, sep, value = (x.strip() for x in part.partition("="))
        if key not in COSTS or not sep:
            raise bad(f"restart=checkpoint:INTERVAL takes save=DURATION and restore=DURATION "
                      f"after the interval, not {part.strip()!r}")
        if key in costs:
            raise bad(f"restart=checkpoint:INTERVAL: {key}= given twice")
        seconds = _duration(value)
        if not 0 <= seconds < math.inf:
            raise bad(f"restart=checkpoint:INTERVAL:{key}= needs a duration of 0 or more "
                      f"(2m, 30s…), not {value!r}")
        costs[key] = seconds
    return costs
