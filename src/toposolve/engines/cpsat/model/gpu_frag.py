"""The ``gpu_fragmentation`` and ``node_order`` stages over the CP-SAT variables.

``gpu_fragmentation`` (:mod:`toposolve.policy.gpu_fragmentation`): per node class of one node
(the exact strategy splits every node with free accelerators out of its class when a profile
names the stage), its final free accelerator milli ``F``, CPU ``C`` and memory ``M`` are linear
in the count variables; ``F = 1000·q + r``; per typical shape ``t`` a variable
``z_t ≤ usable_t = 1000·q + [r ≥ m_t]·r`` and ``z_t ≤ U·lit`` for each threshold literal
``F ≥ a_t``, ``C ≥ cpu_t``, ``M ≥ mem_t`` (each literal only implies its threshold), so the
node's term ``Σ_t w_t·(F − z_t)`` is at least FGD's measure and equals it once the stage is
minimised. Thresholds a node can never cross are constants. Nodes no modelled pod can reach
count their present value; a class of several nodes counts 0 (a lower bound: only coarse or
lifted models keep such classes). ``node_order``: ``Σ`` over new pods of their node's index
(the class's lowest in a class of several nodes: a lower bound). Formulation and measurements:
``docs/cpsat-formulation.md``, section 9.
"""

from __future__ import annotations

import numpy as np
from ortools.sat.python import cp_model

from toposolve.core.parallelism import accelerator_indices
from toposolve.core.problem import Problem
from toposolve.engines.cpsat.model.variables import FragNode, Variables
from toposolve.policy.fgd_measure import MILLI, TargetWorkload
from toposolve.policy.gpu_fragmentation import free_state, node_fragmentation, target_workload

NODE_STAGES = ("gpu_fragmentation", "node_order")  # stages that see nodes one by one


def per_node_split(problem: Problem, stages: list[str]) -> frozenset[int]:
    """Nodes to split out of their classes for ``stages``: every schedulable node for
    ``node_order``, those with free accelerator milli for ``gpu_fragmentation`` (a node without
    any has no fragmentation, whatever lands on it)."""
    if "node_order" in stages:
        return frozenset(np.flatnonzero(problem.schedulable).tolist())
    if "gpu_fragmentation" not in stages:
        return frozenset()
    free, _, _ = free_state(problem, problem.used)
    return frozenset(np.flatnonzero((free > 0) & problem.schedulable).tolist())


def _node_terms(xv: Variables) -> dict[int, list[tuple[int, cp_model.IntVar, int, int]]]:
    """Per single-node base class, its (group, count variable, upper bound, position in the
    group's allowed classes) entries."""
    classes = xv.cands.classes
    out: dict[int, list] = {}
    for g, xs in xv.x.items():
        for k, (c, var, ub) in enumerate(zip(xv.cands.allowed[g].tolist(), xs,
                                             xv.cands.ub[g].tolist(), strict=True)):
            if c < classes.n_base and classes.size[c] == 1:
                out.setdefault(c, []).append((g, var, ub, k))
    return out


def _takes(problem: Problem) -> np.ndarray:
    """[G, 3] accelerator milli, CPU and memory one pod of each group takes."""
    acc = accelerator_indices(problem.resources)
    req = problem.group_request
    cols = [req[:, problem.resources.index(n)] if n in problem.resources
            else np.zeros(len(req), dtype=np.int64) for n in ("cpu", "memory")]
    return np.stack([req[:, acc].sum(axis=1), *cols], axis=1).astype(np.int64)


def gpu_fragmentation_expr(problem: Problem, xv: Variables) -> tuple[cp_model.LinearExprT, int]:
    """The stage's expression and its largest value; fills ``xv.frag``."""
    target = target_workload(problem)
    free, cpu, memory = free_state(problem, xv.cands.scope.used if xv.cands.scope.used
                                   is not None else problem.used)
    present = node_fragmentation(free, cpu, memory, target) if target.weight.size else free * 0
    weight = int(target.weight.sum())
    terms = _node_terms(xv)
    classes = xv.cands.classes
    modelled = {int(classes.nodes[c][0]): c for c in terms}
    reached = {c for g in xv.x for c in xv.cands.allowed[g].tolist()}
    several = {int(n) for c in reached if c not in terms
               for b in classes.base_of(c) for n in classes.nodes[b].tolist()}
    fixed = [n for n in range(problem.n_nodes) if n not in modelled and n not in several]
    expr: cp_model.LinearExprT = int(present[fixed].sum())
    magnitude = int(present[fixed].sum()) + weight * int(free[list(modelled)].sum())
    xv.frag.target = target
    if weight == 0:
        return expr, magnitude
    takes = _takes(problem)
    for n, c in sorted(modelled.items()):
        node = FragNode(node=n, start=(int(free[n]), int(cpu[n]), int(memory[n])),
                        entries=terms[c])
        node.use = [tuple(int(v) for v in takes[g]) for g, *_ in node.entries]
        expr += _node_expr(xv, node, target)
        xv.frag.nodes.append(node)
    return expr, magnitude


