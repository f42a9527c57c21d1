"""Engine mirroring KAI-Scheduler's topology-aware allocation (see ``docs/kai-fidelity.md``)."""

from toposolve.engines.kai.engine import KaiEngine
from toposolve.engines.kai.run import run_kai

__all__ = ["KaiEngine", "run_kai"]


def solve(problem, profile, options, hint=None):
    """The engine contract (:mod:`toposolve.engines.contract`): :func:`run_kai` (no warm start,
    no preemption mirrored; constraints in a crossing Topology's tree measured in that tree)."""
    from toposolve.engines.common.mirror import mirror_result

    return mirror_result(problem, profile, options, run_kai, "kai", crossing=True)
