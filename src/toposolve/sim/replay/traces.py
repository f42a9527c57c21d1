"""The trace a replay command names, built on a given cluster."""

from __future__ import annotations

from typing import Any

from toposolve.core.instance import Instance
from toposolve.formats.trace.model import Trace
from toposolve.policy.objective import is_accelerator


def cluster_gpus(cluster: Instance) -> float:
    """Accelerators allocatable in ``cluster`` (whole devices; openb's ``inflate`` capacity)."""
    amounts = (v for n in cluster.nodes for r, v in n.allocatable.items() if is_accelerator(r))
    return sum(amounts) / 1000


def make_trace(spec: str, cluster: Instance, options: dict[str, Any]) -> Trace:
    """The trace ``spec`` names: ``openb``, ``synthetic`` or a trace file (CSV, YAML, JSON)."""
    if spec == "openb" or spec.endswith(".csv"):
        if "inflate" in options and "capacity" not in options:
            options = {**options, "capacity": cluster_gpus(cluster)}
    if spec == "openb":
        from toposolve.formats.trace.openb import openb_trace

        return openb_trace(**options)
    if spec == "synthetic":
        from toposolve.sim.replay.synthetic import synthetic_trace

        return synthetic_trace(cluster, **options)
    from toposolve.formats.trace.files import load_trace_file

    return load_trace_file(spec, **options)
