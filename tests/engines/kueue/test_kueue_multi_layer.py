"""Kueue's multi-layer slices (``TASMultiLayerTopology``) in the kueue engine, on the bundled dump
``instances/kueue-multilayer.yaml`` and on hand-made trees (the ported table cases are in
``tests/fidelity/kueue``)."""

from __future__ import annotations

from pathlib import Path

import pytest

import toposolve
from toposolve.core.problem import compile_problem
from toposolve.engines.kueue import run_kueue
from toposolve.engines.kueue.requests import job_requests
from toposolve.engines.kueue.tree import build_tree
from toposolve.formats.load import load_instance

DUMP = Path(__file__).resolve().parents[3] / "instances" / "kueue-multilayer.yaml"
SUBBLOCK = "cloud.google.com/gce-topology-subblock"


@pytest.fixture(scope="module")
def dump():
    return load_instance(DUMP, warn=lambda _: None)


def _domains(inst, plan, job: str, level: str) -> dict[int, set[str]]:
    """Per pod index of ``job``, the value of ``level`` on the node it is bound to."""
    labels = {n.name: n.labels for n in inst.nodes}
    return {int(b.pod.rsplit("-", 1)[1]): labels[b.node][level] for b in plan.bindings
            if b.pod.startswith(f"{job}-")}


def test_every_slice_of_every_layer_lies_in_one_domain_of_its_level(dump):
    plan = toposolve.solve(dump, "kueue")  # checked: every GangGroup's tier holds
    pretrain = _domains(dump, plan, "ml/pretrain", SUBBLOCK)
    hosts = _domains(dump, plan, "ml/pretrain", "kubernetes.io/hostname")
    assert len(pretrain) == 16
    for outer in range(2):  # subblock slices of 8
        assert len({pretrain[i] for i in range(8 * outer, 8 * outer + 8)}) == 1
    for inner in range(8):  # host slices of 2
        assert hosts[2 * inner] == hosts[2 * inner + 1]
    assert len(_domains(dump, plan, "ml/job-finetune", SUBBLOCK)) == 8  # the annotated Job


def test_a_host_slice_no_node_holds_keeps_the_workload_pending_in_kueues_words(dump):
    plan = toposolve.solve(dump, "kueue")
    (evaluation,) = [j for j in plan.jobs if j.job == "ml/eval"]
    assert not evaluation.placed
    assert evaluation.scheduler_reason == (
        'couldn\'t assign flavors to pod set evaluators: topology "gke" doesn\'t allow to fit; '
        f"0/1 slice(s) fit on level {SUBBLOCK}; 0/1 slice(s) fit on level kubernetes.io/hostname. "
        'Total nodes: 16; excluded: resource "nvidia.com/gpu": 12')
    assert evaluation.reason.startswith("topology doesn't allow to fit; 0/1 slice(s)")


def test_the_request_carries_kueues_inner_slice_sizes_per_level(dump):
    problem = compile_problem(dump)
    tree = build_tree(problem)
    j = next(cj.index for cj in problem.jobs if cj.key == "ml/pretrain")
    (req,) = job_requests(problem, tree, j)
    # block (3) required, subblock (2) slices of 8, host (1) slices of 2
    assert (req.spec.level, req.spec.slice_level, req.spec.slice_size) == (3, 2, 8)
    assert req.spec.layers == [(2, 8), (1, 2)] and req.spec.inner == {1: 2}


def test_a_gang_tree_of_another_shape_stays_pending_with_a_reason():
    from builders import example1_tree, hard, instance, nested, nodes

    job = nested("t", {"A": ["a0", "a1"], "B": ["b0"]}, group_topology=hard(1),
                 min_members={"A": 1, "B": 1})
    problem = compile_problem(instance(nodes(8), example1_tree(), [job]))
    assignment = run_kueue(problem)
    assert not assignment.counts
    assert "not Kueue's multi-layer slices" in assignment.reasons[0]


