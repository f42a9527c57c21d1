"""Brute force for the aggregated bounds' tests (:mod:`toposolve.engines.cpsat.solve.spread_bound`,
:mod:`~toposolve.engines.cpsat.solve.fragmentation_bound`): tiny random instances of whole-node
gangs and the lexicographic optimum over every valid plan."""

from __future__ import annotations

import itertools
import json
import random

from builders import GPU, example1_tree, gang, hard, instance, nodes, partitioned

import toposolve
from toposolve.check.checker import check_plan
from toposolve.core.assignment import Assignment, to_plan
from toposolve.core.instance import PriorityClass
from toposolve.core.problem import Problem, compile_problem
from toposolve.engines.contract import SolveOptions
from toposolve.generate import generate
from toposolve.policy.objective import placed_pod_weights, stage_values

CLASSES = [PriorityClass(name=n, value=v) for n, v in (("high", 100), ("low", 1))]


def random_instance(seed: int):
    """Eight 8-GPU nodes in Example 1's tree (leaves of 2, tier-2 domains of 4), some held by a
    running pod; 2-3 pending whole-node gangs of 1-3 pods, hard at tier 1 or 2 or free, or
    partitioned into 2 SubJobs (each hard at tier 1 or free, the job hard at tier 1 or 2 or
    free); two priorities; every gang all-or-nothing."""
    rng = random.Random(seed)
    held = rng.sample(range(8), rng.randint(0, 3))
    jobs = [gang("hog", len(held), running={i: f"node{n}" for i, n in enumerate(held)},
                 creation_index=0)] if held else []
    for k in range(rng.randint(2, 3)):
        prio = rng.choice(["high", "low"])
        if rng.random() < 0.3:
            size = rng.randint(1, 2)
            job = partitioned(f"p{k}", partitions=2, size=size,
                              job_topology=rng.choice([None, hard(1), hard(2)]),
                              partition_topology=rng.choice([None, hard(1)]),
                              min_available=2 * size, requests={GPU: 8})
            job.priority_class = prio
        else:
            job = gang(f"j{k}", rng.randint(1, 3), topology=rng.choice([None, hard(1), hard(2)]),
                       priority_class=prio, creation_index=k + 1)
        jobs.append(job)
    return instance(nodes(8), example1_tree(), jobs, CLASSES)


def plans(problem: Problem):
    """Every assignment of whole-node pods: per pending job none or all of its pods, each group's
    pods on distinct free nodes it may use, no node twice."""
    most = problem.group_request.max(axis=0)
    free = {n for n in range(problem.n_nodes)
            if (problem.allocatable[n] - problem.used[n] >= most).all()}
    groups = [[g for g in problem.jobs[j].groups if problem.group_pending_count(g)]
              for j in problem.pending_jobs]

    def extend(k: int, left: set[int], chosen: list[tuple[int, tuple[int, ...]]]):
        if k == len(groups):
            yield list(chosen)
            return
        yield from extend(k + 1, left, chosen)  # job k not placed

        def place(i: int, room: set[int]):
            if i == len(groups[k]):
                yield from extend(k + 1, room, chosen)
                return
            g = groups[k][i]
            usable = sorted(n for n in room if problem.group_feasible[g][n])
            for picked in itertools.combinations(usable, problem.group_pending_count(g)):
                chosen.append((g, picked))
                yield from place(i + 1, room - set(picked))
                chosen.pop()

        yield from place(0, left)

    yield from extend(0, free, [])


def lexicographic_optimum(inst, problem: Problem,
                          stages: tuple[str, ...] = ("spread",)) -> tuple[int, ...]:
    """(largest ``placed``, then the least of each of ``stages`` in turn) over the valid plans."""
    best = None
    weights = placed_pod_weights(problem)
    for chosen in plans(problem):
        if best is not None and sum(weights[g] * len(p) for g, p in chosen) < best[0]:
            continue  # fewer placed than a valid plan already found
        plan = Assignment()
        for g, picked in chosen:
            for n in picked:
                plan.add(g, n, 1)
        values = stage_values(problem, plan)
        key = (values["placed"], *(-values[s] for s in stages))
        if best is not None and key <= best:
            continue
        if not check_plan(inst, to_plan(problem, plan, engine="brute", status="FEASIBLE")):
            best = key
    return (best[0], *(-v for v in best[1:]))


def floor_run(monkeypatch, runner, bound_name: str, stage_name: str, load: float) -> dict:
    """Solve an overloaded 128-node superpod with and without the runner's ``bound_name`` floor;
    assert the plans are the same and the stage's floor is a bound at most its value (proven
    where it meets it); return the stage's record."""
    problem = compile_problem(generate("superpod", nodes=128, load=load, seed=1, occupancy=0.15))
    options = SolveOptions(time_limit=20)
    with_floor = toposolve.solve_problem(problem, "cpsat", options=options)
    monkeypatch.setattr(runner, bound_name, lambda *a, **k: (None, 0.0))
    without = toposolve.solve_problem(problem, "cpsat", options=options)
    stage = next(s for s in with_floor.stats["stages"] if s["stage"] == stage_name)
    assert stage["floor"] is not None and stage["floor"] <= stage["objective"]
    assert _bindings(with_floor) == _bindings(without)
    assert stage["bound"] >= stage["floor"]
    if stage["objective"] == stage["floor"]:
        assert stage["status"] == "OPTIMAL"
    return stage


def _bindings(plan) -> str:
    return json.dumps(plan.to_dict(timings=False)["bindings"], sort_keys=True)
