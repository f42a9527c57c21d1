"""The trace a replay command names, built on a given cluster."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from toposolve.core.errors import InputError
from toposolve.core.instance import Instance
from toposolve.core.parallelism import is_accelerator
from toposolve.formats.trace.model import Trace


def cluster_gpus(cluster: Instance) -> float:
    """Accelerators allocatable in ``cluster`` (whole devices; openb's ``inflate`` capacity)."""
    amounts = (v for n in cluster.nodes for r, v in n.allocatable.items() if is_accelerator(r))
    return sum(amounts) / 1000


def check_option_names(builder: Callable[..., Any], options: dict[str, Any], what: str) -> None:
    """Refuse an option that ``builder`` (a trace reader or generator) has no keyword for."""
    known = [name for name, p in inspect.signature(builder).parameters.items()
             if p.kind is inspect.Parameter.KEYWORD_ONLY]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InputError(f"unknown option {unknown[0][:40]!r} of the {what} trace (options: "
                         f"{', '.join(known)})", obj="command line", field="--trace-option")


def make_trace(spec: str, cluster: Instance, options: dict[str, Any]) -> Trace:
    """The trace ``spec`` names: ``openb``, ``synthetic`` or a trace file (CSV, YAML, JSON).

    Every option is checked (its name, then its value) before the trace is read or drawn.
    """
    if spec == "openb" or spec.endswith(".csv"):
        if "inflate" in options and "capacity" not in options:
            options = {**options, "capacity": cluster_gpus(cluster)}
    if spec == "synthetic":
        from toposolve.sim.replay.synthetic import synthetic_trace

        check_option_names(synthetic_trace, options, "synthetic")
        return synthetic_trace(cluster, **options)
    from toposolve.formats.trace.openb import openb_trace

    check_option_names(openb_trace, options, "openb")
    if spec == "openb":
        return openb_trace(**options)
    from toposolve.formats.trace.files import load_trace_file

    return load_trace_file(spec, **options)
