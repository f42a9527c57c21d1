"""Run scenarios as Ray tasks (the optional ``toposolve[ray]`` extra).

``address``: a Ray cluster (``ray://…`` or ``host:port``), ``"auto"``, or ``"local"`` to start
a local Ray instance (``num_cpus`` CPUs). Each scenario is one task running the same
:func:`~toposolve.sim.sweep.scenario.run_scenario` as the local runner, so the rows are identical
for the same spec (timings aside).
"""

from __future__ import annotations

from typing import Any

from toposolve.sim.sweep.progress import Progress
from toposolve.sim.sweep.scenario import run_scenario


def ray_module() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError("sweeps on Ray need ray: pip install 'toposolve[ray]'") from None
    return ray


def run_ray(scenarios: list[dict[str, Any]], *, address: str, num_cpus: int | None = None,
            progress: Progress | None = None) -> list[dict[str, Any]]:
    ray = ray_module()
    started = False
    if not ray.is_initialized():
        if address == "local":
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
        started = True
    try:
        task = ray.remote(run_scenario)
        waiting = [task.remote(s) for s in scenarios]
        rows = []
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            rows.append(ray.get(done[0]))
            if progress:
                progress.finished(rows[-1])
    finally:
        if started:
            ray.shutdown()
    return sorted(rows, key=lambda r: r["scenario"])
