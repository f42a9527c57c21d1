"""The fewest moves that admit the targets: a small node-level CP-SAT model, solved in stages.

Variables exist only for the targets and the movable jobs (:mod:`.common`): ``admit[t]`` and
``moved[j]`` booleans, ``x[g, n]`` pods of group ``g`` on node ``n`` (nodes that pass the
group's predicates, have room with every movable job gone and lie in a domain at each of the
unit's levels), one pick-one-domain boolean per level and domain. A job not moved keeps its
pods; capacity holds per node and resource over the fixed pods, the staying pods and ``x``; a
moved job's pods two budgets cover keep their node (``x ≥`` them).
With ``free`` (tier → N), an ``idle`` boolean per candidate domain of that tier (no pod arrives,
every movable job with a pod there moves) and a stage (0) before the others: maximise the idle
domains, at most N per tier. Repair jobs (``fail``) get ``repaired[j]`` (and ``self_moved[j]``:
its healthy pods move) and a stage before all: maximise them by priority. PodDisruptionBudgets:
the charged pods that leave their node ≤ the allowed disruptions (:mod:`.budgets`). Stages:
(1) maximise admitted targets by priority weight, (2) minimise the move cost, (3) minimise pods
moved; each stage is fixed before the next and warm-started from the last plan (the greedy's
first). The search is deterministic: one worker, a deterministic-time budget. In waves (N > 1)
the full model also places the waves (:mod:`.wave_model`).
"""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np
from ortools.sat.python import cp_model

from toposolve.core.status import SolveStatus
from toposolve.engines.defrag.common import (
    DefragInput,
    DefragResult,
    Placement,
    Unit,
    freed_nodes,
    plan_changes,
    priority_weights,
)
from toposolve.engines.defrag.elastic import add_gang_minimum
from toposolve.engines.defrag.greedy import place_unit
from toposolve.engines.defrag.wave_model import WaveModel
from toposolve.engines.defrag.waves import assign_waves

_STATUS = {cp_model.OPTIMAL: SolveStatus.OPTIMAL, cp_model.FEASIBLE: SolveStatus.FEASIBLE,
           cp_model.INFEASIBLE: SolveStatus.INFEASIBLE, cp_model.UNKNOWN: SolveStatus.UNKNOWN,
           cp_model.MODEL_INVALID: SolveStatus.MODEL_INVALID}
STAGE_SHARES = (0.3, 0.6, 0.1)  # of the time limit: admitted, move cost, pods moved
FREE_SHARE = 0.2  # of the time limit: idle domains (stage 0, only with ``free``)
REPAIR_SHARE = 0.2  # of the time limit: jobs repaired (first of all, only with ``fail``)
FULL_MODEL_LIMIT = 200_000  # x variables of moved jobs above which the full model is not built


