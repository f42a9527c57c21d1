"""NVL72 racks with failed trays: the repair family of ``benchmarks/bench_defrag.py --repair``.

Every rack (18 trays of 4 GPUs, tier 1) keeps ``spares`` trays idle (drawn per rack from the
given choices) and fills the rest with running jobs at random trays: one gang per size in
``gang_trays`` (whole trays, hard-limited to one rack, priority class ``high``) and one-tray
jobs without a topology rule (``low``). Then ``round(fail_rate × trays)`` (at least one) trays
chosen at random fail. A gang **has a spare** when its rack's idle trays that did not fail are
at least the gangs' pods lost in that rack: then it can be repaired in place with no move.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from toposolve.core.instance import Instance, Job, NetworkTopology, Task
from toposolve.core.topology import build_topology
from toposolve.generate import generate

GPU = "nvidia.com/gpu"


@dataclass
class RepairCase:
    """One cluster with its failed trays (:func:`nvl72_repair`)."""

    instance: Instance
    failed: list[str]  # tray names
    gangs: int  # running gangs (rack-limited)
    singles: int  # running one-tray jobs
    with_spare: list[str] = field(default_factory=list)  # keys of hit gangs with a spare
    hit: list[str] = field(default_factory=list)  # keys of gangs with a pod on a failed tray


def _job(name: str, trays: list[str], *, gang: bool) -> Job:
    limit = NetworkTopology(mode="hard", highest_tier_allowed=1) if gang else None
    return Job(name=name, min_available=len(trays), network_topology=limit,
               priority_class="high" if gang else "low",
               tasks=[Task(name="worker", replicas=len(trays), requests={GPU: "4"},
                           running=dict(enumerate(trays)))])


def nvl72_repair(racks: int = 32, *, spares: tuple[int, ...] = (2,), fail_rate: float = 0.02,
                 gang_trays: tuple[int, ...] = (8, 4), seed: int = 0) -> RepairCase:
    """``racks`` NVL72 racks filled as the module says, with failed trays.

    Parameters
    ----------
    racks
        Racks of 18 trays.
    spares
        Idle trays per rack, drawn per rack from these choices.
    fail_rate
        Fraction of the trays that fail.
    gang_trays
        Sizes of the rack-limited gangs of every rack.
    seed
        The generator's seed.
    """
    rng = np.random.default_rng(seed)
    base = generate("nvl72", nodes=racks * 18, seed=seed)
    topo = build_topology(base.nodes, base.hypernodes)
    home = np.asarray(topo.node_home)
    names = [n.name for n in base.nodes]
    jobs: list[Job] = []
    idle: dict[int, list[str]] = {}
    gangs_in: dict[int, list[Job]] = {}
    for rack in sorted(set(home.tolist())):
        trays = [names[n] for n in rng.permutation(np.flatnonzero(home == rack))]
        spare = int(rng.choice(spares))
        idle[rack], busy = trays[:spare], trays[spare:]
        gangs_in[rack] = []
        for size in gang_trays:
            gangs_in[rack].append(_job(f"gang-{len(jobs)}", busy[:size], gang=True))
            jobs.append(gangs_in[rack][-1])
            busy = busy[size:]
        jobs += [_job(f"single-{len(jobs) + i}", [t], gang=False) for i, t in enumerate(busy)]
    count = max(1, round(fail_rate * len(names)))
    failed = sorted(rng.choice(names, size=count, replace=False).tolist())
    dead = set(failed)
    case = RepairCase(base.model_copy(update={"jobs": jobs}), failed,
                      sum(len(g) for g in gangs_in.values()), len(jobs) - sum(
                          len(g) for g in gangs_in.values()))
    for rack, gangs in gangs_in.items():
        lost = {g.key: sum(t in dead for t in g.tasks[0].running.values()) for g in gangs}
        hit = [key for key, n in lost.items() if n]
        case.hit += hit
        if sum(t not in dead for t in idle[rack]) >= sum(lost.values()):
            case.with_spare += hit
    return case
