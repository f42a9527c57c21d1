"""The knapsack refill of a warm start, and the coarse strategy that uses it."""

from __future__ import annotations

from builders import GPU, chain, example1_tree, gang, instance, nodes
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from strategies import instances

from toposolve.check.checker import check_plan
from toposolve.core.assignment import Assignment, to_plan
from toposolve.core.instance import PriorityClass, Queue
from toposolve.core.problem import compile_problem
from toposolve.engines.contract import SolveOptions
from toposolve.engines.cpsat.solve import coarse
from toposolve.engines.cpsat.solve.placed_bound import placed_upper_bound
from toposolve.engines.cpsat.solve.refill import knapsack_refill
from toposolve.engines.registry import get_engine
from toposolve.policy.objective import stage_values
from toposolve.policy.profiles import load_profile
from toposolve.solve import solve

CLASSES = [PriorityClass(name="high", value=100), PriorityClass(name="low", value=1)]


def hint_of(problem, placements: dict[str, int]) -> Assignment:
    """Every pending pod of each named job on the given node."""
    out = Assignment()
    for j in problem.pending_jobs:
        name = problem.jobs[j].key.split("/")[-1]
        if name in placements:
            for g in problem.jobs[j].groups:
                out.add(g, placements[name], problem.group_pending_count(g))
    return out


def placed_jobs(problem, plan: Assignment) -> set[str]:
    return {problem.jobs[j].key.split("/")[-1] for j in plan.placed_jobs(problem)}


def assert_valid(inst, problem, plan: Assignment) -> None:
    assert check_plan(inst, to_plan(problem, plan, engine="test", status="FEASIBLE")) == []


def test_two_small_gangs_make_room_for_a_whole_node():
    # 8 GPUs; the hint places 2 + 4 and leaves 2 idle; one 8-GPU gang uses them all
    jobs = [gang("a", 1, gpus=2), gang("b", 1, gpus=4, creation_index=1),
            gang("c", 1, gpus=8, creation_index=2)]
    inst = instance(nodes(1), [], jobs)
    problem = compile_problem(inst)
    refilled = knapsack_refill(problem, hint_of(problem, {"a": 0, "b": 0}))
    assert placed_jobs(problem, refilled) == {"c"}
    assert stage_values(problem, refilled)["placed"] == 8
    assert_valid(inst, problem, refilled)


def test_the_first_level_short_is_refilled_and_lower_jobs_kept_where_they_fit():
    # three 8-GPU nodes; the hint has high 2 + 4 on node0, low 8 on node1, node2 idle, and
    # leaves high's 8-GPU gang out: refilled, high takes 14 and the low gang still fits
    jobs = [gang("h2", 1, gpus=2, priority_class="high"),
            gang("h4", 1, gpus=4, priority_class="high", creation_index=1),
            gang("h8", 1, gpus=8, priority_class="high", creation_index=2),
            gang("l8", 1, gpus=8, priority_class="low", creation_index=3)]
    inst = instance(nodes(3), [], jobs, CLASSES)
    problem = compile_problem(inst)
    refilled = knapsack_refill(problem, hint_of(problem, {"h2": 0, "h4": 0, "l8": 1}))
    assert placed_jobs(problem, refilled) == {"h2", "h4", "h8", "l8"}
    assert_valid(inst, problem, refilled)


def test_a_lower_job_that_no_longer_fits_is_left_out():
    # two nodes: high's 14 GPUs leave 2, where the low 8-GPU gang does not fit
    jobs = [gang("h2", 1, gpus=2, priority_class="high"),
            gang("h4", 1, gpus=4, priority_class="high", creation_index=1),
            gang("h8", 1, gpus=8, priority_class="high", creation_index=2),
            gang("l8", 1, gpus=8, priority_class="low", creation_index=3)]
    inst = instance(nodes(2), [], jobs, CLASSES)
    problem = compile_problem(inst)
    refilled = knapsack_refill(problem, hint_of(problem, {"h2": 0, "h4": 0, "l8": 1}))
    assert placed_jobs(problem, refilled) == {"h2", "h4", "h8"}
    assert_valid(inst, problem, refilled)