class _Model:
    def __init__(self, di: DefragInput, *, relaxed: bool = False, strict: bool = False,
                 waves: int = 1) -> None:
        # strict (a master only): a moved job counts every charged pod against its budgets;
        # waves > 1 (a full model only): the waves are variables too (WaveModel)
        self.di, self.m, self.relaxed, self.strict = di, cp_model.CpModel(), relaxed, strict
        self.on: dict[int, cp_model.IntVar] = {}  # job -> admit / moved
        self.x: dict[tuple[int, int], cp_model.IntVar] = {}
        self.stay: list[cp_model.IntVar] = []
        self.load: dict[int, list] = defaultdict(list)  # node -> (pods expression, group)
        self.arrive: set[int] = set()  # nodes with x variables
        self.picks: dict[tuple[int, int, int], cp_model.IntVar] = {}  # (job, level, domain)
        self.idle: dict[tuple[int, int], cp_model.IntVar] = {}  # (tier, domain) left idle
        self.stays: dict[int, list] = defaultdict(list)  # job -> its stay variables
        self.stay_at: dict[tuple[int, int], cp_model.IntVar] = {}  # (group, node) -> stay
        self.leave: list[cp_model.IntVar] = []  # charged pods leaving a (group, node)
        self.moves: dict[int, cp_model.IntVar] = {}  # repair job -> its healthy pods move
        # (budget, group, node, charged pods, pods leaving expression, shared) per charged cell
        self.cell_leave: list[tuple] = []
        for unit in di.targets:
            self.on[unit.job] = self.m.new_bool_var(f"admit_{unit.job}")
        for unit in di.repairs:
            self.on[unit.job] = self.m.new_bool_var(f"repaired_{unit.job}")
        for unit in di.movable:
            self.on[unit.job] = self.m.new_bool_var(f"moved_{unit.job}")
        for unit in di.units:
            self._unit(unit)
        for unit in di.repairs:
            self._repair(unit)
        self._budgets()
        self._free()
        self._capacity()
        # the full model of a plan in waves: wave variables (the master's moved jobs leave)
        self.waves = WaveModel(self, waves) if waves > 1 and not relaxed else None

    def moved(self, unit: Unit):
        """1 when ``unit``'s running pods move (a movable job moved, a repair job whose
        healthy pods move), else 0; targets: 0."""
        if unit.repair:
            return self.moves.get(unit.job, 0)
        return self.on[unit.job] if unit.current else 0

    def pods_moved(self):
        """Healthy running pods that leave their node (failed pods' re-placement is not a
        move's choice)."""
        units = [*self.di.movable, *self.di.repairs]
        return (sum(u.healthy * self.on[u.job] for u in units)
                - sum(v for u in units for v in self.stays[u.job]))

    def _repair(self, unit: Unit) -> None:
        """A repaired job keeps every healthy pod in place unless its ``move`` is on."""
        m, on = self.m, self.on[unit.job]
        if unit.pinned or not unit.healthy:
            m.add(sum(self.stays[unit.job]) >= unit.healthy * on)
            return
        move = self.moves[unit.job] = m.new_bool_var(f"self_moved_{unit.job}")
        m.add(move <= on)
        m.add(sum(self.stays[unit.job]) >= unit.healthy * (on - move))

    def _budgets(self) -> None:
        """Per PodDisruptionBudget, the charged pods that leave their node ≤ disruptions
        allowed: per (group, node) at least ``charged · on − stay`` (charged pods stay first,
        :func:`~toposolve.engines.defrag.common.pod_changes`), or all of them where no
        ``stay`` exists or two budgets' charged pods share it. In the master a moved job
        leaves without ``x``: it counts nothing (a relaxation; :func:`_extend` checks), or,
        ``strict``, all its charged pods (a restriction: :func:`_strict_master`)."""
        units = {u.job: u for u in [*self.di.movable, *self.di.repairs]}
        shared = self.di.budgets.shared
        for k, use in enumerate(self.di.budgets.uses):
            terms = []
            for j, cells in use.charged.items():
                unit = units.get(j)
                if unit is None:
                    continue
                if self.relaxed and not unit.repair:
                    if self.strict:
                        terms.append(sum(cells.values()) * self.on[j])
                    continue
                for (g, n), c in cells.items():
                    stay = self.stay_at.get((g, n))
                    if stay is None or (g, n) in shared:
                        terms.append(c * self.moved(unit))
                        self.cell_leave.append((k, g, n, c, terms[-1], (g, n) in shared))
                        continue
                    leave = self.m.new_int_var(0, c, f"leave_{g}_{n}_{len(self.leave)}")
                    # the pods two budgets cover stay first (pod_changes)
                    ahead = unit.fixed_at(g, n)
                    self.m.add(leave >= (c + ahead) * self.on[j] - stay)
                    self.leave.append(leave)
                    terms.append(leave)
                    self.cell_leave.append((k, g, n, c, leave, False))
            if terms:
                self.m.add(sum(terms) <= use.allowed)

    def _unit(self, unit: Unit) -> None:
        di, m, on = self.di, self.m, self.on[unit.job]
        if self.relaxed and unit.current and not unit.repair:
            # the master: a moved job leaves, no matter where to (but its fixed pods stay)
            for g, per_node in unit.current.items():
                for n, here in per_node.items():
                    fixed = unit.fixed_at(g, n)
                    self.load[n].append(((here - fixed) * (1 - on) + fixed, g))
            return
        placed = {}
        for g, count in unit.model_counts.items():
            allowed = np.flatnonzero(di.allowed(unit, g)).tolist()
            terms = []
            for n in allowed:
                var = m.new_int_var(0, count, f"x_{g}_{n}")
                self.x[g, n] = var
                terms.append(var)
                self.load[n].append((var, g))
                self.arrive.add(n)
            if unit.upto:
                placed[g] = sum(terms)
            else:
                m.add(sum(terms) == count * on)
            for n, here in unit.current.get(g, {}).items():
                self.load[n].append((here * (1 - on), g))  # stays unless moved
                if unit.fixed_at(g, n):  # build_input made sure x[g, n] exists
                    m.add(self.x[g, n] >= unit.fixed_at(g, n) * on)
                if (g, n) in self.x:
                    stay = m.new_int_var(0, here, f"stay_{g}_{n}")
                    m.add(stay <= self.x[g, n])
                    self.stay.append(stay)
                    self.stays[unit.job].append(stay)
                    self.stay_at[g, n] = stay
        if unit.upto:  # an elastic target: any ready gang, not the fixed rule's minimum
            add_gang_minimum(m, di.problem, unit.job, placed, unit.upto, on)
        for k, level in enumerate(unit.model_levels):
            dom = di.domains(level.tier)
            picks: dict[int, cp_model.IntVar] = {}
            for g in level.groups:
                for n in np.flatnonzero(di.allowed(unit, g)).tolist():
                    d = int(dom[n])
                    if d not in picks:
                        picks[d] = m.new_bool_var(f"in_{unit.job}_{k}_{d}")
                        self.picks[unit.job, k, d] = picks[d]
                    m.add(self.x[g, n] <= unit.model_counts[g] * picks[d])
            m.add(sum(picks.values()) == on)

    def _free(self) -> None:
        """Per candidate domain of each ``free`` tier, ``idle`` ⇒ no pod arrives on its nodes
        and every movable job with a pod there moves; at most N idle domains count per tier."""
        di, m = self.di, self.m
        arriving: dict[int, list] = defaultdict(list)
        for (_, n), var in self.x.items():
            arriving[n].append(var)
        for tier, count in sorted(di.free.items()):
            dom = di.domains(tier)
            for d in di.free_candidates(tier):
                idle = self.idle[tier, d] = m.new_bool_var(f"idle_{tier}_{d}")
                inside = np.flatnonzero(dom == d).tolist()
                for n in inside:
                    for var in arriving.get(n, []):
                        m.add(var == 0).only_enforce_if(idle)
                for unit in di.movable:
                    if any(dom[n] == d for per in unit.current.values() for n in per):
                        m.add(self.on[unit.job] >= idle)
            m.add(sum(v for (t, _), v in self.idle.items() if t == tier) <= count)

    def _capacity(self) -> None:
        """Per node that may receive pods, per resource requested there: fixed pods + staying
        pods + arriving pods ≤ allocatable (or what is used now, if more: not the plan's doing)."""
        p, base = self.di.problem, self.di.base_free
        now = np.zeros_like(base)
        for unit in self.di.movable:
            for g, per_node in unit.current.items():
                for n, here in per_node.items():
                    now[n] += here * p.group_request[g]
        for n in self.arrive:
            terms = self.load[n]
            for r in range(len(p.resources)):
                used = [(t, int(p.group_request[g][r])) for t, g in terms
                        if p.group_request[g][r] > 0]
                if used:
                    self.m.add(sum(a * t for t, a in used) <= int(max(base[n, r], now[n, r])))


