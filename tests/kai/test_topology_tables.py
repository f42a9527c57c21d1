"""KAI-Scheduler's topology plugin tests (data in ``data/topology_plugin.yaml``) and its README
example, reproduced by the kai engine; cases not ported are listed in the data with why."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from toposolve.engines.kai import run_kai
from toposolve.engines.kai.domains import bin_pack_order, position_scores, subset_nodes
from toposolve.io.load import load_instance
from toposolve.problem import compile_problem

DATA = yaml.safe_load((Path(__file__).parent / "data" / "topology_plugin.yaml").read_text())


@pytest.mark.parametrize("case", DATA["sort_tree"], ids=lambda c: c["name"])
def test_sort_tree(case):
    free = {d: np.array(v, dtype=float) for d, v in case["free"].items()}
    assert bin_pack_order(np.array(case["demand"], dtype=float), free) == case["order"]


@pytest.mark.parametrize("case", DATA["node_scores"], ids=lambda c: c["name"])
def test_node_scores(case):
    got = {}
    for domain, score in zip(case["domains"], position_scores(len(case["domains"])), strict=True):
        for node in domain:
            got[node] = score
    assert got == case["scores"]


def _kai_docs(nodes: dict, levels: list[str], pods: int, requests: dict, constraint: dict) -> list[dict]:
    docs = [{"apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology", "metadata": {"name": "t"},
             "spec": {"levels": [{"nodeLabel": k} for k in levels]}}]
    for name, spec in nodes.items():
        docs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {k: spec[k] for k in levels}},
                     "status": {"allocatable": {r: spec[r] for r in ("cpu", "nvidia.com/gpu") if r in spec}}})
    docs.append({"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup", "metadata": {"name": "job", "namespace": "default"},
                 "spec": {"minMember": pods, "queue": "q", "topologyConstraint": {"topology": "t", **constraint}}})
    for i in range(pods):
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"job-{i}", "namespace": "default", "annotations": {"pod-group-name": "job"}},
                     "spec": {"schedulerName": "kai-scheduler", "containers": [{"name": "c", "resources": {"requests": requests}}]}})
    return docs


def _problem(tmp_path, docs):
    path = tmp_path / "kai.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return compile_problem(load_instance(path, warn=lambda _: None))


@pytest.mark.parametrize("case", DATA["subset_nodes"], ids=lambda c: c["name"])
def test_subset_nodes(case, tmp_path):
    constraint = {"requiredTopologyLevel": case["required"]}
    if case.get("preferred"):
        constraint["preferredTopologyLevel"] = case["preferred"]
    problem = _problem(tmp_path, _kai_docs(case["nodes"], ["zone", "rack"], case["tasks"], {"cpu": case["cpu_per_task"]}, constraint))
    pods = [g for g in problem.jobs[0].groups for _ in problem.group_pending[g]]
    free = problem.allocatable - problem.used
    got = subset_nodes(problem, free, problem.jobs[0].limit, pods, np.ones(problem.n_nodes, dtype=bool), None)
    if case["first_subset"] is None:
        assert got.node_sets == [] and got.reason is not None
        return
    first = sorted(problem.topology.node_names[n] for n in np.flatnonzero(got.node_sets[0]))
    assert first == sorted(case["first_subset"])


def test_readme_example(tmp_path):
    ex = DATA["readme_example"]
    nodes = {}
    for zone, racks in ex["racks"].items():
        for rack, gpus in racks.items():
            for k in range(gpus):
                nodes[f"{rack}-{k}"] = {"zone": zone, "rack": rack, "nvidia.com/gpu": 1, "cpu": 8}
    constraint = {"requiredTopologyLevel": ex["required"], "preferredTopologyLevel": ex["preferred"]}
    problem = _problem(tmp_path, _kai_docs(nodes, ["zone", "rack"], ex["pods"], {"nvidia.com/gpu": 1}, constraint))
    assignment = run_kai(problem)
    per_rack: dict[str, int] = {}
    for per_node in assignment.counts.values():
        for n, c in per_node.items():
            rack = problem.topology.node_names[n].rsplit("-", 1)[0]
            per_rack[rack] = per_rack.get(rack, 0) + c
    assert per_rack == ex["pods_per_rack"]
    assert all(r.startswith(ex["zone"].replace("zone-", "rack-")) for r in per_rack)
