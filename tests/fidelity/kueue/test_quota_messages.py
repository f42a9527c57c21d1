"""The quota reasons Kueue's tests assert (data/quota_messages.yaml), reproduced word for word:
the flavor assigner's per-resource reason, and a pending Workload's whole message from the
``kueue`` engine; the cases marked ``reproduced: false`` are counted, not run."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from builders import gang

import toposolve
from toposolve.core.instance import Instance, Node, Queue
from toposolve.core.quantity import parse_resource_amount
from toposolve.engines.kueue.reasons import quota_reason

DATA = yaml.safe_load((Path(__file__).parent / "data" / "quota_messages.yaml").read_text())


def _run(section: str) -> list[dict]:
    return [c for c in DATA[section] if c.get("reproduced", True)]


@pytest.mark.parametrize("case", _run("fits_resource_quota"), ids=lambda c: c["test"])
def test_fits_resource_quota_reason(case):
    r = case["resource"]
    milli = {k: parse_resource_amount(case[k], r)
             for k in ("previous", "request", "capacity", "used")}
    assert quota_reason(r, case["flavor"], **milli) == case["want"]


@pytest.mark.parametrize("case", _run("scheduler"), ids=lambda c: c["test"])
def test_pending_workload_message(case):
    queue = Queue(name="sales", capability=case["quota"], flavors=[case["flavor"]])
    running = parse_resource_amount(case["running"]["cpu"]) // 1000
    jobs = [gang("assigned", running, gpus=0, cpu=1, running={i: "node0" for i in range(running)})]
    (podset,) = case["podsets"]
    jobs.append(gang("new", podset["count"], gpus=0, cpu=int(podset["cpu"]), creation_index=1,
                     task=podset["name"]))
    jobs = [j.model_copy(update={"queue": "sales"}) for j in jobs]
    inst = Instance(nodes=[Node(name="node0", allocatable={"cpu": 128})], hypernodes=[],
                    queues=[queue], jobs=jobs)
    entry = toposolve.solve(inst, "kueue").job("default/new")
    assert entry is not None and not entry.placed
    assert entry.reason.startswith("ClusterQueue 'sales' nominal quota exceeded")
    assert entry.scheduler_reason == case["want"]


def test_the_count_the_docs_give():
    cases = DATA["fits_resource_quota"] + DATA["scheduler"]
    assert (len(cases), sum(c.get("reproduced", True) for c in cases)) == (9, 7)