class _Stages:
    """The lexicographic stages over one model, each warm-started from the last solution."""

    def __init__(self, model: _Model, time_limit: float, seed: int,
                 wall: float | None = None) -> None:
        self.model, self.limit, self.seed = model, time_limit, seed
        self.wall = time_limit if wall is None else wall  # wall-clock seconds for all stages
        self.start = time.perf_counter()
        self.values: dict[str, int] | None = None  # the last solution: variable name -> value
        self.log: list[dict] = []

    def hint(self, values: dict) -> None:
        m = self.model.m
        m.clear_hints()
        for var in self._vars():
            if var.name in values:
                m.add_hint(var, values[var.name])

    def _vars(self) -> list:
        mod = self.model
        return [*mod.on.values(), *mod.x.values(), *mod.stay, *mod.picks.values(),
                *mod.idle.values(), *mod.moves.values(), *mod.leave,
                *(mod.waves.variables if mod.waves is not None else [])]

    def run(self, name: str, objective, share: float, *, maximize: bool) -> tuple:
        """Solve one stage; returns (status, value, bound) and keeps its solution."""
        m = self.model.m
        (m.maximize if maximize else m.minimize)(objective)
        if self.values is not None:
            self.hint(self.values)
        solver = cp_model.CpSolver()
        params = solver.parameters
        params.num_workers = 1  # one sequential search: deterministic
        params.random_seed = self.seed
        params.catch_sigint_signal = False  # Ctrl-C belongs to the host
        params.max_deterministic_time = max(0.01, share * self.limit)
        params.max_time_in_seconds = max(0.01, self.wall - (time.perf_counter() - self.start))
        if self.model.di.repairs:
            # symmetry detection with a hint ran 225 s past a 10 s limit on a 576-tray repair
            # (docs/defrag.md, "Repair after node failures")
            params.symmetry_level = 0
        if self.model.waves is not None:
            # probing and linear-overlap detection took 25 of 33 s of presolve on a 144-node
            # wave model, before its complete hint could be taken (docs/defrag.md, "Waves")
            params.cp_model_probing_level = 0
            params.find_big_linear_overlap = False
        code = solver.solve(m)
        status = _STATUS.get(code, SolveStatus.UNKNOWN)
        value = bound = None
        if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            value = round(solver.objective_value)
            bound = solver.best_objective_bound
            self.values = {v.name: solver.value(v) for v in self._vars()}
        self.log.append({"stage": name, "status": str(status), "value": value, "bound": bound,
                         "deterministic_time": solver.deterministic_time,
                         "wall_time_s": solver.wall_time})
        return status, value, bound


