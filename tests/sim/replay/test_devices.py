"""A replay with per-device sharing: devices carried across cycles, folded and released."""

from __future__ import annotations

import pytest

from toposolve.core.errors import InputError
from toposolve.core.instance import HyperNode, Instance, Member, Node
from toposolve.formats.trace.native import load_trace_documents
from toposolve.sim.replay import replay

GPU = "nvidia.com/gpu"


def cluster(gpus=(2, 2)):
    return Instance(nodes=[Node(name=f"n{i}", allocatable={"cpu": 64, GPU: g})
                           for i, g in enumerate(gpus)])


def job(name, arrival, milli=None, gpus=1, duration=None):
    task = {"name": "w", "replicas": 1, "requests": {"cpu": 1, GPU: f"{milli or gpus * 1000}m"}}
    if milli is not None:
        task["deviceShare"] = {"milli": milli}
    entry = {"name": name, "arrival": arrival, "tasks": [task]}
    if duration is not None:
        entry["duration"] = duration
    return entry


def trace(*jobs, shared=True):
    docs = [{"apiVersion": "toposolve/v1", "kind": "Trace", "jobs": list(jobs)}]
    out = load_trace_documents(docs, "t")
    if not shared:  # the same requests, pooled per node
        for tj in out.jobs:
            for task in tj.job.tasks:
                task.device_share = None
    return out


def statuses(record):
    return {row["job"].split("/")[1]: row["status"] for row in record.jobs}


def test_shares_that_fit_the_pool_but_no_device_are_dropped():
    jobs = [job(f"s{k}", k, milli=600) for k in range(4)] + [job("late", 4, milli=500)]
    per_device = replay(cluster(), trace(*jobs), cycle=1, max_wait=0)
    assert statuses(per_device) == {"s0": "running", "s1": "running", "s2": "running",
                                    "s3": "running", "late": "dropped"}
    pooled = replay(cluster(), trace(*jobs, shared=False), cycle=1, max_wait=0)
    assert statuses(pooled)["late"] == "running"  # the pool had 800m left on each node


def test_a_finished_share_gives_its_device_back_to_a_whole_gpu():
    jobs = [job("a", 0, milli=600, duration=5), job("b", 0, milli=600), job("w", 1, gpus=1)]
    record = replay(cluster((2,)), trace(*jobs), cycle=1)
    rows = {row["job"].split("/")[1]: row for row in record.jobs}
    assert rows["w"]["status"] == "running"
    assert rows["w"]["start"] >= rows["a"]["end"]  # no whole device until a's share ended


def test_defragmentation_with_devices_is_refused_in_one_line():
    with pytest.raises(InputError, match="per-device sharing of nvidia.com/gpu") as err:
        replay(cluster(), trace(job("s", 0, milli=300)), defrag="every=1")
    assert "\n" not in str(err.value)


def test_preemption_in_a_replay_frees_the_victims_devices():
    low = [dict(job(f"s{k}", 0, milli=600), priorityClass="low") for k in range(2)]
    urgent = dict(job("urgent", 1, gpus=1, duration=5), priorityClass="high")
    docs = [{"apiVersion": "toposolve/v1", "kind": "Trace", "jobs": [*low, urgent],
             "priorityClasses": [{"name": "low", "value": 1}, {"name": "high", "value": 100}]}]
    record = replay(cluster((2,)), load_trace_documents(docs, "t"), cycle=1, evict="preempt")
    rows = {row["job"].split("/")[1]: row for row in record.jobs}
    # both devices hold 600m: the whole GPU starts only because a share is evicted for it
    assert (rows["urgent"]["status"], rows["urgent"]["start"]) == ("done", 1.0)
    evicted = [name for name, row in rows.items() if row["evicted_pods"]]
    assert len(evicted) == 1 and rows[evicted[0]]["starts"] == 2  # back once a device is free


def test_a_kueue_replay_places_shares_on_devices_by_pooled_admission():
    racked = cluster()
    racked.hypernodes = [HyperNode(name="rack", tier=1,
                                   members=[Member.exact(n.name) for n in racked.nodes])]
    jobs = [job(f"s{k}", k, milli=600) for k in range(3)]
    kueue = replay(racked, trace(*jobs), "kueue", cycle=1, max_wait=0)
    # s0 and s1 fill n0's devices to 600m; TAS best-fits s2 on n0 by its pooled 800m, where no
    # device holds 600m: admitted, not bound, dropped (max_wait 0)
    assert statuses(kueue) == {"s0": "running", "s1": "running", "s2": "dropped"}
    volcano = replay(racked, trace(*jobs), "volcano", cycle=1, max_wait=0)
    assert statuses(volcano)["s2"] == "running"  # its predicate sees the devices
