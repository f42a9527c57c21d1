"""One CP-SAT stage solved alone to optimality, with rows a probe adds (shared by the overload
probe tests)."""

from __future__ import annotations

from collections.abc import Callable

from ortools.sat.python import cp_model

from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.model.objectives import stage_exprs


def stage_optimum(problem, stage: str, add_rows: Callable[[PlacementModel], object] | None = None):
    """The optimum of ``stage`` alone on the plain placement model, after ``add_rows(pm)``
    (whose result is returned beside it, None without rows)."""
    pm = PlacementModel(problem)
    added = add_rows(pm) if add_rows else None
    (expr,) = stage_exprs(problem, pm.vars, [stage], allow_split=False)
    (pm.model.maximize if expr.maximise else pm.model.minimize)(expr.expr)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = 60
    assert solver.solve(pm.model) == cp_model.OPTIMAL
    return solver.objective_value, added
