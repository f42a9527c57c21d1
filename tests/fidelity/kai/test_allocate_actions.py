"""KAI's allocate-action tests with topology and SubGroups (data in ``data/allocate_actions.yaml``),
reproduced by the kai engine; every plan also passes toposolve's checker (``solve`` checks it)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

import toposolve

from .kai_objects import case_documents, load_case

DATA = yaml.safe_load((Path(__file__).parent / "data" / "allocate_actions.yaml").read_text())


def _pod_class(case: dict) -> dict[str, tuple]:
    """Pod name -> (job, SubGroup, GPUs): pods of one class are interchangeable."""
    out = {}
    for job in case["jobs"]:
        for i, task in enumerate(job["tasks"]):
            out[f"{job['name']}-{i}"] = (
                job["name"],
                task.get("subgroup"),
                task.get("gpus", job.get("gpus", 0)),
            )
    return out


def expected_and_placed(case: dict, bindings: dict[str, str]) -> tuple[dict, dict]:
    """Per pod class: the expected and the actual (nodes of placed pods, pods left pending);
    ``placed`` in the data means bound to any node."""
    cls = _pod_class(case)
    running = {
        f"{j['name']}-{i}"
        for j in case["jobs"]
        for i, t in enumerate(j["tasks"])
        if "running_on" in t
    }
    want: dict[tuple, Counter] = {}
    got: dict[tuple, Counter] = {}
    for pod, outcome in case.get("expect", {}).items():
        if pod in cls and pod not in running:
            want.setdefault(cls[pod], Counter())[outcome] += 1
            node = bindings.get(pod)
            if outcome == "placed" and node is not None:
                node = "placed"
            got.setdefault(cls[pod], Counter())[node or "pending"] += 1
    return want, got


PORTED = [c for c in DATA["cases"] if "not_ported" not in c]


@pytest.mark.parametrize("case", PORTED, ids=lambda c: c["name"])
def test_allocate_case(case, tmp_path):
    inst = load_case(tmp_path, case_documents(case))
    plan = toposolve.solve(inst, "kai")  # raises on a checker violation
    bindings = {b.pod.split("/", 1)[1]: b.node for b in plan.bindings}
    want, got = expected_and_placed(case, bindings)
    assert got == want
    for job, outcome in case.get("expect_jobs", {}).items():
        pods = [
            f"{job}-{i}"
            for i, t in enumerate(next(j for j in case["jobs"] if j["name"] == job)["tasks"])
            if "running_on" not in t
        ]
        if outcome["status"] == "pending":
            assert not any(p in bindings for p in pods)
        else:
            assert all(p in bindings for p in pods)
            if "node" in outcome and pods:
                assert {bindings[p] for p in pods} == {outcome["node"]}


# KAI's tests assert the PodGroup's message for pods without a namespace ("job </name>"); the
# ported cases put every object in namespace "default"
MESSAGES = [
    (case, job, outcome["message"].replace("job </", "job <default/"))
    for case in PORTED
    for job, outcome in case.get("expect_jobs", {}).items()
    if "message" in outcome
]


@pytest.mark.parametrize("case,job,message", MESSAGES, ids=[f"{c['name']}:{j}"
                                                          for c, j, _ in MESSAGES])
def test_kai_message(case, job, message, tmp_path):
    """KAI's asserted unschedulable message, word for word, as the plan's scheduler_reason."""
    plan = toposolve.solve(load_case(tmp_path, case_documents(case)), "kai")
    entry = plan.job(f"default/{job}")
    assert entry is not None and not entry.placed
    assert entry.scheduler_reason == message
