"""Pod index and SubJob membership (check/pods.py)."""

from __future__ import annotations

import pytest
from builders import example1_tree, gang, instance, nodes, partitioned

from toposolve.check.pods import index_pods, subjob_of
from toposolve.core.errors import InputError
from toposolve.core.instance import Job, LabelSelector, SubGroupPolicy, Task


def test_partition_pods_fall_in_the_subjob_named_by_their_match_label_values():
    job = partitioned(
        "pj", partitions=2, size=2, job_topology=None, partition_topology=None, min_available=4
    )
    pods = index_pods(instance(nodes(4), example1_tree(), [job]))
    assert [p.subjob for p in pods.values()] == [
        "default/pj/t0-0",
        "default/pj/t0-0",
        "default/pj/t0-1",
        "default/pj/t0-1",
    ]
    assert {p.policy for p in pods.values()} == {0}


def test_a_pod_without_every_match_label_key_stays_in_the_job_subjob():
    policy = SubGroupPolicy(
        name="p",
        label_selector=LabelSelector(match_labels={"role": "w"}),
        match_label_keys=["slot"],
    )
    job = Job(name="j", subgroup_policies=[policy])
    assert subjob_of(job, {"role": "w", "slot": "3"}) == (0, "default/j/p-3")
    assert subjob_of(job, {"role": "w"}) == (-1, "default/j")  # no value for slot
    assert subjob_of(job, {"role": "w", "slot": ""}) == (-1, "default/j")  # empty value
    assert subjob_of(job, {"role": "x", "slot": "3"}) == (-1, "default/j")  # selector fails


def test_a_policy_without_match_label_keys_takes_no_pod():
    job = Job(name="j", subgroup_policies=[SubGroupPolicy(name="p")])
    assert subjob_of(job, {"any": "thing"}) == (-1, "default/j")


def test_running_pods_carry_their_node_and_pending_pods_none():
    pods = index_pods(instance(nodes(2), [], [gang("a", 2, running={1: "node1"})]))
    assert {name: p.running_on for name, p in pods.items()} == {
        "default/a-worker-0": None,
        "default/a-worker-1": "node1",
    }


def test_two_pods_with_one_name_are_an_input_error():
    named = Job(
        name="j",
        tasks=[
            Task(name="t", replicas=1, pod_names=["p"]),
            Task(name="u", replicas=1, pod_names=["p"]),
        ],
    )
    with pytest.raises(InputError, match="duplicate pod name"):
        index_pods(instance(nodes(1), [], [named]))
