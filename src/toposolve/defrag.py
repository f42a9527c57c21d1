"""``toposolve.defrag``: the fewest job moves that let blocked gangs in, as a checked plan.

A move re-places a running pod on another node; a job that moves restarts, so a job's move
cost is its pod count. The engines (:mod:`toposolve.engines.defrag`) read the compiled
:class:`~toposolve.core.problem.Problem`; the plan is then checked by the independent checker
(moves included) and returned only if valid. Rationale and limits: ``docs/defrag.md``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from toposolve.check.checker import check_plan
from toposolve.core.errors import InputError, require_type
from toposolve.core.instance import Instance
from toposolve.core.plan import Binding, JobPlacement, Move, Plan
from toposolve.core.problem import Problem, compile_problem
from toposolve.engines.common.crossing import crossing_reason
from toposolve.engines.contract import require_devices
from toposolve.engines.defrag.common import (
    FULL_MODEL_MODES,
    DefragInput,
    DefragResult,
    blocked_reason,
    build_input,
    freed_nodes,
    place_extras,
    plan_changes,
    repair_reason,
)
from toposolve.engines.defrag.greedy import run_greedy
from toposolve.engines.defrag.waves import assign_waves, model_waves

DEFRAG_ENGINES = ("cpsat", "greedy")

__all__ = ["DEFRAG_ENGINES", "DefragBug", "defrag"]


class DefragBug(RuntimeError):
    """A defragmentation engine produced a plan the checker rejects."""


def _targets(problem: Problem, admit: Sequence[str], free: dict[int, int],
             failed: np.ndarray | None = None) -> list[int]:
    if not admit and not free and failed is None:
        raise InputError("defrag needs jobs to admit (--admit NAMESPACE/JOB[,...]), domains "
                         "to free (--free TIER=N) or failed nodes to repair (--fail NODE[,...])",
                         obj="defrag", field="admit")
    index = {cj.key: cj.index for cj in problem.jobs}
    out = []
    for key in admit:
        j = index.get(key)
        if j is None:
            raise InputError(f"no job {key!r} in the instance", file=problem.source,
                             obj="defrag", field="admit")
        if not problem.has_pending(j) or problem.job_running_count(j):
            raise InputError(f"job {key!r} is not a pending job (defrag admits jobs none of "
                             "whose pods run)", file=problem.source, obj="defrag", field="admit")
        if j in problem.crossing_jobs:  # its limit is in a tree the defrag engines do not see
            why = crossing_reason(problem.crossing_jobs[j], "defrag")
            raise InputError(f"job {key!r} is {why}", file=problem.source, obj="defrag",
                             field="admit")
        out.append(j)
    return list(dict.fromkeys(out))


def _free_tiers(problem: Problem, free: Mapping[int | str, int] | None) -> dict[int, int]:
    """``free`` with tier names resolved; one-line error for an unknown tier or a bad N."""
    topo, out = problem.topology, {}
    for key, count in (free or {}).items():
        tier = topo.tier_name_to_tier.get(key, key) if isinstance(key, str) else key
        if isinstance(tier, str) and tier.isdigit():
            tier = int(tier)
        tiers = sorted(set(topo.tier.tolist()) - {topo.max_tier})
        if isinstance(tier, bool) or not isinstance(tier, int) or tier not in tiers:
            raise InputError(f"no HyperNode tier {key!r} to free (tiers: "
                             f"{', '.join(map(str, tiers)) or 'none'})", file=problem.source,
                             obj="defrag", field="free")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise InputError(f"the number of tier-{tier} domains to free must be a positive "
                             f"integer, not {count!r}", obj="defrag", field="free")
        out[tier] = count
    return out


def _failed_mask(problem: Problem, fail: Sequence[str]) -> np.ndarray | None:
    """[N] the nodes named in ``fail`` (None when empty); one-line error for an unknown one."""
    if not fail:
        return None
    mask = np.zeros(problem.n_nodes, dtype=bool)
    for name in fail:
        n = problem.node_index.get(name)
        if n is None:
            raise InputError(f"no node {name!r} in the instance", file=problem.source,
                             obj="defrag", field="fail")
        mask[n] = True
    return mask


def _repair_summary(di: DefragInput, result: DefragResult) -> dict:
    """``repaired`` and ``unrepaired`` (job → why, in one line) for a repair plan."""
    p, failed = di.problem, di.failed
    hit = list(dict.fromkeys(pod.job for pod in p.running if failed[pod.node]))
    units = {u.job: u for u in di.repairs}
    unrepaired = {}
    for j in hit:
        if j in result.repaired:
            continue
        unit = units.get(j)
        unrepaired[p.jobs[j].key] = (repair_reason(di, unit) if unit is not None else
                                     "not modelled: the job has pending pods or pods on unknown "
                                     "nodes")
    return {"failed": [p.topology.node_names[n] for n in np.flatnonzero(failed)],
            "repaired": [p.jobs[j].key for j in hit if j in result.repaired],
            "unrepaired": unrepaired}


def _free_summary(di: DefragInput, result: DefragResult) -> dict:
    """``freed`` (the idle domains' names) and, where fewer than asked, ``free_reason``."""
    names = di.problem.topology.names
    out: dict = {"freed": [names[d] for d in result.freed],
                 "free_asked": {str(t): n for t, n in sorted(di.free.items())}}
    proven = bool(result.stats.get("free_proven"))  # stage 0 optimal in the plan's model
    reasons = []
    for tier, count in sorted(di.free.items()):
        cands = di.free_candidates(tier)
        got = len(set(cands) & set(result.freed))
        if got < count:
            dom = di.domains(tier)
            total = len(set(dom[dom >= 0].tolist()))
            why = ("no more can be (proven)" if proven else
                   "the engine found no more (not proven: greedy, move limit or time)")
            reasons.append(f"freed {got} of the {count} tier-{tier} domains asked: {len(cands)} "
                           f"of the tier's {total} hold no pod that must stay, and {why}")
    if reasons:
        out["free_reason"] = "; ".join(reasons)
    return out


def _check_idle(plan: Plan, di: DefragInput) -> None:
    """The freed domains hold no pod once the plan is carried out (a :class:`DefragBug` if
    not): a second look, independent of the engines."""
    p, names = di.problem, di.problem.topology.node_names
    where = {pod.name: names[pod.node] for pod in p.running}
    where.update({m.pod: m.to for m in plan.moves})
    where.update({b.pod: b.node for b in plan.bindings})
    busy = set(where.values())
    idle = freed_nodes(di, [p.topology.names.index(n) for n in plan.stats["defrag"]["freed"]])
    full = [names[n] for n in range(p.n_nodes) if idle[n] and names[n] in busy]
    if full:
        raise DefragBug(f"freed domains hold pods on {', '.join(full[:5])}")


def _plan(di: DefragInput, result: DefragResult, engine: str, wall: float,
          staged: tuple[list[tuple[str, int, int]], list[int]] | None = None) -> Plan:
    """The checked plan's content; ``staged``: the moves and their waves (plans in waves)."""
    p = di.problem
    names = p.topology.node_names
    rows, bound = plan_changes(di, result)
    waves = None
    if staged is not None:
        rows, waves = staged
    order = sorted(range(len(rows)), key=lambda i: waves[i]) if waves else range(len(rows))
    moves = [Move(rows[i][0], names[rows[i][1]], names[rows[i][2]],
                  waves[i] if waves else None) for i in order]
    bindings = [Binding(pod, names[n]) for pod, n in bound]
    jobs = []
    for unit in di.targets:
        key = p.jobs[unit.job].key
        if unit.job in result.admitted:
            nodes = [n for per in result.placements[unit.job].values() for n in per]
            hypernode = p.topology.names[p.topology.lca_of_nodes(nodes)]
            jobs.append(JobPlacement(key, True, hypernode))
        else:
            jobs.append(JobPlacement(key, False, reason=blocked_reason(di, unit)))
    cost = sum(u.cost for u in [*di.movable, *di.repairs] if u.job in result.moved)
    dead = set() if di.failed is None else {names[n] for n in np.flatnonzero(di.failed)}
    replaced = sum(1 for m in moves if m.source in dead)
    summary = {
        "admitted": [p.jobs[j].key for j in result.admitted],
        "moved_jobs": [p.jobs[j].key for j in sorted(result.moved)],
        "move_cost": cost, "moved_pods": len(moves) - replaced, "status": str(result.status),
        "bound": result.bound, "proven_minimal": str(result.status) == "OPTIMAL",
        "movable_jobs": len(di.movable),
    }
    if di.free:
        summary.update(_free_summary(di, result))
    if di.failed is not None:
        summary.update(_repair_summary(di, result), replaced_pods=replaced)
    if waves is not None:
        summary["waves"] = max(waves, default=0)
    return Plan(engine=f"defrag-{engine}", status=str(result.status), objective=float(cost),
                bound=result.bound, wall_time_s=wall, bindings=bindings, jobs=jobs, moves=moves,
                failed=summary.get("failed", []), stats={"defrag": summary, **result.stats})


def defrag(instance: Instance, admit: Sequence[str] = (), max_moves: int | None = None,
           engine: str = "cpsat", time_limit: float = 10.0, seed: int = 0,
           free: Mapping[int | str, int] | None = None, fail: Sequence[str] = (),
           wall_factor: float = 1.0, max_waves: int = 1, full_model: str = "auto") -> Plan:
    """The fewest job moves that admit the ``admit`` jobs (and leave ``free`` domains idle),
    as a checked :class:`Plan`.

    Parameters
    ----------
    instance
        The cluster, its topology and its jobs.
    admit
        Keys (``namespace/name``) of pending jobs to let in.
    max_moves
        At most this many jobs moved; None: no limit.
    engine
        ``cpsat`` (proven minimal when its status is OPTIMAL) or ``greedy``.
    time_limit
        Seconds for the CP-SAT stages.
    seed
        CP-SAT's random seed.
    free
        Tier (number or name) → how many domains of that tier to leave idle (no pod at all);
        the idle domains come first, before admitting targets.
    fail
        Names of nodes that are gone: the pods they held are re-placed inside their jobs'
        domains (repairs come before everything else), moving the fewest other jobs.
    wall_factor
        CP-SAT's wall-clock cap in multiples of ``time_limit`` (at least 1): above 1, the
        deterministic budget ends the stages even on a loaded machine (a replay sets it).
    max_waves
        The moves may be carried out in up to this many waves, each started once the previous
        wave's replacements are Ready: each PodDisruptionBudget then bounds each wave, not the
        whole plan. 1 (default): one wave, the plan within the budgets as they are now.
    full_model
        ``cpsat`` only: ``auto`` (default), or ``waves`` / ``one-wave`` to make the full model
        decide with / without the waves as variables, for comparing the two
        (:data:`~toposolve.engines.defrag.common.FULL_MODEL_MODES`).

    Returns
    -------
    Plan
        Bindings of the admitted targets' pods, ``moves``, and ``stats["defrag"]`` (with
        ``free``: ``freed`` and, if fewer than asked, ``free_reason``; with ``fail``:
        ``failed``, ``repaired``, ``unrepaired`` and ``replaced_pods``). The failed pods
        re-placed are moves from their failed node; ``Plan.failed`` names the failed nodes.
        With ``max_waves`` > 1 every move has its ``wave`` (moves in wave order) and
        ``stats["defrag"]["waves"]`` says how many.
    """
    require_type(instance, Instance, "instance")
    _check_options(engine, wall_factor, max_moves, max_waves, full_model)
    start = time.perf_counter()
    problem = compile_problem(instance)
    require_devices(problem, "defrag", supported=False)
    tiers = _free_tiers(problem, free)
    failed = _failed_mask(problem, fail)
    targets = _targets(problem, admit, tiers, failed)

    def run(waves: int) -> tuple[DefragInput, DefragResult]:
        di = build_input(problem, targets, tiers, failed, waves)
        return di, _run_engines(di, engine, max_moves=max_moves, time_limit=time_limit,
                                seed=seed, wall_factor=wall_factor, full_model=full_model)

    di, result, staged, note = _in_waves(run, max_waves)
    plan = _plan(di, result, engine, time.perf_counter() - start, staged)
    if note:
        plan.stats["defrag"]["waves_note"] = note
    violations = check_plan(instance, plan, eviction_mode="none")
    if violations:
        lines = "\n".join(str(v) for v in violations[:20])
        raise DefragBug(f"defrag engine {engine!r} produced an invalid plan:\n{lines}")
    if di.free:
        _check_idle(plan, di)
    return plan


def _check_options(engine: str, wall_factor: float, max_moves: int | None, max_waves: int,
                   full_model: str) -> None:
    """One-line :class:`InputError` naming the first of :func:`defrag`'s options out of range."""
    if engine not in DEFRAG_ENGINES:
        raise InputError(f"unknown defrag engine {engine!r} (expected one of "
                         f"{', '.join(DEFRAG_ENGINES)})", obj="defrag", field="engine")
    if not 1 <= wall_factor < float("inf"):
        raise InputError(f"must be at least 1 and finite, got {wall_factor}", obj="defrag",
                         field="wall_factor")
    if max_moves is not None and max_moves < 0:
        raise InputError("must be at least 0", obj="defrag", field="max_moves")
    if isinstance(max_waves, bool) or not isinstance(max_waves, int) or max_waves < 1:
        raise InputError(f"must be a positive integer, got {max_waves!r}", obj="defrag",
                         field="max_waves")
    if full_model not in FULL_MODEL_MODES:
        raise InputError(f"must be one of {', '.join(FULL_MODEL_MODES)}, got {full_model!r}",
                         obj="defrag", field="full_model")


def _run_engines(di: DefragInput, engine: str, *, max_moves: int | None, time_limit: float,
                 seed: int, wall_factor: float, full_model: str) -> DefragResult:
    """The greedy's plan, then CP-SAT's from it (``engine="cpsat"``), extra pods added."""
    result = run_greedy(di, max_moves)
    if engine == "cpsat":
        # imported here: OR-Tools loads on first use, as with the registry's engines
        from toposolve.engines.defrag.cpsat import run_cpsat

        result = run_cpsat(di, time_limit=time_limit, seed=seed, max_moves=max_moves,
                           wall_factor=wall_factor, hint=result, full_model=full_model)
    place_extras(di, result)
    return result


def _in_waves(run: Callable[[int], tuple[DefragInput, DefragResult]], max_waves: int
              ) -> tuple[DefragInput, DefragResult, tuple | None, str | None]:
    """``run(max_waves)`` and its moves with their waves (None with one wave): the greedy
    sequencer's (it packs the moves into few waves), else CP-SAT's own where its wave model
    chose them; where neither can, ``run(1)`` in one wave instead, with a note saying so."""
    di, result = run(max_waves)
    if max_waves == 1:
        return di, result, None, None
    rows = plan_changes(di, result)[0]
    waves = assign_waves(di, rows, max_waves)
    if waves is not None:
        return di, result, (rows, waves), None
    staged = model_waves(di, result) if result.waved is not None else None
    if staged is not None:
        return di, result, staged, None
    note = (f"the moves could not be put in {max_waves} waves that each keep the budgets and "
            "the nodes' capacity; planned in one wave")
    di, result = run(1)
    rows = plan_changes(di, result)[0]
    return di, result, (rows, [1] * len(rows)), note
