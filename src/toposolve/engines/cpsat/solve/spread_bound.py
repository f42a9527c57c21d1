"""A lower bound of the ``spread`` stage from an aggregated packing model of whole-node gangs.

Why: on an overloaded cluster the exact model's ``spread`` bound can stay one or two units below
the optimum for as long as the search runs, because refuting a better value means refuting every
assignment of interchangeable gangs to interchangeable leaves (docs/cpsat-formulation.md,
section 8). Counting instead how many units of each kind each domain holds removes that
symmetry: a small CP-SAT model over those counts proves its optimum in a fraction of a second
where the exact model does not, and that optimum bounds the stage. The runner stops the stage's
search when a plan reaches it. Why it is valid: :func:`spread_lower_bound`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from toposolve.engines.cpsat.model.constraints import node_sized_groups
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.model.variables import UnitVars
from toposolve.policy.objective import placed_pod_weights, placed_units

ALL = -1  # the level key of the whole cluster in :attr:`NodeSizedPods.pods`
Option = tuple[int, int | None]  # (level the unit is wholly inside, its domain or None: unknown)


@dataclass
class _Kind:
    """Units that are the same to the aggregated model: a count of them takes each option."""

    options: tuple[Option, ...]
    sizes: tuple[int, ...]  # per node-sized resource: pods that hold a node alone
    count: int = 0
    placed: object = None  # how many are placed: an integer variable or count × the job's ``y``
    n: list = field(default_factory=list)  # per option: how many of them lie wholly inside it


@dataclass
class Aggregate:
    model: cp_model.CpModel = field(default_factory=cp_model.CpModel)
    kinds: dict[tuple, _Kind] = field(default_factory=dict)
    y: dict[int, cp_model.IntVar] = field(default_factory=dict)  # jobs with SubJob units
    above: dict[Option, list[int]] = field(default_factory=dict)  # :func:`_above`


def placed_rows(pm: PlacementModel, frozen: dict[str, int]) -> list[tuple[list[int], int]]:
    """Per frozen ``placed`` stage (label -> the value it was frozen at, ``placed ≥ value``):
    its coefficient per group and that value."""
    problem = pm.problem
    rows = []
    for label, value in frozen.items():
        if label == "placed":
            rows.append((placed_pod_weights(problem), value))
        elif label.startswith("placed[priority="):
            priority = int(label[len("placed[priority="):-1])
            units = placed_units(problem).tolist()
            rows.append(([u if problem.jobs[int(problem.group_job[g])].priority == priority
                          else 0 for g, u in enumerate(units)], value))
    return rows


def applies(pm: PlacementModel) -> bool:
    """Whether the bound is built: an exact, unlifted model without evictions, devices, GangNodes
    or crossing limits, increasing tiers, and every unit all-or-nothing with nothing running."""
    cands, problem = pm.cands, pm.problem
    tiers = [int(t) for t in cands.levels.tiers]
    if (pm.evict is not None or problem.has_devices or cands.gang_units
            or not cands.scope.objective or cands.scope.aggregate_level
            or cands.classes.base_count >= 0 or cands.lift_level
            or any(a > b for a, b in zip(tiers, tiers[1:], strict=False))):
        return False
    for uv in pm.vars.units:
        unit = uv.unit
        pending = sum(problem.group_pending_count(g) for g in unit.groups)
        if unit.running or unit.running_nodes or unit.crossing is not None:
            return False
        if uv.kind == "job" and unit.minimum != pending:
            return False
    return True


def unit_options(uv: UnitVars, root: int) -> tuple[Option, ...]:
    """Where the unit may be wholly inside, lowest level first: each candidate domain of a level
    where the model has a ``within`` literal, then the level from which it is always within (its
    hard limit's domains, or unknown) — the root if none."""
    out: list[Option] = []
    unit = uv.unit
    for lvl in range(root):
        if lvl not in uv.within:  # within ≡ has from here up (a hard limit, or one pod)
            hard = unit.hard_domains if unit.hard_level == lvl and unit.hard_domains else [None]
            return (*out, *((lvl, h) for h in hard))
        if not isinstance(uv.within[lvl], int):  # the constant 0: never within at this level
            out += [(lvl, h) for h in unit.spread_domains[lvl]]
    return (*out, (root, None))


def spread_lower_bound(pm: PlacementModel, frozen: dict[str, int], dtime: float,
                       seed: int = 0) -> tuple[int | None, float]:
    """A lower bound of ``spread`` over the plans meeting the frozen ``placed`` stages, and the
    deterministic time spent; ``(None, 0.0)`` where :func:`applies` says no or no ``placed``
    stage is frozen.

    The aggregated model: per job its ``y``; per kind of unit (jobs alike for ``placed`` and
    their options, or a job's SubJobs alike) and option (:func:`unit_options`), how many of them
    lie wholly inside it. Rows: each placed job's units take one option each; the frozen
    ``placed`` rows over the ``y`` (every job places all its pods or none); per domain ``D`` of
    every level and node-sized resource ``r`` (:func:`node_sized_groups`), the ``r``-node-sized
    pods of the units inside ``D`` fit the nodes of ``D`` with room for the smallest of them,
    one per node — a SubJob's pods where it is when its options name their domains, else (only
    its job's hard limit holds it) where its job is; a split job inside domain ``h`` of level
    ``l`` has every SubJob inside ``h`` at level ``l`` or below (or at an unnamed domain).
    Objective: ``Σ tier(level)·count``.

    Valid: among the plans of the exact model with the least ``spread`` is one whose ``within``
    literals hold wherever the pods are inside a candidate domain (setting them breaks no row
    and lowers no tier's saving: ``T_{l+1} ≥ T_l``); each unit there is at the lowest level whose
    ``within`` holds (the model prices it that tier), inside the domain it picked (all its pods
    in it, so its SubJobs' too), which is a solution of the aggregated model of the same
    objective — so its optimum, and CP-SAT's bound on it, is at most the stage's optimum.
    Checked against every plan of small instances (``tests/engines/cpsat/solve``).
    """
    agg = aggregate_model(pm, frozen)
    if agg is None:
        return None, 0.0
    agg.model.minimize(spread_of(pm, agg))
    return least_value(agg.model, dtime, seed)


def aggregate_model(pm: PlacementModel, frozen: dict[str, int]) -> Aggregate | None:
    """The aggregated model's variables and rows (no objective), as
    :func:`spread_lower_bound` describes them; None where :func:`applies` says no or no
    ``placed`` stage is frozen (nothing placed is required: placing nothing costs 0)."""
    rows = placed_rows(pm, frozen)
    if not rows or not applies(pm):
        return None
    agg = _aggregate(pm, rows)
    agg.above = _above(pm)
    _capacity_rows(pm, agg)
    _subjobs_inside_job_rows(pm, agg)
    return agg


def spread_of(pm: PlacementModel, agg: Aggregate) -> cp_model.LinearExprT:
    """``Σ tier(level)·count``: the aggregated ``spread``."""
    tiers = [int(t) for t in pm.cands.levels.tiers]
    return sum(tiers[lvl] * v for kind in agg.kinds.values()
               for (lvl, _), v in zip(kind.options, kind.n, strict=True))


def least_value(model: cp_model.CpModel, dtime: float, seed: int) -> tuple[int | None, float]:
    """CP-SAT's bound on the minimised ``model`` (rounded up) and the deterministic time spent;
    None where it finds no solution within ``dtime``."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
    solver.parameters.max_deterministic_time = dtime
    solver.parameters.max_time_in_seconds = 60 * dtime + 10  # the deterministic budget decides
    solver.parameters.catch_sigint_signal = False
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, solver.deterministic_time
    return math.ceil(solver.best_objective_bound - 1e-6), solver.deterministic_time


def _known(options: tuple[Option, ...], root: int) -> bool:
    """Whether every option below the root names its domain."""
    return all(h is not None for lvl, h in options if lvl < root)


def _aggregate(pm: PlacementModel, rows: list[tuple[list[int], int]]) -> Aggregate:
    """The kinds of units with their option counts, and the frozen ``placed`` rows."""
    problem, root = pm.problem, pm.cands.levels.root_level
    big = node_sized_groups(problem)
    agg = Aggregate()
    split = {problem.subjobs[uv.index].job for uv in pm.vars.units if uv.kind == "subjob"}
    options_of = {id(uv): unit_options(uv, root) for uv in pm.vars.units}
    # pods a SubJob holds in a known domain; the job's other pods count where the job is
    in_subjobs: dict[int, set[int]] = defaultdict(set)
    for uv in pm.vars.units:
        if uv.kind == "subjob" and _known(options_of[id(uv)], root):
            in_subjobs[problem.subjobs[uv.index].job].update(uv.unit.groups)
    jobs: dict[int, tuple[int, ...]] = {}  # job -> its coefficient in each placed row
    for uv in pm.vars.units:
        job = uv.index if uv.kind == "job" else problem.subjobs[uv.index].job
        options = options_of[id(uv)]
        if uv.kind == "subjob":
            groups = uv.unit.groups if _known(options, root) else []
        else:
            groups = [g for g in uv.unit.groups if g not in in_subjobs[job]]
        sizes = tuple(sum(problem.group_pending_count(g) for g in groups if mask[g])
                      for mask in big.values())
        if uv.kind == "job":
            jobs[job] = tuple(sum(coef[g] * problem.group_pending_count(g)
                                  for g in uv.unit.groups if g in pm.vars.x) for coef, _ in rows)
        key = (uv.kind, job, options, sizes) if job in split else (jobs[job], options, sizes)
        kind = agg.kinds.setdefault(key, _Kind(options, sizes))
        kind.count += 1
    model = agg.model
    for key, kind in agg.kinds.items():
        if len(key) == 4:  # a split job's own unit or its SubJobs: placed with the job
            job = key[1]
            if job not in agg.y:
                agg.y[job] = model.new_bool_var(f"y_{job}")
            kind.placed = kind.count * agg.y[job]
        else:
            kind.placed = model.new_int_var(0, kind.count, "placed")
        kind.n = [model.new_int_var(0, kind.count, "n") for _ in kind.options]
        model.add(sum(kind.n) == kind.placed)
    for k, (_, value) in enumerate(rows):
        terms = [jobs[j][k] * y for j, y in agg.y.items()]
        terms += [key[0][k] * kind.placed for key, kind in agg.kinds.items() if len(key) == 3]
        model.add(sum(terms) >= value)
    return agg


def _above(pm: PlacementModel) -> dict[Option, list[int]]:
    """(level, domain) -> its domain at each level from it up to the one below the root."""
    cands = pm.cands
    root, n_base = cands.levels.root_level, cands.classes.n_base
    domain = cands.class_domain[:root, :n_base]
    above: dict[Option, list[int]] = {}
    for c in range(n_base):
        for lvl in range(root):
            above.setdefault((lvl, int(domain[lvl, c])), domain[lvl:, c].tolist())
    return above


def _subjobs_inside_job_rows(pm: PlacementModel, agg: Aggregate) -> None:
    """A split job wholly inside domain ``h`` of level ``l`` has each of its SubJobs inside
    ``h`` at level ``l`` or below (or where the domain is unknown)."""
    root = pm.cands.levels.root_level
    by_job: dict[int, list[tuple[tuple, _Kind]]] = defaultdict(list)
    for key, kind in agg.kinds.items():
        if len(key) == 4:
            by_job[key[1]].append((key, kind))
    for kinds in by_job.values():
        own = [kind for key, kind in kinds if key[0] == "job"]
        subs = [kind for key, kind in kinds if key[0] == "subjob"]
        for job in own:
            for (lvl, h), n in zip(job.options, job.n, strict=True):
                if h is None or lvl >= root:
                    continue
                for sub in subs:
                    inside = [m for (sl, sh), m in zip(sub.options, sub.n, strict=True)
                              if sl <= lvl and (sh is None
                                                or agg.above.get((sl, sh), [None] * root)[lvl - sl]
                                                == h)]
                    agg.model.add(sum(inside) >= sub.count * n)


def _capacity_rows(pm: PlacementModel, agg: Aggregate) -> None:
    """Per node-sized resource and domain of every level below the root (and the whole
    cluster): the node-sized pods of the units inside it fit its nodes with room for one."""
    domain = pm.cands.class_domain[: pm.cands.levels.root_level]
    for share in node_sized_pods(pm, agg):
        for (lvl, d), ts in share.pods.items():
            inside = share.room if lvl == ALL else share.room[domain[lvl] == d]
            agg.model.add(sum(ts) <= int(inside.sum()))


@dataclass
class NodeSizedPods:
    """One node-sized resource's pods per domain, and the nodes with room for one of them."""

    pods: dict[tuple, list]  # (level, domain) or (ALL, 0) -> pods of the units inside it
    room: np.ndarray  # [base classes] nodes of the class with room for the smallest such pod


def node_sized_pods(pm: PlacementModel, agg: Aggregate) -> Iterator[NodeSizedPods]:
    """Per node-sized resource (:func:`node_sized_groups`) that some kind's pods ask: its pods
    in each domain of every level below the root where units are inside it (a unit counts in
    its domain and every domain above it), and in the whole cluster (level :data:`ALL`)."""
    problem, cands = pm.problem, pm.cands
    root, n_base = cands.levels.root_level, cands.classes.n_base
    sizes, idle = cands.classes.size[:n_base], cands.classes.idle[:n_base]
    for k, (r, mask) in enumerate(node_sized_groups(problem).items()):
        terms: dict[tuple, list] = defaultdict(list)
        for kind in agg.kinds.values():
            if not kind.sizes[k]:
                continue
            for (lvl, h), n in zip(kind.options, kind.n, strict=True):
                terms[(ALL, 0)].append(kind.sizes[k] * n)
                if h is not None and lvl < root:
                    for up, d in enumerate(agg.above.get((lvl, h), []), start=lvl):
                        terms[(up, d)].append(kind.sizes[k] * n)
        if terms:
            smallest = int(problem.group_request[mask, r].min())
            yield NodeSizedPods(terms, (idle[:, r] >= smallest) * sizes)
