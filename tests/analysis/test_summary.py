"""``toposolve show``: amounts in units people read, the tree by tier, the queue hierarchy."""

from __future__ import annotations

from builders import example1_tree, gang, hard, instance, nested, nodes

from toposolve.analysis.summary import describe_instance, queue_hierarchy
from toposolve.core.instance import Node, Queue
from toposolve.core.problem import compile_problem


def test_show_prints_amounts_with_suffixes_and_counts_hypernodes_in_words():
    big = [
        Node(name=f"node{i}", allocatable={"cpu": "96", "memory": "2000Gi", "nvidia.com/gpu": 8})
        for i in range(8)
    ]
    busy = gang("busy", 1, cpu=1, running={0: "node0"})
    busy.tasks[0].requests = {"cpu": "1500m", "memory": "1000000001", "nvidia.com/gpu": 8}
    text = describe_instance(compile_problem(instance(big, example1_tree(), [busy])))
    assert "  cpu: allocatable 768, used by running pods 1.5\n" in text
    assert "  memory: allocatable 15.6Ti, used by running pods 954Mi\n" in text
    assert "  nvidia.com/gpu: allocatable 64, used by running pods 8\n" in text
    assert "  tier 1: 4 HyperNodes, 2 nodes each: s0, s1, s2, s3\n" in text
    assert "  tier 3: 1 HyperNode, 8 nodes: s6\n" in text


def test_show_sums_memory_past_int64_exactly():
    # 8 nodes of 900Ti are 7.9e18 milli-bytes together, 16 of them pass int64's 9.2e18
    huge = [Node(name=f"node{i}", allocatable={"cpu": "1", "memory": "900Ti"}) for i in range(16)]
    text = describe_instance(compile_problem(instance(huge, example1_tree(), [])))
    assert "  memory: allocatable 14.1Pi, used by running pods 0\n" in text


def test_flat_queues_print_no_hierarchy():
    assert queue_hierarchy([Queue(name="default"), Queue(name="q")]) == []


def test_hierarchy_under_root_missing_parents_and_cycles():
    queues = [
        Queue(name="root"),
        Queue(name="team-a", parent="root"),
        Queue(name="train", parent="team-a"),
        Queue(name="infer", parent="team-a"),
        Queue(name="default"),  # no parent: under root, as in Volcano
        Queue(name="lost", parent="gone"),
        Queue(name="x", parent="y"),
        Queue(name="y", parent="x"),
    ]
    assert queue_hierarchy(queues) == [
        "queue hierarchy:",
        "  root",
        "    default",
        "    team-a",
        "      infer",
        "      train",
        "  gone (not in the input)",
        "    lost",
        "  in a parent cycle: x, y",
    ]


def test_show_names_the_depth_of_a_gang_tree():
    job = nested("t", {"A": ["a0", "a1"], "B": ["b0"]}, group_topology=hard(2))
    text = describe_instance(compile_problem(instance(nodes(8), example1_tree(), [job])))
    assert "3 SubJobs of 1 (none), gang tree of depth 3 (2 GangGroups)" in text


def test_show_names_the_topology_a_constraint_stays_in_and_each_trees_tier_names():
    from pathlib import Path

    from toposolve.formats.load import load_instance

    dump = Path(__file__).resolve().parents[2] / "instances" / "kai-two-topologies.yaml"
    text = describe_instance(compile_problem(load_instance(dump, warn=lambda _: None)))
    assert "minAvailable 3, topology hard tier ≤ 2 in cpu-topology\n" in text
    assert "2 SubJobs of 2 (hard tier ≤ 2 in gpu-topology)" in text
    assert ("  tier 2 (cpu-topology:topology.kubernetes.io/zone, "
            "gpu-topology:network.example.com/rack): 6 HyperNodes") in text


def test_show_lists_each_constraint_tree_and_the_constraints_measured_in_it():
    from pathlib import Path

    from toposolve.analysis.summary import instance_summary
    from toposolve.formats.load import load_instance

    dump = Path(__file__).resolve().parents[2] / "instances" / "kai-crossing-topologies.yaml"
    problem = compile_problem(load_instance(dump, warn=lambda _: None))
    text = describe_instance(problem)
    assert ("constraint tree zone-topology (a Topology crossing the main tree over the same "
            "nodes): 19 HyperNodes\n") in text
    assert ("  tier 3 (zone-topology:topology.kubernetes.io/zone): 2 HyperNodes, 4 nodes "
            "each") in text
    assert "minAvailable 3, topology hard tier ≤ 3 in constraint tree zone-topology\n" in text
    tiers = instance_summary(problem)["constraint_trees"]["zone-topology"]
    assert [(t["tier"], t["hypernodes"]) for t in tiers] == [(1, 8), (2, 8), (3, 2), (4, 1),
                                                             (5, 1)]
