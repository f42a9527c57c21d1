"""Engines by name. Adding an engine = one package with a ``solve`` function (see
:mod:`toposolve.engines.contract`) + one line in :data:`ENGINES`.

Entries name the function as ``"module:function"`` and are imported on first use, so the command
line does not pay for OR-Tools when it runs the heuristic.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

from toposolve.engines.contract import EngineSolve


@dataclass(frozen=True)
class EngineEntry:
    """One registered engine.

    ``target``: ``"package.module:function"`` of its ``solve``. ``warm_start``: the engine is
    given the baseline's plan as ``hint`` and :func:`toposolve.solve.solve_problem` falls back to
    that plan when the engine finds nothing at least as good. ``aliases``: other names accepted
    for it (a plan keeps the name the user gave). ``max_gang_depth``: the deepest gang tree the
    engine honours (None: any); deeper problems are refused in one line
    (:func:`toposolve.engines.contract.require_depth`). ``device_shares``: the engine places
    pods on devices (per-device sharing); others refuse such problems in one line
    (:func:`toposolve.engines.contract.require_devices`); ``device_evictions``: its evictions
    free the victims' devices (else ``--evict`` with devices is refused); ``missing_levels``: it
    words a job constrained at a level its tree lacks as its scheduler does (else that job's
    ``scheduler_reason`` is dropped, :mod:`toposolve.engines.common.missing_level`)."""

    name: str
    target: str
    warm_start: bool = False
    aliases: tuple[str, ...] = ()
    summary: str = ""
    max_gang_depth: int | None = 2
    device_shares: bool = False
    device_evictions: bool = False
    missing_levels: bool = False

    def load(self) -> EngineSolve:
        module, _, attr = self.target.partition(":")
        return getattr(import_module(module), attr)


BASELINE = "volcano"  # the Volcano mirror: every warm-started engine's hint and fallback

ENGINES: tuple[EngineEntry, ...] = (
    EngineEntry(
        "volcano",
        "toposolve.engines.volcano:solve",
        aliases=("heuristic",),
        summary="greedy mirror of Volcano's allocate (and preempt/reclaim) actions",
        max_gang_depth=None,  # deeper trees: a stricter two-level stand-in (engines/two_levels.py)
        device_shares=True,
        device_evictions=True,  # an eviction frees its victims' devices (volcano/state.py)
    ),
    EngineEntry(
        "kueue",
        "toposolve.engines.kueue:solve",
        summary="mirror of Kueue's Topology-Aware Scheduling (BestFit / LeastFreeCapacity, quotas)",
        # the job over a podset's own level over 1-3 layers of slices (TASMultiLayerTopology)
        max_gang_depth=5,
        missing_levels=True,  # NoMatchingFlavor: "Flavor … does not contain the requested level"
        # TAS admits by pooled counts; the pods then take devices on their nodes (kueue/devices)
        device_shares=True,
    ),
    EngineEntry(
        "kai",
        "toposolve.engines.kai:solve",
        summary="mirror of KAI-Scheduler's topology plugin (bin-packed domains, subgroup DFS)",
        max_gang_depth=None,
        device_shares=True,  # fractional GPUs on devices, KAI's gpupack (engines/common/devices)
    ),
    EngineEntry(
        "kube",
        "toposolve.engines.kube:solve",
        summary="mirror of kube-scheduler's Topology-Aware Workload Scheduling (KEP-5732)",
        # CompositePodGroup hierarchies (at most 4 levels: PodGroups at depth 6) are mirrored;
        # other trees stay pending with a reason
        max_gang_depth=6,
        device_shares=True,  # a node passes only if a device fits: the device plugin's admission
    ),
    EngineEntry(
        "cpsat",
        "toposolve.engines.cpsat:solve",
        warm_start=True,
        summary="OR-Tools CP-SAT over the whole pending queue, warm-started from the Volcano "
        "mirror",
        # GangNodes: nested hard domains and gangs per level (cpsat/model/gang_tree.py)
        max_gang_depth=None,
        device_shares=True,  # y variables per device (cpsat/model/devices.py)
        device_evictions=True,  # an evicted pod gives its devices back (cpsat/model/devices.py)
    ),
)


def engine_names(*, aliases: bool = True) -> tuple[str, ...]:
    """Names accepted by :func:`get_engine` (registry order; aliases after their engine)."""
    return tuple(n for e in ENGINES for n in (e.name, *(e.aliases if aliases else ())))


def get_engine(name: str) -> EngineEntry:
    """The entry registered under ``name`` or one of its aliases; ``ValueError`` otherwise."""
    for entry in ENGINES:
        if name == entry.name or name in entry.aliases:
            return entry
    raise ValueError(f"unknown engine {name!r} (choose from {', '.join(engine_names())})")