def _node_expr(xv: Variables, node: FragNode, target: TargetWorkload) -> cp_model.LinearExprT:
    """One node's ``Σ_t w_t·(F − z_t)`` (see the module doc); records its variables."""
    model = xv.model
    final: list = []
    low: list[int] = []
    for k in range(3):
        used = [(u[k], var, ub) for u, (_, var, ub, _) in zip(node.use, node.entries,
                                                               strict=True) if u[k]]
        low.append(max(node.start[k] - sum(a * ub for a, _, ub in used), 0))
        if low[k] == node.start[k]:
            final.append(node.start[k])  # nothing that lands here takes this resource
            continue
        var = model.new_int_var(low[k], node.start[k], f"ff_{node.node}_{k}")
        model.add(var == node.start[k] - sum(a * x for a, x, _ in used))
        node.final[k] = var
        final.append(var)
    f0 = node.start[0]
    if 0 in node.final:
        node.q = model.new_int_var(low[0] // MILLI, f0 // MILLI, f"fq_{node.node}")
        node.r = model.new_int_var(0, MILLI - 1, f"fr_{node.node}")
        model.add(final[0] == MILLI * node.q + node.r)
        q, r = node.q, node.r
    else:
        q, r = divmod(f0, MILLI)
    expr: cp_model.LinearExprT = int(target.weight.sum()) * final[0]
    for t in np.flatnonzero(target.count > 0).tolist():
        need = shape_needs(target, t)
        if any(need[k] > node.start[k] for k in range(3)):
            continue  # never hosted here: all of F counts
        z = model.new_int_var(0, f0, f"fz_{node.node}_{t}")
        model.add(z <= MILLI * q + _usable_part(model, node, r, int(target.milli[t])))
        for k in range(3):
            if need[k] > low[k]:  # the node's new pods may take it below the threshold
                model.add(z <= f0 * _threshold(model, node, final[k], k, need[k]))
        node.z.append((t, z))
        expr -= int(target.weight[t]) * z
    return expr


def shape_needs(target: TargetWorkload, t: int) -> tuple[int, int, int]:
    """The free accelerator milli, CPU and memory a node needs to host shape ``t`` (pooled:
    ``count − 1`` whole devices and one with ``milli`` free)."""
    mem = int(target.memory[t]) if target.memory is not None else 0
    return (int(target.count[t]) - 1) * MILLI + int(target.milli[t]), int(target.cpu[t]), mem


def _usable_part(model: cp_model.CpModel, node: FragNode, r, milli: int):
    """``r`` when ``r ≥ milli`` else 0: the partly used device's milli a shape can use."""
    if milli >= MILLI:
        return 0
    if isinstance(r, int):
        return r if r >= milli else 0
    if milli not in node.part:
        s = model.new_bool_var(f"fs_{node.node}_{milli}")
        rr = model.new_int_var(0, MILLI - 1, f"frr_{node.node}_{milli}")
        model.add(r >= milli).only_enforce_if(s)
        model.add(rr <= r)
        model.add(rr <= (MILLI - 1) * s)
        node.part[milli] = (s, rr)
    return node.part[milli][1]


def _threshold(model: cp_model.CpModel, node: FragNode, final, k: int,
               need: int) -> cp_model.IntVar:
    """A literal that implies ``final ≥ need`` (resource k: 0 accelerator milli, 1 CPU,
    2 memory)."""
    key = (k, need)
    if key not in node.lits:
        lit = model.new_bool_var(f"fl_{node.node}_{k}_{need}")
        model.add(final >= need).only_enforce_if(lit)
        node.lits[key] = lit
    return node.lits[key]


def node_order_expr(xv: Variables) -> tuple[cp_model.LinearExprT, int]:
    """``Σ`` new pods × the lowest node index of their class, and its largest value."""
    classes = xv.cands.classes
    lowest = [int(min(classes.nodes[b][0] for b in classes.base_of(c)))
              for c in range(len(classes))]
    expr: cp_model.LinearExprT = 0
    magnitude = 0
    for g, xs in xv.x.items():
        for c, var, ub in zip(xv.cands.allowed[g].tolist(), xs, xv.cands.ub[g].tolist(),
                              strict=True):
            if lowest[c]:
                expr += lowest[c] * var
                magnitude += lowest[c] * int(ub)
    return expr, magnitude


def gpu_frag_hint(xv: Variables, counts: dict[int, np.ndarray], put) -> None:
    """Hint values of ``xv.frag`` for per-group class counts ``counts`` (as the hint's)."""
    target = xv.frag.target
    for node in xv.frag.nodes:
        placed = [int(counts[g][k]) if g in counts else 0 for g, _, _, k in node.entries]
        final = [node.start[k] - sum(u[k] * n for u, n in zip(node.use, placed, strict=True) if n)
                 for k in range(3)]
        for k, var in node.final.items():
            put(var, final[k])
        q, r = divmod(final[0], MILLI)
        if node.q is not None:
            put(node.q, q)
            put(node.r, r)
        for milli, (s, rr) in node.part.items():
            put(s, int(r >= milli))
            put(rr, r if r >= milli else 0)
        for (k, need), lit in node.lits.items():
            put(lit, int(final[k] >= need))
        for t, z in node.z:
            need = shape_needs(target, t)
            hosted = all(final[k] >= need[k] for k in range(3))
            milli = int(target.milli[t])
            put(z, hosted * (MILLI * q + (r if milli < MILLI and r >= milli else 0)))
