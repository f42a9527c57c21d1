"""What a job's progress becomes when a replay moves, repairs or evicts it (``restart=``).

``keep`` resumes where it was, ``lose`` starts over, ``checkpoint:INTERVAL`` resumes from the
last checkpoint: checkpoints are taken every INTERVAL of the job's run time, counted from its
start (run time already saved counts). Rationale: ``docs/replay.md``, "Checkpoint intervals".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from toposolve.formats.trace.model import parse_duration
from toposolve.sim.replay.options import Bad

MODES = ("lose", "keep", "checkpoint:INTERVAL")


@dataclass(frozen=True)
class Restart:
    """A restart rule: ``mode`` is ``keep``, ``lose`` or ``checkpoint`` (with ``interval``
    seconds of run time between checkpoints)."""

    mode: str
    interval: float | None = None

    def kept(self, progress: float) -> float:
        """The run seconds a job that has run ``progress`` seconds keeps when it restarts."""
        if self.mode == "keep":
            return progress
        if self.mode == "lose":
            return 0.0
        assert self.interval is not None
        # a checkpoint falling exactly at ``progress`` counts (1e-9: float sums of run times)
        return math.floor(progress / self.interval + 1e-9) * self.interval


def parse_restart(text: str, bad: Bad) -> Restart:
    """``lose``, ``keep`` or ``checkpoint:INTERVAL`` (seconds, or ``30m``, ``2h``…) as a
    :class:`Restart`; ``bad(message)`` for anything else."""
    if text in ("lose", "keep"):
        return Restart(text)
    mode, sep, interval = text.partition(":")
    if mode == "checkpoint" and sep:
        try:
            seconds = parse_duration(interval.strip())
        except ValueError:
            seconds = -1.0
        if 0 < seconds < math.inf:
            return Restart("checkpoint", seconds)
        raise bad(f"restart=checkpoint:INTERVAL needs a positive interval (30m, 2h…), "
                  f"not {interval.strip()!r}")
    raise bad(f"restart must be one of {', '.join(MODES)}, not {text!r}")
