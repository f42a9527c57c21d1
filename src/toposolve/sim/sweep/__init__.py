"""What-if sweeps: ``toposolve.sim.sweep.run_sweep(spec)`` / ``toposolve sweep SPEC.yaml -o DIR``.

A spec (:mod:`.spec`) is a base scenario and a grid of variations — cluster variants (nodes,
drained or removed HyperNodes, node shapes), workload (load, mix, seed…), engines, profiles.
Each scenario is replayed (or solved) by :mod:`.scenario`; scenarios run in parallel on this
machine (:mod:`.local`) or as Ray tasks (:mod:`.ray_runner`, ``--ray ADDRESS`` or
``RAY_ADDRESS``), with the same rows either way. The result is one table: CSV and JSON (and
Parquet with pyarrow), a pandas DataFrame from :meth:`SweepResult.frame`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from toposolve.core.limits import MAX_WORKERS, count_problem
from toposolve.sim.sweep.local import run_local
from toposolve.sim.sweep.preflight import check_scenarios
from toposolve.sim.sweep.progress import Progress
from toposolve.sim.sweep.ray_runner import run_ray
from toposolve.sim.sweep.result import SweepResult
from toposolve.sim.sweep.spec import SweepSpec, load_spec, spec_from_dict


def run_sweep(spec: SweepSpec | dict | str | Path, *, workers: int | None = None,
              ray: str | None = None,
              num_cpus: int | None = None, progress: Any = None,
              isolate: bool = False) -> SweepResult:
    """Run every scenario of ``spec`` (a :class:`SweepSpec`, its dict, or a YAML path).

    Every scenario is checked (:func:`~toposolve.sim.sweep.preflight.check_scenarios`) before
    the first runs. ``ray``: a Ray address (``"local"`` starts one with ``num_cpus``); default
    ``$RAY_ADDRESS`` when set, else this machine with ``workers`` processes (default: its CPUs).
    ``progress``: a callable taking one line per finished scenario (default: stderr).
    ``isolate``: run scenarios in worker processes even with ``workers=1``, so that a signal
    stops a scenario at once (the CLI does).
    Raises TypeError or ValueError for a bad argument, InputError for a bad spec.
    """
    check_arguments(workers=workers, num_cpus=num_cpus, ray=ray, progress=progress)
    if not isinstance(isolate, bool):
        raise TypeError(f"run_sweep: isolate must be True or False, not {isolate!r}")
    if isinstance(spec, str | Path):
        spec = load_spec(spec)
    elif isinstance(spec, dict):
        spec = spec_from_dict(spec)
    elif not isinstance(spec, SweepSpec):
        raise TypeError(f"run_sweep: spec must be a SweepSpec, a dict or a path, not "
                        f"{type(spec).__name__}")
    scenarios = spec.scenarios()
    check_scenarios(spec, scenarios)
    bar = Progress(len(scenarios), progress)
    address = ray or os.environ.get("RAY_ADDRESS")
    if address:
        rows = run_ray(scenarios, address=address, num_cpus=num_cpus, progress=bar)
    else:
        rows = run_local(scenarios, workers=workers, progress=bar, isolate=isolate)
    return SweepResult(rows)


def check_arguments(*, workers: Any, num_cpus: Any, ray: Any, progress: Any) -> None:
    """TypeError or ValueError naming the first bad argument of :func:`run_sweep`."""
    for name, value in (("workers", workers), ("num_cpus", num_cpus)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"run_sweep: {name} must be an integer or None, not {value!r}")
        if why := count_problem(value, 1, MAX_WORKERS):
            raise ValueError(f"run_sweep: {name}: {why}")
    if ray is not None and not isinstance(ray, str):
        raise TypeError(f"run_sweep: ray must be an address (str) or None, not {ray!r}")
    if progress is not None and not callable(progress):
        raise TypeError(f"run_sweep: progress must be callable or None, not {progress!r}")


__all__ = ["SweepResult", "SweepSpec", "load_spec", "run_sweep", "spec_from_dict"]
