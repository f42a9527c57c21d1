"""The checker's deserved shares (check/quotas.py), worked by hand on 64 GPUs."""

from __future__ import annotations

import pytest
from builders import GPU, example1_tree, gang, in_queue, instance, nodes

from toposolve.check.quotas import deserved_shares, resources_of
from toposolve.core.instance import Queue


def shares(jobs, queues):
    inst = instance(nodes(8), example1_tree(), jobs)
    inst.queues = queues
    return {q: round(v[GPU] / 1000, 6) for q, v in deserved_shares(inst).items() if GPU in v}


def test_weights_split_the_cluster_when_every_queue_asks_for_more():
    """64 GPUs, weights 3:1, each queue asks for 64: a 48, b 16."""
    jobs = [in_queue(gang("a", 8), "a"), in_queue(gang("b", 8), "b")]
    assert shares(jobs, [Queue(name="a", weight=3), Queue(name="b", weight=1)]) == {
        "a": 48,
        "b": 16,
    }


def test_what_a_queue_does_not_ask_for_goes_to_the_others():
    """a asks for 8 (met in round one); b gets 16, then the 40 left over: 56."""
    jobs = [in_queue(gang("a", 1), "a"), in_queue(gang("b", 8), "b")]
    assert shares(jobs, [Queue(name="a", weight=3), Queue(name="b", weight=1)]) == {"a": 8, "b": 56}


def test_capability_caps_and_guarantee_raises_the_share():
    jobs = [in_queue(gang("a", 8), "a"), in_queue(gang("b", 8), "b")]
    capped = [Queue(name="a", weight=3, capability={GPU: 20}), Queue(name="b", weight=1)]
    assert shares(jobs, capped) == {"a": 20, "b": 44}
    guaranteed = [Queue(name="a", weight=1), Queue(name="b", weight=1, guarantee={GPU: 40})]
    assert shares(jobs, guaranteed)["b"] == pytest.approx(40)


def test_a_declared_deserved_share_is_taken_as_it_is():
    jobs = [in_queue(gang("a", 8), "a")]
    assert shares(
        jobs, [Queue(name="a", deserved={GPU: 5}), Queue(name="idle", deserved={GPU: 3})]
    ) == {"a": 5, "idle": 3}


def test_resource_pods_never_counts():
    inst = instance(nodes(1), [], [gang("a", 1, cpu=1)])
    inst.nodes[0].allocatable["pods"] = 110_000
    assert resources_of(inst) == ["cpu", GPU]