def _admitted(tmp_path, hosts: list[str], unhealthy: str):
    """The dump's cluster with one admitted Workload of 8 pods (4 GPUs each) in subblock slices of
    4 over host slices of 2, two pods on each of ``hosts``; ``unhealthy`` is NotReady."""
    import yaml
    from scheduler_docs import write_docs

    docs = [d for d in yaml.safe_load_all(DUMP.read_text()) if d["kind"] not in ("Workload", "Job")]
    for d in docs:
        if d["kind"] == "Node" and d["metadata"]["name"] == unhealthy:
            d["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    container = {"name": "c", "resources": {"requests": {"nvidia.com/gpu": "4"}}}
    workload = {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
        "metadata": {"name": "run", "namespace": "ml"},
        "spec": {"queueName": "team", "podSets": [{
            "name": "w", "count": 8, "template": {"spec": {"containers": [container]}},
            "topologyRequest": {"required": "cloud.google.com/gce-topology-block",
                                "podsetSliceRequiredTopologyConstraints": [
                                    {"topology": SUBBLOCK, "size": 4},
                                    {"topology": "kubernetes.io/hostname", "size": 2}]}}]},
        "status": {
            "admission": {"clusterQueue": "training", "podSetAssignments": [{
                "name": "w", "count": 8, "flavors": {"nvidia.com/gpu": "gpu"},
                "topologyAssignment": {"levels": ["kubernetes.io/hostname"], "slices": [{
                    "domainCount": len(hosts),
                    "valuesPerLevel": [{"individual": {"roots": hosts}}],
                    "podCounts": {"individual": [2] * len(hosts)}}]}}]},
            "conditions": [{"type": "Admitted", "status": "True"}],
            "unhealthyNodes": [{"name": unhealthy}]},
    }
    return load_instance(write_docs(tmp_path, [*docs, workload]), warn=lambda _: None)


def test_pods_of_an_unhealthy_node_are_replaced_inside_their_outer_slices_domain(tmp_path):
    inst = _admitted(tmp_path, ["gb-000", "gb-001", "gb-010", "gb-011"], "gb-000")
    plan = toposolve.solve(inst, "kueue")  # checked: the subblock slice keeps one subblock
    assert sorted((b.pod, b.node) for b in plan.bindings) == [
        ("ml/run-w-0", "gb-002"), ("ml/run-w-1", "gb-002")]


def test_a_replacement_with_no_room_in_its_slices_domain_waits(tmp_path):
    """Both subblock slices run in subblock-00, which has no free host once gb-001 fails: the
    pods wait rather than leave the subblock (free hosts elsewhere are not theirs)."""
    inst = _admitted(tmp_path, ["gb-000", "gb-001", "gb-002", "gb-003"], "gb-001")
    plan = toposolve.solve(inst, "kueue")
    assert plan.bindings == [] and not plan.jobs[0].placed


def test_solve_check_and_compare_run_on_the_multi_layer_dump(tmp_path, capsys):
    from toposolve.cli.main import main

    plan = tmp_path / "plan.json"
    assert main(["solve", str(DUMP), "--engine", "kueue", "-o", str(plan)]) == 0
    assert main(["check", str(DUMP), "--plan", str(plan)]) == 0
    assert "plan is valid: 24 bindings" in capsys.readouterr().out
    assert main(["compare", str(DUMP), "--engines", "kueue,cpsat", "--time-limit", "5"]) == 0
    out = capsys.readouterr().out
    assert "ml/eval" in out and "0/1 slice(s) fit on level" in out


def _random_dump(rng, tmp_path):
    """A random 3-level cluster (blocks, racks, hosts of 1-4 GPUs, some busy) and 1-5 Workloads
    in 2 or 3 layers of random sizes."""
    import yaml
    from scheduler_docs import write_docs

    levels = ["block", "rack", "kubernetes.io/hostname"]
    base = [d for d in yaml.safe_load_all(DUMP.read_text())
            if d["kind"] not in ("Workload", "Job", "Node", "Topology")]
    docs = [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology",
             "metadata": {"name": "gke"}, "spec": {"levels": [{"nodeLabel": k} for k in levels]}}]
    for b in range(rng.randint(1, 3)):
        for r in range(rng.randint(1, 3)):
            for h in range(rng.randint(1, 4)):
                name = f"n{b}{r}{h}"
                gpus = str(rng.randint(1, 4))
                docs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name,
                             "labels": dict(zip(levels, [f"b{b}", f"b{b}r{r}", name],
                                                strict=True))},
                             "status": {"allocatable": {"nvidia.com/gpu": gpus, "pods": "110"}}})
    for k in range(rng.randint(1, 5)):
        inner = rng.choice([1, 2])
        sizes = [inner * rng.choice([1, 2, 3]), inner]
        layers = [("rack", sizes[0]), ("kubernetes.io/hostname", sizes[1])]
        if rng.random() < 0.4:
            layers.insert(0, ("block", sizes[0] * rng.choice([1, 2])))
        count = layers[0][1] * rng.randint(1, 2)
        request = {"podsetSliceRequiredTopologyConstraints": [
            {"topology": t, "size": s} for t, s in layers]}
        if rng.random() < 0.7:
            request[rng.choice(["required", "preferred"])] = rng.choice(levels[:2])
        docs.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": {
            "name": f"w{k}", "namespace": "ml", "creationTimestamp": f"2026-11-01T10:0{k}:00Z"},
            "spec": {"queueName": "team", "podSets": [{"name": "p", "count": count, "template": {
                "spec": {"containers": [{"name": "c", "resources": {
                    "requests": {"nvidia.com/gpu": "1"}}}]}}, "topologyRequest": request}]}})
    return load_instance(write_docs(tmp_path, [*docs, *base]), warn=lambda _: None)


