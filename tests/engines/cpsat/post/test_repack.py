"""Tier-first repacking (:mod:`toposolve.engines.cpsat.post.repack`): the same new pods per group,
placed in the lowest domain that holds the job, inside its running pods' domain, guided when
asked; None when a job does not fit.

Cluster: seed 000's Example-1 tree — racks s0 = node0, node1; s1 = node2, node3; s2 = node4,
node5; s3 = node6, node7 (tier 1) — of 8-GPU nodes."""

from __future__ import annotations

from builders import example1_tree, gang, hard, instance, nodes, soft

from toposolve.check.checker import check_plan
from toposolve.core.assignment import Assignment, to_plan
from toposolve.core.problem import Problem, compile_problem
from toposolve.engines.cpsat.post.repack import repack
from toposolve.policy.objective import stage_values


def on(problem: Problem, job: str, *node_names: str) -> Assignment:
    """New pods of ``job`` (one group), one on each named node."""
    (g,) = next(cj.groups for cj in problem.jobs if cj.key == f"default/{job}")
    out = Assignment()
    for name in node_names:
        out.add(g, problem.node_index[name], 1)
    return out


def node_names(problem: Problem, plan: Assignment) -> list[str]:
    names = problem.topology.node_names
    return sorted(
        names[n] for per in plan.counts.values() for n, c in per.items() for _ in range(c)
    )


def test_a_job_split_over_two_racks_is_repacked_into_one():
    inst = instance(nodes(8), example1_tree(), [gang("a", 2, topology=soft())])
    problem = compile_problem(inst)
    scattered = on(problem, "a", "node0", "node2")
    packed = repack(problem, scattered)
    assert node_names(problem, packed) == ["node0", "node1"]  # rack s0: lowest tier, first by index
    assert stage_values(problem, packed)["spread"] < stage_values(problem, scattered)["spread"]
    assert check_plan(inst, to_plan(problem, packed, engine="repack", status="FEASIBLE")) == []


def test_a_job_with_running_pods_stays_in_their_domain():
    """`b` runs one pod on node4 (hard tier 1): its new pod can only go to node5, however the
    plan placed it."""
    inst = instance(
        nodes(8), example1_tree(), [gang("b", 2, topology=hard(1), running={0: "node4"})]
    )
    problem = compile_problem(inst)
    assert node_names(problem, repack(problem, on(problem, "b", "node0"))) == ["node5"]


def test_the_guide_hypernode_is_tried_first():
    inst = instance(nodes(8), example1_tree(), [gang("a", 2, topology=soft())])
    problem = compile_problem(inst)
    s3 = problem.topology.index["s3"]
    (j,) = range(len(problem.jobs))
    packed = repack(problem, on(problem, "a", "node0", "node1"), guide={j: s3})
    assert node_names(problem, packed) == ["node6", "node7"]


def test_repacking_keeps_every_groups_pod_count():
    inst = instance(
        nodes(8), example1_tree(), [gang("a", 3, topology=soft()), gang("c", 2, topology=hard(2))]
    )
    problem = compile_problem(inst)
    plan = on(problem, "a", "node0", "node3", "node6")
    plan.counts.update(on(problem, "c", "node2", "node5").counts)
    packed = repack(problem, plan)
    assert {g: sum(per.values()) for g, per in packed.counts.items()} == {
        g: sum(per.values()) for g, per in plan.counts.items()
    }
    assert check_plan(inst, to_plan(problem, packed, engine="repack", status="FEASIBLE")) == []


def test_a_job_that_fits_nowhere_gives_none():
    """Nine 8-GPU pods on eight 8-GPU nodes."""
    inst = instance(nodes(8), example1_tree(), [gang("big", 9, min_available=1, topology=soft())])
    problem = compile_problem(inst)
    (g,) = problem.jobs[0].groups
    too_many = Assignment()
    too_many.add(g, 0, 9)
    assert repack(problem, too_many) is None


def test_an_empty_cluster_repacks_to_nothing():
    """No nodes at all (a pending job, nowhere to go): once a crash on the per-resource scale."""
    problem = compile_problem(instance([], [], [gang("a", 2)]))
    packed = repack(problem, Assignment())
    assert packed is not None and node_names(problem, packed) == []
