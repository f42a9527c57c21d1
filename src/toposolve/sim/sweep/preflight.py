"""Check every scenario of a sweep before the first one runs.

Each distinct cluster is built (generated, or its file loaded) with its variant, each distinct
trace on it, and each distinct engine, profile and option set resolved, so that a bad value in
the last grid point is refused at once rather than after the others ran. Built objects are let
go as soon as they are checked (one cluster at a time is held).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from toposolve.core.errors import InputError
from toposolve.sim.sweep.scenario import build_cluster, build_trace, check_solver
from toposolve.sim.sweep.spec import SweepSpec


def check_scenarios(spec: SweepSpec, scenarios: list[dict[str, Any]]) -> None:
    """Raise one :class:`InputError` naming ``spec``'s file and grid point for the first
    scenario that cannot run; return None when all can."""
    by_cluster: dict[str, list[dict[str, Any]]] = {}
    solvers: set[str] = set()
    for scenario in scenarios:
        tree = scenario["spec"]
        by_cluster.setdefault(_key(tree["cluster"]), []).append(scenario)
        solver = _key([tree.get("engine"), tree.get("profile"), tree.get(spec.mode)])
        if solver not in solvers:
            solvers.add(solver)
            try:
                check_solver(tree, spec.mode)
            except InputError as exc:
                raise spec.error(exc.message, spec.blame(scenario, exc.field or "")) from None
    for group in by_cluster.values():
        first = group[0]
        cluster = _located(spec, first, ("cluster",), build_cluster, first["spec"]["cluster"],
                           spec.root)
        if spec.mode != "replay":
            continue
        traces: set[str] = set()
        for scenario in group:
            trace = scenario["spec"]["trace"]
            if _key(trace) not in traces:
                traces.add(_key(trace))
                _located(spec, scenario, ("trace", "cluster"), build_trace, trace, cluster,
                         spec.root)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _located(spec: SweepSpec, scenario: dict[str, Any], sections: tuple[str, ...],
             work: Callable[..., Any], *args: Any) -> Any:
    """``work(*args)``; its InputError or ValueError becomes one naming the spec and the grid
    values of ``sections`` this scenario has (or the base, when the grid varies none of them)."""
    try:
        return work(*args)
    except (InputError, ValueError) as exc:
        varied = [key for key in spec.grid
                  if any(key == s or key.startswith(s + ".") for s in sections)]
        picks = ", ".join(f"grid.{key}[{scenario['picks'][key]}]" for key in varied)
        where = f"scenario {scenario['index']} ({picks})" if varied else f"base.{sections[0]}"
        raise spec.error(" ".join(str(exc).split()), where) from None