def test_random_multi_layer_queues_give_checked_plans(tmp_path):
    """Seeded random clusters and queues: every kueue plan passes the checker (solve raises on a
    violation; the checker holds each slice of each layer in one domain of its level)."""
    import random

    placed = 0
    for seed in range(40):
        path = tmp_path / str(seed)
        path.mkdir()
        inst = _random_dump(random.Random(seed), path)
        plan = toposolve.solve(inst, "kueue")
        assert toposolve.check_plan(inst, plan) == []
        placed += sum(1 for j in plan.jobs if j.placed)
    assert placed > 20


def test_a_slice_level_above_the_required_level_stays_pending_in_kueues_words(tmp_path):
    """Kueue's findTopologyAssignment refuses it ("podset slice topology … is above the podset
    topology …"); placing the slices at their level would break the required level."""
    import yaml
    from scheduler_docs import write_docs

    docs = [d for d in yaml.safe_load_all(DUMP.read_text()) if d["kind"] not in ("Workload",
                                                                                  "Job")]
    docs.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                 "metadata": {"name": "w", "namespace": "ml"},
                 "spec": {"queueName": "team", "podSets": [{
                     "name": "p", "count": 8, "template": {"spec": {"containers": [
                         {"name": "c", "resources": {"requests": {"nvidia.com/gpu": "1"}}}]}},
                     "topologyRequest": {"required": SUBBLOCK,
                                         "podsetSliceRequiredTopologyConstraints": [
                                             {"topology": "cloud.google.com/gce-topology-block",
                                              "size": 8},
                                             {"topology": SUBBLOCK, "size": 4}]}}]}})
    plan = toposolve.solve(load_instance(write_docs(tmp_path, docs), warn=lambda _: None), "kueue")
    assert plan.bindings == []
    assert plan.jobs[0].scheduler_reason == (
        "couldn't assign flavors to pod set p: podset slice topology "
        f"cloud.google.com/gce-topology-block is above the podset topology {SUBBLOCK}")
