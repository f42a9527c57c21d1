"""The seeds' worked examples, solved by the heuristic (expectations derived by hand)."""

from __future__ import annotations

import numpy as np
import pytest
from builders import GPU, example1_tree, gang, hard, inner, instance, leaf, nodes, partitioned
from runs import heuristic_run

from toposolve.core.problem import compile_problem
from toposolve.engines.volcano import HeuristicEngine, lca_tier_score, tier_weights
from toposolve.policy.profiles import Profile


def placement(plan):
    return {b.pod.split("/", 1)[1]: b.node for b in plan.bindings}


def test_seed000_gradient_example():
    """Seed 000: Job0 (hard tier 2) and SubJob0 (hard tier 1) on HyperNode0..5."""
    tree = [
        *(leaf(f"HyperNode{k}", [f"node{2 * k}", f"node{2 * k + 1}"]) for k in range(4)),
        inner("HyperNode4", ["HyperNode0", "HyperNode1"], 2),
        inner("HyperNode5", ["HyperNode2", "HyperNode3"], 2),
    ]
    job = partitioned(
        "job0",
        partitions=2,
        size=2,
        job_topology=hard(2),
        partition_topology=hard(1),
        min_available=4,
    )
    problem = compile_problem(instance(nodes(8), tree, [job]))
    engine = HeuristicEngine(problem, Profile())
    names = problem.topology.names
    as_names = lambda grads: [[names[h] for h in g] for g in grads]  # noqa: E731
    assert as_names(engine.job_gradients(0)) == [
        ["HyperNode0", "HyperNode1", "HyperNode2", "HyperNode3"],
        ["HyperNode4", "HyperNode5"],
    ]
    subjob0 = problem.jobs[0].subjobs[0]
    root = problem.topology.root
    assert as_names(engine.subjob_gradients(subjob0, root)) == [
        ["HyperNode0", "HyperNode1", "HyperNode2", "HyperNode3"]
    ]
    hn4 = problem.topology.index["HyperNode4"]
    assert as_names(engine.subjob_gradients(subjob0, hn4)) == [["HyperNode0", "HyperNode1"]]


def test_seed000_partitioned_job_on_example1():
    """8 pods × 4 cpu, 2 partitions of 4 (hard tier 1) inside hard tier 2, nodes of 8 cpu.

    A tier-1 HyperNode (2 nodes × 8 cpu) holds exactly one partition. Partition 0 makes the job
    ready (minAvailable 4) in the first tier-1 HyperNode, s0; the second partition follows in the
    job's next pop, searched under s4 (the tier-2 ancestor of s0), and lands in s1.
    """
    job = partitioned(
        "network-topology-job",
        partitions=2,
        size=4,
        job_topology=hard(2),
        partition_topology=hard(1),
        min_available=4,
    )
    inst = instance(nodes(8, cpu=8, gpus=0), example1_tree(), [job])
    _, plan = heuristic_run(inst)
    got = placement(plan)
    assert got == {
        "network-topology-job-t0-0": "node0",
        "network-topology-job-t0-1": "node0",
        "network-topology-job-t0-2": "node1",
        "network-topology-job-t0-3": "node1",
        "network-topology-job-t0-4": "node2",
        "network-topology-job-t0-5": "node2",
        "network-topology-job-t0-6": "node3",
        "network-topology-job-t0-7": "node3",
    }
    (job_plan,) = plan.jobs
    assert job_plan.hypernode == "s4"
    assert {s.id: s.hypernode for s in job_plan.subjobs} == {
        "default/network-topology-job/t0-0": "s0",
        "default/network-topology-job/t0-1": "s1",
    }


def seed001_cluster():
    """12 nodes × 8 GPUs: tier-1 units of 2, tier-2 leaves of 4, one tier-3 spine."""
    tree = [leaf(f"unit{k}", [f"node{2 * k}", f"node{2 * k + 1}"]) for k in range(6)]
    tree += [inner(f"leaf{k}", [f"unit{2 * k}", f"unit{2 * k + 1}"], 2) for k in range(3)]
    tree += [inner("spine0", ["leaf0", "leaf1", "leaf2"], 3)]
    return nodes(12), tree