def test_nothing_to_refill_when_every_level_is_at_its_subset_sum():
    jobs = [gang("a", 1, gpus=4), gang("b", 1, gpus=4, creation_index=1),
            gang("c", 1, gpus=8, creation_index=2)]
    problem = compile_problem(instance(nodes(1), [], jobs))
    assert knapsack_refill(problem, hint_of(problem, {"a": 0, "b": 0})) is None


def test_gangs_of_a_capped_queue_are_not_moved():
    # the queue's capability is what the hint already uses: swapping its gangs could pass it
    jobs = [gang("a", 1, gpus=2), gang("b", 1, gpus=4, creation_index=1),
            gang("c", 1, gpus=8, creation_index=2)]
    for job in jobs:
        job.queue = "capped"
    inst = instance(nodes(1), [], jobs)
    inst.queues = [Queue(name="capped", capability={GPU: 6})]
    problem = compile_problem(inst)
    assert knapsack_refill(problem, hint_of(problem, {"a": 0, "b": 0})) is None


def test_gangs_with_gang_nodes_are_not_moved():
    # the 8-GPU gang is nested three levels deep: repacking does not know GangNodes
    jobs = [gang("a", 1, gpus=2), gang("b", 1, gpus=4, creation_index=1),
            chain("c", 3).model_copy(update={"creation_index": 2})]
    problem = compile_problem(instance(nodes(1), [], jobs))
    assert problem.jobs[2].gang_nodes
    assert knapsack_refill(problem, hint_of(problem, {"a": 0, "b": 0})) is None


def test_the_coarse_strategy_returns_the_refill_proven_by_the_bound(monkeypatch):
    # 8 nodes of 8 GPUs under example 1's tree; the mirror fills 7 nodes with 8-GPU gangs and
    # the last with 2 + 4 (62 GPUs); dropping those two for the 8-GPU gang c places all 64
    monkeypatch.setattr(coarse, "COUNT_BUDGET", 1)  # the coarse model on 8 nodes
    monkeypatch.setattr(coarse, "LIFT_BUDGET", 0)
    jobs = [gang(f"w{k}", 1, gpus=8, creation_index=k) for k in range(7)]
    jobs += [gang("a", 1, gpus=2, creation_index=7), gang("b", 1, gpus=4, creation_index=8),
             gang("c", 1, gpus=8, creation_index=9)]
    inst = instance(nodes(8), example1_tree(), jobs)
    plan = solve(inst, "cpsat", time_limit=5)
    assert plan.stats["aggregation_level"] > 0
    assert plan.stats["volcano_objective_stages"]["placed"] == 62
    assert plan.stats["objective_stages"]["placed"] == 64
    placed = next(s for s in plan.stats["stages"] if s["stage"] == "placed")
    assert placed["status"] == "OPTIMAL" and placed["bound"] == 64 and placed["gap"] == 0
    # proven without a search: the refilled warm start reaches the knapsack bound
    assert placed["deterministic_time"] == 0


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          derandomize=True)
@given(st.one_of(instances(max_nodes=12, max_jobs=8),
                 instances(crowded=True, max_nodes=10, max_jobs=6, pools_and_shrunk=True)),
       st.data())
def test_refills_of_random_plans_are_valid_and_within_the_bound(inst, data):
    # the warm start: the mirror's plan with some of its jobs left out (still a valid plan)
    problem = compile_problem(inst)
    mirror = get_engine("volcano").load()(problem, load_profile(None), SolveOptions()).assignment
    jobs = sorted(mirror.placed_jobs(problem))
    dropped = set(data.draw(st.lists(st.sampled_from(jobs), min_size=1, unique=True))
                  if jobs else [])
    hint = Assignment(counts={g: dict(per) for g, per in mirror.counts.items()
                              if int(problem.group_job[g]) not in dropped})
    refilled = knapsack_refill(problem, hint)
    if refilled is None:
        return
    event("refilled")
    plan = to_plan(problem, refilled, engine="test", status="FEASIBLE")
    assert check_plan(inst, plan, eviction_mode="none") == []
    bound = placed_upper_bound(problem)
    assert bound is None or stage_values(problem, refilled)["placed"] <= bound
