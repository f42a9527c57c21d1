"""Probe (issue 22): CP-SAT's ``placed`` bound on the coarse model of bench_scale's
``cpsat-12k-120%`` case, for the weighted ``placed`` sum or its lowest priority level alone.

``weighted``: maximise the strict-dominance sum (what the engine does); ``split``: hold the high
and normal levels at their full demand (what every plan of the mirror's value has) and
maximise the low level. No hint, one sequential worker, ``DTIME`` deterministic units.
docs/cpsat-formulation.md, section 6a.

    PYTHONPATH=src .venv/bin/python benchmarks/scale_placed_probe.py weighted|split DTIME
"""

from __future__ import annotations

import sys
import time

from ortools.sat.python import cp_model

import toposolve
from toposolve.engines.cpsat.model.classes import Scope
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.model.objectives import placed_exprs
from toposolve.generate import generate
from toposolve.policy.objective import pending_level_units


def main() -> None:
    mode, dtime = sys.argv[1], float(sys.argv[2])
    problem = toposolve.compile_problem(
        generate("superpod", nodes=12_288, load=1.2, seed=0, jobs=400))
    start = time.process_time()
    pm = PlacementModel(problem, Scope(aggregate_level=1))
    print(f"coarse model built in {time.process_time() - start:.1f} s CPU", flush=True)
    if mode == "split":
        demand = pending_level_units(problem)
        *upper, lowest = placed_exprs(problem, pm.vars, split=True)
        for stage in upper:
            pm.model.add(stage.expr >= demand[int(stage.label.split("=")[1][:-1])])
        pm.model.maximize(lowest.expr)
    else:
        (whole,) = placed_exprs(problem, pm.vars, split=False)
        pm.model.maximize(whole.expr)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_deterministic_time = dtime
    status = solver.solve(pm.model)
    print(f"{mode}: {solver.status_name(status)}, objective {solver.objective_value:.0f}, "
          f"bound {solver.best_objective_bound:.0f}, {solver.deterministic_time:.1f} "
          f"deterministic units, {solver.wall_time:.1f} s wall")


if __name__ == "__main__":
    main()
