"""Why CP-SAT left a job pending (engines/cpsat/post/explain.py): each relaxation on a small
case."""

from __future__ import annotations

from builders import GPU, example1_tree, gang, hard, in_queue, instance, nodes

from toposolve.core.assignment import Assignment
from toposolve.core.instance import Queue
from toposolve.core.problem import compile_problem
from toposolve.engines.cpsat.post.explain import explain_pending, job_need_pods
from toposolve.engines.cpsat.solve.parameters import Settings

SETTINGS = Settings(time_limit=5, workers=1, seed=0, deterministic=True, log=False)


def reasons(jobs, queues=(), assignment=None) -> dict[str, str]:
    inst = instance(nodes(8), example1_tree(), jobs)
    inst.queues = list(queues)
    problem = compile_problem(inst)
    found = explain_pending(problem, assignment or Assignment(), SETTINGS, 5.0, "OPTIMAL")
    return {problem.jobs[j].key: text for j, text in found.items()}


def test_a_job_too_large_for_the_cluster_does_not_fit_alone():
    (text,) = reasons([gang("huge", 9)]).values()
    assert "does not fit even alone" in text


def test_a_hard_tier_limit_names_the_tier_and_the_largest_free_domain():
    """3 × 8 GPUs within tier 1: every rack holds 16 GPUs."""
    (text,) = reasons([gang("wide", 3, topology=hard(1))]).values()
    assert "no HyperNode of tier ≤ 1 has room" in text and "largest tier-1 free: 16" in text


def test_a_queue_capability_is_named():
    (text,) = reasons(
        [in_queue(gang("q", 2), "small")], [Queue(name="small", capability={GPU: 8})]
    ).values()
    assert "capability" in text


def test_a_job_that_fits_what_the_plan_leaves_says_so():
    assert reasons([gang("a", 1)])["default/a"].startswith("fits in what")


def test_job_need_pods_is_the_largest_of_the_minimums():
    problem = compile_problem(instance(nodes(8), example1_tree(), [gang("a", 4, min_available=3)]))
    assert job_need_pods(problem, 0) == 3