def _hint_values(model: _Model, hint: DefragResult) -> dict[str, int]:
    values = {var.name: 0 for var in [*model.on.values(), *model.x.values(),
                                      *model.picks.values(), *model.idle.values(),
                                      *model.moves.values()]}
    for (_, d), var in model.idle.items():
        values[var.name] = int(d in hint.freed)
    for job, var in model.moves.items():
        values[var.name] = int(job in hint.moved)
    units = {u.job: u for u in model.di.units}
    for job in dict.fromkeys([*hint.admitted, *hint.repaired, *hint.moved]):
        if job in model.on:
            values[model.on[job].name] = 1
        for g, per_node in hint.placements.get(job, {}).items():
            for n, count in per_node.items():
                if (g, n) in model.x:
                    values[model.x[g, n].name] = count
        for k, level in enumerate(units[job].model_levels if job in units else []):
            dom = model.di.domains(level.tier)
            for g in level.groups:
                for n in hint.placements.get(job, {}).get(g, {}):
                    pick = model.picks.get((job, k, int(dom[n])))
                    if pick is not None:
                        values[pick.name] = 1
    if model.waves is not None:  # the greedy sequencer's waves of the hint, where it finds some
        rows = plan_changes(model.di, hint)[0]
        waves = assign_waves(model.di, rows, model.di.waves)
        if waves is not None:
            values.update(model.waves.hint(rows, waves, model.di.budgets.charged_pods))
            model.waves.hint_kept(values)
    return values


