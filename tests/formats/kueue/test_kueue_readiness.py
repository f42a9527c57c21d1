"""Kueue dumps: a bound Pod of a Workload that is not Ready marks its running pod not Ready, so
PodDisruptionBudgets count it as the Eviction API does (issue 20)."""

from __future__ import annotations

import yaml

from tests.kueue_elastic_dump import GROUP, HOST, cluster_docs
from toposolve.core.budgets import compile_budgets
from toposolve.formats.load import load_instance


def _workload(name: str, hosts: list[str]) -> dict:
    assignment = {"name": "main", "count": len(hosts), "topologyAssignment": {
        "levels": [HOST], "domains": [{"values": [h], "count": 1} for h in hosts]}}
    podset = {"name": "main", "count": len(hosts),
              "topologyRequest": {"required": "block"},
              "template": {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": [
                  {"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}
    return {"apiVersion": GROUP, "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"queueName": "lq", "podSets": [podset]},
            "status": {"admission": {"clusterQueue": "cq", "podSetAssignments": [assignment]}}}


def _pod(name: str, node: str, ready: str | None, phase: str = "Running",
         podset: str | None = "main") -> dict:
    status: dict = {"phase": phase}
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": ready}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default",
                         "labels": {"app": "w", **({"kueue.x-k8s.io/podset": podset}
                                                   if podset else {})},
                         "annotations": {"kueue.x-k8s.io/workload": "w"}},
            "spec": {"nodeName": node,
                     "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
            "status": status}


def _dump(*pods: dict, policy: str | None = None) -> list[dict]:
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
           "metadata": {"name": "pdb", "namespace": "default"},
           "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "w"}},
                    **({"unhealthyPodEvictionPolicy": policy} if policy else {})}}
    return [
        *cluster_docs(),
        _workload("w", ["x1", "x2", "x3"]), *pods, pdb]


def _load(tmp_path, docs, warnings=None):
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return load_instance(path, warn=(warnings.append if warnings is not None
                                     else lambda _: None))


def test_a_not_ready_pod_of_a_workload_is_read_not_ready(tmp_path):
    inst = _load(tmp_path, _dump(_pod("w-a", "x1", "True"), _pod("w-b", "x2", "False"),
                                 _pod("w-c", "x3", None, phase="Pending")))
    (task,) = inst.jobs[0].tasks
    assert task.running == {0: "x1", 1: "x2", 2: "x3"}
    assert task.unready == {1: "not-ready", 2: "starting"}


def test_budget_health_follows_the_pods_readiness(tmp_path):
    # maxUnavailable 1 of 3: desired healthy 2; one pod not Ready leaves 2 healthy: 0 allowed
    ready = _load(tmp_path, _dump(*(_pod(f"w-{i}", f"x{i}", "True") for i in (1, 2, 3))))
    one_down = _load(tmp_path, _dump(_pod("w-1", "x1", "True"), _pod("w-2", "x2", "False"),
                                     _pod("w-3", "x3", "True")))
    running = {"default/w-main-0": 0, "default/w-main-1": 1, "default/w-main-2": 2}
    names = {f"default/{t.pod_name(j.name, i)}"
             for j in ready.jobs for t in j.tasks for i in t.running}
    assert names == set(running)  # the pod names the budgets see
    (full,) = compile_budgets(ready, running)
    (short,) = compile_budgets(one_down, running)
    assert (full.allowed(), short.allowed()) == (1, 0)
    assert short.not_ready == {"default/w-main-1"}
    # IfHealthyBudget (the default): the not-Ready pod goes free while the budget is met
    assert short.charged() == {"default/w-main-0", "default/w-main-2"}
    # two down: healthy 1 < desired 2, the default charges them; AlwaysAllow never does
    for policy, charged in ((None, set(running)), ("AlwaysAllow", {"default/w-main-0"})):
        two_down = _load(tmp_path, _dump(_pod("w-1", "x1", "True"), _pod("w-2", "x2", "False"),
                                         _pod("w-3", "x3", "False"), policy=policy))
        (budget,) = compile_budgets(two_down, running)
        assert budget.charged() == charged


def test_a_pod_the_assignment_does_not_place_there_is_warned(tmp_path):
    warnings: list[str] = []
    inst = _load(tmp_path, _dump(_pod("w-a", "x1", "False"), _pod("w-b", "x1", "False")),
                 warnings)
    assert inst.jobs[0].tasks[0].unready == {0: "not-ready"}
    assert any("w-b: readiness not read" in w for w in warnings)


def test_without_a_podset_label_a_one_podset_workload_still_reads_it(tmp_path):
    inst = _load(tmp_path, _dump(_pod("w-a", "x2", "False", podset=None)))
    assert inst.jobs[0].tasks[0].unready == {1: "not-ready"}