def test_seed001_story1_all_nodes_idle():
    node_list, tree = seed001_cluster()
    _, plan = heuristic_run(instance(node_list, tree, [gang("pod-1", 4, topology=hard(2))]))
    assert sorted(placement(plan).values()) == ["node0", "node1", "node2", "node3"]


def test_seed001_story2_first_leaf_busy():
    node_list, tree = seed001_cluster()
    busy = gang("busy", 4, running={i: f"node{i}" for i in range(4)})
    _, plan = heuristic_run(instance(node_list, tree, [busy, gang("pod-2", 4, topology=hard(2))]))
    assert sorted(placement(plan).values()) == ["node4", "node5", "node6", "node7"]


def test_seed004_fading_weights_and_lca_scores():
    assert np.allclose(tier_weights(1, 4, 0.8), [1, 0.8, 0.64, 0.512])
    assert np.allclose(tier_weights(1, 3, 0.0), [1, 0, 0])  # only tier 1 counts
    assert np.allclose(tier_weights(1, 3, 1.0), [1, 1, 1])
    # seed 004 tree: racks tier 1, tors tier 2, spine tier 3, virtual root tier 4
    assert np.allclose(lca_tier_score(np.array([2, 3, 4]), 1, 4), [2 / 3, 1 / 3, 0])


def test_tier_zero_weights_and_lca_scores():
    # Volcano: weight fading^(tier-1), so tier 0 weighs 1/fading; minTier 0 normalises LCA scores
    assert np.allclose(tier_weights(0, 3, 0.8), [1.25, 1, 0.8, 0.64])
    assert np.allclose(tier_weights(0, 2, 0.0), [1, 0, 0])  # 0^-1 = Inf in Go: tier 0 alone counts
    assert np.allclose(lca_tier_score(np.array([0, 1, 3]), 0, 3), [1, 2 / 3, 0])


@pytest.mark.parametrize("tie_break", ["deterministic", "random"])
def test_same_seed_same_plan(tie_break):
    node_list, tree = seed001_cluster()
    jobs = [gang(f"j{k}", 2, topology=hard(2), creation_index=k) for k in range(4)]
    profile = Profile.model_validate({"heuristic": {"tie_break": tie_break, "seed": 7}})
    plans = [
        placement(heuristic_run(instance(node_list, tree, jobs), profile)[1]) for _ in range(2)
    ]
    assert plans[0] == plans[1]
    assert len(plans[0]) == 8


def test_gpu_requests_use_the_gpu_resource():
    node_list, tree = seed001_cluster()
    problem, plan = heuristic_run(instance(node_list, tree, [gang("one", 1, topology=hard(1))]))
    assert GPU in problem.resources
    assert placement(plan) == {"one-worker-0": "node0"}


def test_seed000_example2_roce_nvlink_topology():
    """Example 2 (the bundled manifest): a 2-pod tier-1 job fits one NVLink network; a 4-pod
    tier-2 job then needs a whole RoCE network, and the first one with room is roce-network1."""
    from pathlib import Path

    from toposolve.formats.load import load_instance

    path = Path(__file__).resolve().parents[3] / "instances" / "seed000-example2.yaml"
    base = load_instance(path)
    jobs = [
        gang("pair", 2, topology=hard(1), creation_index=0),
        gang("quad", 4, topology=hard(2), creation_index=1),
    ]
    inst = base.model_copy(update={"jobs": jobs})
    _, plan = heuristic_run(inst)
    got = placement(plan)
    assert sorted(n for p, n in got.items() if p.startswith("pair")) == ["node1", "node2"]
    assert sorted(n for p, n in got.items() if p.startswith("quad")) == [
        "node5",
        "node6",
        "node7",
        "node8",
    ]
    assert plan.job("default/pair").hypernode == "nvlink-network0"
    assert plan.job("default/quad").hypernode == "roce-network1"
