"""Stage expressions of :mod:`toposolve.policy.objective`, written over the CP-SAT variables.

Each expression equals the stage value :func:`toposolve.policy.objective.stage_values` computes for
the disaggregated plan:

* ``placed`` = ``Σ_g W_level·units_g · new_g``;
* ``spread`` of a job or policy SubJob with literal ``has`` = ``T_0·has + Σ_l (T_{l+1}−T_l)·
  (has − within_l)`` over the levels below the root, where ``within_l ≡ has`` from its
  contained level up: the tier of the lowest HyperNode holding its pods;
* ``fragmentation`` = ``Σ touched`` (plus, in a lifted model, the pods on lifted classes of idle
  one-node leaves: each touches its own leaf); the eviction stages are those of :mod:`.eviction`
  when evictions are modelled, else 0;
* ``comm``, ``dp_span``, ``pp_span``, ``edge_floor``, ``span_floor``: :mod:`.comm`;
  ``gpu_fragmentation``, ``node_order``: :mod:`.gpu_frag` (made only when asked for).

In a coarse model (see :mod:`.candidates`) spread and fragmentation are relaxed (lower bounds).

When ``placed``'s largest value does not fit in 2^53 (many priority levels with many units),
:func:`stage_exprs` splits it into one sub-stage per priority level, highest first, each
maximising that level's units: lexicographically the same order as the exact weights.
"""

from __future__ import annotations

from dataclasses import dataclass

from ortools.sat.python import cp_model

from toposolve.core.problem import Problem
from toposolve.engines.cpsat.model.comm import comm_expr, floor_expr, span_expr, span_floor_expr
from toposolve.engines.cpsat.model.gpu_frag import gpu_fragmentation_expr, node_order_expr
from toposolve.engines.cpsat.model.variables import UnitVars, Variables
from toposolve.policy.objective import (
    placed_job_weights,
    placed_pod_weights,
    placed_units,
    sense,
)
from toposolve.policy.profiles import CommWeights

SAFE_MAGNITUDE = 1 << 53


@dataclass
class StageExpr:
    name: str  # stage name (sub-stages of "placed" keep the name)
    label: str  # e.g. "placed", "placed[priority=100]"
    expr: cp_model.LinearExprT
    maximise: bool
    magnitude: int  # largest absolute value the expression can take


def _unit_spread(uv: UnitVars, tiers: list[int], root_level: int,
                 floor: int) -> cp_model.LinearExprT:
    expr = tiers[0] * uv.has
    for lvl in range(root_level):
        # at/above the contained level: always within; below a coarse model's floor: as at it
        w = uv.within.get(max(lvl, floor), uv.has)
        expr += (tiers[lvl + 1] - tiers[lvl]) * (uv.has - w)
    return expr


def placed_exprs(problem: Problem, xv: Variables, split: bool) -> list[StageExpr]:
    weights = placed_pod_weights(problem)
    groups = sorted(xv.x)
    pending = {g: len(problem.group_pending[g]) for g in groups}
    if not split:
        magnitude = sum(weights[g] * pending[g] for g in groups)
        expr = sum(weights[g] * xv.new_of(g) for g in groups)
        return [StageExpr("placed", "placed", expr, True, magnitude)]
    units = placed_units(problem)
    by_priority: dict[int, list[int]] = {}
    for g in groups:
        by_priority.setdefault(problem.jobs[int(problem.group_job[g])].priority, []).append(g)
    out = []
    for priority in sorted(by_priority, reverse=True):
        gs = by_priority[priority]
        out.append(StageExpr(
            "placed", f"placed[priority={priority}]",
            sum(int(units[g]) * xv.new_of(g) for g in gs), True,
            sum(int(units[g]) * pending[g] for g in gs),
        ))
    return out


def stage_exprs(problem: Problem, xv: Variables, names: list[str], *, allow_split: bool,
        extra: dict[str, tuple[cp_model.LinearExprT, int]] | None = None,
        comm: CommWeights | None = None) -> list[StageExpr]:
    """One expression per stage in ``names`` (``placed`` possibly split, see module doc);
    ``extra``: (expression, largest value) of stages another module models (evictions);
    ``comm``: the cost model whose tier factor prices the ``comm`` stage."""
    tiers = [int(t) for t in xv.cands.levels.tiers]
    root_level = xv.cands.levels.root_level
    out: list[StageExpr] = []
    for name in names:
        if name == "placed":
            whole = placed_exprs(problem, xv, split=False)
            if whole[0].magnitude >= SAFE_MAGNITUDE and allow_split:
                out += placed_exprs(problem, xv, split=True)
            else:
                out += whole
        elif name == "placed_jobs":
            weights = placed_job_weights(problem)
            jobs = [j for j in sorted(xv.y) if j in weights]
            expr = sum(weights[j] * xv.y[j] for j in jobs)
            out.append(StageExpr(name, name, expr, True, sum(weights[j] for j in jobs)))
        elif name == "spread":
            floor = xv.cands.scope.aggregate_level
            expr = sum(_unit_spread(uv, tiers, root_level, floor) for uv in xv.units)
            magnitude = tiers[-1] * len(xv.units)
            out.append(StageExpr("spread", "spread", expr, False, magnitude))
        elif name == "fragmentation":
            touched = list(xv.touched.values()) + [var for var, _ in xv.lifted_touched]
            most = len(xv.touched) + sum(ub for _, ub in xv.lifted_touched)
            out.append(StageExpr("fragmentation", name, sum(touched), False, most))
        elif name == "comm":
            expr, magnitude = comm_expr(problem, xv, comm)
            out.append(StageExpr(name, name, expr, False, magnitude))
        elif name in ("dp_span", "pp_span"):
            expr, magnitude = span_expr(problem, xv, comm, name[:2])
            out.append(StageExpr(name, name, expr, False, magnitude))
        elif name == "edge_floor":
            expr, magnitude = floor_expr(problem, xv)
            out.append(StageExpr(name, name, expr, False, magnitude))
        elif name == "span_floor":
            expr, magnitude = span_floor_expr(problem, xv, comm)
            out.append(StageExpr(name, name, expr, False, magnitude))
        elif name == "gpu_fragmentation":
            expr, magnitude = gpu_fragmentation_expr(problem, xv)
            out.append(StageExpr(name, name, expr, False, magnitude))
        elif name == "node_order":
            expr, magnitude = node_order_expr(xv)
            out.append(StageExpr(name, name, expr, False, magnitude))
        elif extra and name in extra:
            expr, magnitude = extra[name]
            out.append(StageExpr(name, name, expr, sense(name) > 0, magnitude))
        else:
            out.append(StageExpr(name, name, 0, sense(name) > 0, 0))
    return out