def _staged(model: _Model, stages: _Stages, *, max_moves: int | None,
            hint: DefragResult | None, floor: tuple[int, tuple] | None = None) -> tuple:
    """Stages 0-2 (and 3 on the full model) over ``model``; returns stage 2's status and
    bound, and what stages 0-1 reached. ``floor``: the master's lower bound on the move cost and
    what its stages 0-1 reached; added as a constraint only where this model reaches the same
    (with fewer idle domains or admitted targets the cost may be lower)."""
    di, on, m = model.di, model.on, model.m
    movers = [*di.movable, *di.repairs]
    if max_moves is not None:
        m.add(sum(model.moved(u) for u in movers) <= max_moves)
    weights = priority_weights(di.targets)
    admitted = sum(weights[u.job] * on[u.job] for u in di.targets)
    cost = sum(u.cost * model.moved(u) for u in movers)
    most = best = fixed = None
    if hint is not None and (max_moves is None or len(hint.moved) <= max_moves):
        stages.values = _hint_values(model, hint)
    s0 = s1 = SolveStatus.OPTIMAL
    if di.repairs:
        rweights = priority_weights(di.repairs)
        repaired = sum(w * on[j] for j, w in rweights.items())
        if hint is not None and set(hint.repaired) >= set(rweights):  # all: nothing to prove
            fixed = sum(rweights.values())
            stages.log.append({"stage": "repaired", "status": "OPTIMAL", "value": fixed,
                               "bound": fixed, "note": "the greedy repaired every job"})
        else:
            s0, fixed, _ = stages.run("repaired", repaired, REPAIR_SHARE, maximize=True)
        if fixed is None:
            return s0, None, None
        m.add(repaired >= fixed)
    if model.idle:
        freed = sum(model.idle.values())
        s_free, most, _ = stages.run("freed", freed, FREE_SHARE, maximize=True)
        s0 = s0 if s_free == SolveStatus.OPTIMAL else s_free
        if most is None:
            return s_free, None, None
        m.add(freed >= most)
    if di.targets:
        start = stages.values
        s1, best, _ = stages.run("admitted", admitted, STAGE_SHARES[0], maximize=True)
        every = sum(weights.values())
        if best is None and start is not None and sum(
                w * start.get(on[j].name, 0) for j, w in weights.items()) == every:
            best = every  # the hint admits every target (the stage found nothing in time)
        if best is None:
            return s1, None, None
        if best == every:  # every target: nothing more to prove
            s1 = SolveStatus.OPTIMAL
        m.add(admitted >= best)
        _cheaper_hint(model, stages, start, best, weights)
    floored = floor is not None and floor[1] == (fixed, most, best)
    if floored:
        m.add(cost >= floor[0])
    s2, value, bound = stages.run("move cost", cost, STAGE_SHARES[1], maximize=False)
    held = value if value is not None or stages.values is None else _cost_of(model,
                                                                             stages.values)
    if held == 0:  # costs are positive: no move is the least (a stage cut by the wall clock)
        s2, bound = SolveStatus.OPTIMAL, 0.0
    if value is not None and not model.relaxed:
        m.add(cost <= value)
        stages.run("pods moved", model.pods_moved(), STAGE_SHARES[2], maximize=False)
    status = SolveStatus.OPTIMAL if s0 == s1 == s2 == SolveStatus.OPTIMAL else (
        SolveStatus.FEASIBLE if stages.values is not None else s2)
    if floored and bound is not None:
        bound = max(bound, floor[0])
    return status, bound, (fixed, most, best)


def _cheaper_hint(model: _Model, stages: _Stages, start: dict | None, best: int,
                  weights: dict[int, int]) -> None:
    """Warm-start the move-cost stage from the admitted stage's own hint (``start``: the
    greedy's plan, or the stage before's solution) rather than the admitted stage's solution
    where the hint admits as much and costs less
    (stage 1 does not look at the cost: on a 576-node elastic case its plan cost 827 against
    the greedy's 0, and stage 2 ran out of time from there)."""
    if start is None or stages.values is None:
        return
    if sum(w * start.get(model.on[j].name, 0) for j, w in weights.items()) < best:
        return
    if _cost_of(model, start) < _cost_of(model, stages.values):
        stages.values = start


def _cost_of(model: _Model, values: dict) -> int:
    """The move cost of a solution (variable name -> value)."""
    movers = [*model.di.movable, *model.di.repairs]
    return sum(u.cost * values.get(getattr(model.moved(u), "name", ""), 0) for u in movers)


