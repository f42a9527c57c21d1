"""Run scenarios as Ray tasks (the optional ``toposolve[ray]`` extra).

``address``: a Ray cluster (``ray://…`` or ``host:port``), ``"auto"``, or ``"local"`` to start
a local Ray instance (``num_cpus`` CPUs). Each scenario is one task running the same
:func:`~toposolve.sim.sweep.scenario.run_scenario` as the local runner, so the rows are identical
for the same spec (timings aside). Before ``ray.init``, a ``host:port`` address must accept a
TCP connection within :data:`~toposolve.core.limits.RAY_CONNECT_TIMEOUT` seconds: Ray itself
retries an address nobody answers for many minutes.
"""

from __future__ import annotations

import socket
from typing import Any

from toposolve.core.errors import InputError
from toposolve.core.limits import RAY_CONNECT_TIMEOUT
from toposolve.sim.sweep.progress import Progress
from toposolve.sim.sweep.scenario import run_scenario


def ray_module() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError("sweeps on Ray need ray: pip install 'toposolve[ray]'") from None
    return ray


def check_reachable(address: str, timeout: float = RAY_CONNECT_TIMEOUT) -> None:
    """InputError unless ``address`` (``[ray://]host:port``) accepts a TCP connection within
    ``timeout`` seconds; ``local`` and ``auto`` are left to Ray."""
    if address in ("local", "auto"):
        return
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError("expected local, auto or [ray://]HOST:PORT", obj="--ray", field=address)
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except TimeoutError:
        raise InputError(f"no answer within {timeout:g} s", obj="--ray", field=address) from None
    except OSError as exc:
        raise InputError(f"cannot connect: {exc.strerror or exc}", obj="--ray",
                         field=address) from None


def run_ray(scenarios: list[dict[str, Any]], *, address: str, num_cpus: int | None = None,
            progress: Progress | None = None) -> list[dict[str, Any]]:
    """Rows in scenario order, each scenario one Ray task."""
    ray = ray_module()
    started = False
    if not ray.is_initialized():
        check_reachable(address)
        if address == "local":
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
        started = True
    waiting: list[Any] = []
    try:
        task = ray.remote(run_scenario)
        waiting = [task.remote(s) for s in scenarios]
        rows = []
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            rows.append(ray.get(done[0]))
            if progress:
                progress.finished(rows[-1])
    except BaseException:  # stopped early: the cluster drops what is left
        for ref in waiting:
            ray.cancel(ref, force=True)
        raise
    finally:
        if started:
            ray.shutdown()
    return sorted(rows, key=lambda r: r["scenario"])