def _extend(di: DefragInput, result: DefragResult) -> DefragResult | None:
    """The master's plan with its moved jobs re-placed first-fit (most pods first) around the
    admitted targets and the jobs that stay, each keeping its pods on their nodes where room is
    left (:func:`place_unit` ``stay``); None if one finds no room."""
    free = di.base_free.copy()
    for job in [*result.admitted, *result.repaired]:
        for g, per_node in result.placements[job].items():
            for n, count in per_node.items():
                free[n] -= count * di.problem.group_request[g]
    for unit in [*di.movable, *di.repairs]:
        if unit.job not in result.moved and unit.job not in result.repaired:
            for g, per_node in unit.current.items():
                for n, here in per_node.items():
                    free[n] -= here * di.problem.group_request[g]
    everywhere = ~freed_nodes(di, result.freed)
    for unit in sorted((u for u in di.movable if u.job in result.moved),
                       key=lambda u: (-u.pods, u.job)):
        placed = place_unit(di, unit, free, everywhere, stay=True)
        if placed is None:
            return None
        result.placements[unit.job] = placed
        if {g: {n: c for n, c in per.items() if c} for g, per in placed.items()} == unit.current:
            # every pod back where it runs: not a move (only a master not solved to optimality
            # moves a job that can stay whole)
            result.moved.remove(unit.job)
            del result.placements[unit.job]
    # the master leaves moved jobs' budget use out: the pods they keep decide it
    return result if di.budgets.fits(di.budget_use(result.placements)) else None


def run_cpsat(di: DefragInput, *, time_limit: float = 10.0, seed: int = 0,
              max_moves: int | None = None, hint: DefragResult | None = None,
              wall_factor: float = 1.0, full_model: str = "auto") -> DefragResult:
    """The fewest moves that admit the most targets (see the module docstring).

    First the **master**, where a moved job simply leaves (a relaxation: its optimum bounds
    the true one from below); if its moved jobs then find room first-fit, its plan is optimal
    whenever the master was solved to optimality. Otherwise the full model decides, with the
    master's bound as a floor.

    Parameters
    ----------
    di
        The defragmentation's targets and movable jobs.
    time_limit
        Seconds for all stages (deterministic time; the wall clock caps it too).
    seed
        CP-SAT's random seed.
    max_moves
        At most this many jobs moved; None: no limit.
    hint
        A plan to start from (the greedy's).
    wall_factor
        The wall clock caps the stages at ``wall_factor × time_limit`` seconds (a replay sets
        10 or more so that the deterministic budget, not the machine's load, ends them).
    full_model
        One of :data:`FULL_MODEL_MODES`: ``auto`` (default); ``waves`` / ``one-wave`` never
        keep the master's plan, and decide in the full model with / without wave variables
        (``benchmarks/bench_defrag_wave_model.py``).

    Returns
    -------
    DefragResult
        ``status`` is stage 2's (move cost), ``bound`` its proven lower bound.
    """
    start = time.perf_counter()
    master = _Model(di, relaxed=True)
    wall = time_limit * wall_factor
    stages = _Stages(master, time_limit, seed, wall)
    status, bound, reached = _staged(master, stages, max_moves=max_moves, hint=hint)
    result = _extend(di, _result(master, stages.values or {}, status, bound))
    if full_model != "auto" or (result is not None and di.waves > 1 and assign_waves(
            di, plan_changes(di, result)[0], di.waves) is None):
        result = None  # the sequencer cannot put the master's plan in waves: the full model
    path = "master"
    size = sum(int(di.allowed(u, g).sum()) for u in di.movable for g in u.counts)
    # in waves, each x variable comes with one per wave: too many, and the sequencer decides
    in_model = size * di.waves <= FULL_MODEL_LIMIT and full_model != "one-wave"
    waves = di.waves if in_model else 1
    if result is None and size > FULL_MODEL_LIMIT and di.budgets.uses:
        # too large to build: a master within the budgets however its jobs are re-placed
        strict = _strict_master(di, stages, (bound, reached), time_limit - _used(stages),
                                wall - (time.perf_counter() - start), seed, max_moves, hint)
        if strict is not None:
            path = f"strict master: full model too large ({size} x variables)"
            result, stages = strict
    if result is None and hint is not None and size > FULL_MODEL_LIMIT:
        # building it alone would take longer than the time limit (measured: docs/defrag.md)
        path = f"greedy: full model too large ({size} x variables)"
        result = DefragResult(SolveStatus.FEASIBLE, hint.placements, hint.admitted, hint.moved,
                              freed=hint.freed, repaired=hint.repaired)
    elif result is None:
        path = "full model" if waves == di.waves else (
            "full model, waves sequenced after it" + ("" if full_model == "one-wave" else
                                                      f" ({size * di.waves} x and wave variables)"))
        floor = (int(np.ceil(bound - 1e-6)), reached) if bound is not None else None
        full = _Model(di, waves=waves)
        log = stages.log
        stages = _Stages(full, max(0.01, time_limit - _used(stages)), seed,
                         max(0.01, wall - (time.perf_counter() - start)))
        stages.log = log
        status, bound, _ = _staged(full, stages, max_moves=max_moves, hint=hint, floor=floor)
        result = _result(full, stages.values or {}, status, bound)
    freed = [e for e in stages.log if e["stage"] == "freed"][-1:]
    proven = bool(freed) and freed[0]["status"] == "OPTIMAL" and not path.startswith("greedy")
    result.stats.update(stages=stages.log, wall_time_s=time.perf_counter() - start, path=path,
                        free_proven=proven)
    return result


def _used(stages: _Stages) -> float:
    """Deterministic time the stages so far took (not wall time: the same budget on any load)."""
    return sum(entry.get("deterministic_time", 0.0) for entry in stages.log)


def _strict_master(di: DefragInput, relaxed: _Stages, proof: tuple, time_left: float,
                   wall_left: float, seed: int, max_moves: int | None,
                   hint: DefragResult | None) -> tuple[DefragResult, _Stages] | None:
    """The master again, each moved job counting all its charged pods against its budgets, so
    that its re-placement keeps them whatever pods stay; None if that finds no room. Proven
    minimal only where it reaches what the relaxed master did (``proof``: its bound and its
    stages' values) at the relaxed bound."""
    model = _Model(di, relaxed=True, strict=True)
    stages = _Stages(model, max(0.01, time_left), seed, max(0.01, wall_left))
    stages.log = relaxed.log
    status, _, reached = _staged(model, stages, max_moves=max_moves, hint=hint)
    result = _extend(di, _result(model, stages.values or {}, status, None))
    if result is None:
        return None
    bound, wanted = proof
    cost = sum(u.cost for u in [*di.movable, *di.repairs] if u.job in result.moved)
    same = reached == wanted and bound is not None
    result.bound = bound if same else None
    proven = status == SolveStatus.OPTIMAL and same and cost <= np.ceil(bound - 1e-6)
    result.status = SolveStatus.OPTIMAL if proven else SolveStatus.FEASIBLE
    return result, stages


def _result(model: _Model, values: dict[str, int], status: SolveStatus,
            bound: float | None) -> DefragResult:
    di, placements = model.di, {}
    admitted = [u.job for u in di.targets if values.get(model.on[u.job].name)]
    repaired = [u.job for u in di.repairs if values.get(model.on[u.job].name)]
    moved = [u.job for u in di.movable if values.get(model.on[u.job].name)]
    moved += [j for j, var in model.moves.items() if values.get(var.name)]
    per_group: dict[int, dict[int, int]] = defaultdict(dict)
    for (g, n), var in model.x.items():
        if values.get(var.name):
            per_group[g][n] = values[var.name]
    units = {u.job: u for u in di.units}
    for job in dict.fromkeys([*admitted, *repaired, *moved]):
        placement: Placement = {g: per_group[g] for g in units[job].model_counts}
        placements[job] = placement
    freed = sorted(d for (_, d), var in model.idle.items() if values.get(var.name))
    waved = model.waves.counts(values) if model.waves is not None else None
    return DefragResult(status, placements, admitted, moved, bound=bound, freed=freed,
                        repaired=repaired, waved=waved)
