"""The kueue engine without TAS (``engines/kueue/non_tas.py``): a workload whose flavor has no
Topology, or any job of an instance without a HyperNode tree, is admitted by quota in Kueue's
order and placed pod by pod as kube-scheduler would; a plan binds a workload whole or not."""

from __future__ import annotations

import copy

import yaml
from builders import GPU, nodes
from scheduler_docs import kueue_docs, podset, workload, write_docs

import toposolve
from toposolve.check.checker import check_plan
from toposolve.core.instance import Instance, Job, LabelSelector, SubGroupPolicy, Task
from toposolve.core.problem import compile_problem
from toposolve.engines.kueue.engine import run_kueue
from toposolve.formats.load import load_instance

NODE = {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "8", "pods": "110"}


def native(tmp_path, jobs, capability=None):
    """A native instance of four 8-GPU nodes with no topology, one queue and ``jobs``."""
    queue = {"name": "default", "weight": 1}
    if capability:
        queue["capability"] = capability
    doc = {"apiVersion": "toposolve/v1", "kind": "Instance", "metadata": {"name": "flat"},
           "nodeGroups": [{"name": "n{i}", "count": 4, "allocatable": NODE}],
           "queues": [queue], "jobs": jobs}
    path = tmp_path / "flat.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return load_instance(path, warn=lambda _: None)


def gpu_job(name, replicas, gpus, priority_class=None):
    job = {"name": name, "tasks": [{"name": "w", "replicas": replicas,
                                    "requests": {"nvidia.com/gpu": gpus}}]}
    if priority_class:
        job["priorityClass"] = priority_class
    return job


def solve_checked(inst):
    """The kueue engine's plan, which the independent checker accepts, and the engine's own
    (``solve`` falls back to another plan when the check fails)."""
    plan = toposolve.solve(inst, "kueue")
    assert plan.engine == "kueue"
    assert check_plan(inst, plan, eviction_mode="none") == []
    return plan


def by_job(plan):
    return {e.job: e for e in plan.jobs}


def nodes_of(plan, job):
    return sorted(b.node for b in plan.bindings if b.pod.startswith(f"{job}-"))


def test_a_flat_native_instance_is_placed_pod_by_pod_as_kube_scheduler(tmp_path):
    inst = native(tmp_path, [gpu_job("a", 2, 8), gpu_job("b", 3, 4)])
    plan = solve_checked(inst)
    assert all(e.placed for e in plan.jobs)
    assert nodes_of(plan, "default/a") == ["n0", "n1"]
    # kube-scheduler's run is the kube mirror's own: the same pods on the same nodes
    kube = toposolve.solve(inst, "kube")
    assert sorted((b.pod, b.node) for b in plan.bindings) == sorted(
        (b.pod, b.node) for b in kube.bindings)


def test_quota_is_still_enforced_in_admission_order(tmp_path):
    inst = native(tmp_path, [gpu_job("a", 2, 8), gpu_job("b", 2, 4)],
                  capability={"nvidia.com/gpu": "20"})
    plan = solve_checked(inst)
    jobs = by_job(plan)
    assert jobs["default/a"].placed
    assert not jobs["default/b"].placed
    assert "nominal quota exceeded for nvidia.com/gpu" in jobs["default/b"].reason


def test_a_workload_too_big_stays_pending_and_its_fitting_pods_hold_their_nodes(tmp_path):
    """Five 8-GPU pods on four nodes: Kueue admits it (no quota), kube-scheduler binds four and
    leaves one Pending; the plan binds none of it, and a later job finds the nodes taken."""
    inst = native(tmp_path, [gpu_job("big", 5, 8), gpu_job("small", 1, 1)])
    problem = compile_problem(inst)
    assignment = run_kueue(problem)
    big, small = (next(j for j, cj in enumerate(problem.jobs) if cj.key == k)
                  for k in ("default/big", "default/small"))
    assert not assignment.counts
    assert "finds a node for only 4 of its 5 pending pods" in assignment.reasons[big]
    assert small in assignment.reasons  # the four running pods left no GPU
    plan = solve_checked(inst)
    assert not plan.bindings and not any(e.placed for e in plan.jobs)


def non_tas_docs(podsets, *, tas_first=True, plain_labels=None):
    """``kueue_docs`` with a second flavor ``plain`` (no ``topologyName``) in ``cq``."""
    docs = copy.deepcopy(kueue_docs(["block", "kubernetes.io/hostname"], workload(podsets)))
    plain = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
             "metadata": {"name": "plain"}, "spec": {"nodeLabels": plain_labels or {}}}
    cq = next(d for d in docs if d["kind"] == "ClusterQueue")
    flavors = cq["spec"]["resourceGroups"][0]["flavors"]
    entry = {"name": "plain", "resources": [{"name": "cpu", "nominalQuota": "12"}]}
    flavors.insert(len(flavors) if tas_first else 0, entry)
    return [*docs[:-1], plain, docs[-1]]


def second_workload(docs, name, podsets):
    wl = copy.deepcopy(docs[-1])
    wl["metadata"]["name"] = name
    wl["spec"]["podSets"] = podsets
    return [*docs, wl]


def test_a_kueue_dump_with_only_a_non_tas_flavor_is_placed(tmp_path):
    docs = non_tas_docs([podset("main", 3, cpu="2")])
    cq = next(d for d in docs if d["kind"] == "ClusterQueue")
    cq["spec"]["resourceGroups"][0]["flavors"].pop(0)  # only `plain` left
    inst = load_instance(write_docs(tmp_path, docs), warn=lambda _: None)
    (job,) = inst.jobs
    assert job.flavor == "plain" and job.topology_name is None
    plan = solve_checked(inst)
    assert plan.jobs[0].placed and len(plan.bindings) == 3


def test_a_mixed_cluster_queue_follows_the_flavor_assigner(tmp_path):
    """TAS flavor first, ``plain`` second: a workload asking for no topology skips the TAS flavor
    ("supports only TopologyAwareScheduling") and lands on ``plain``'s nodes (its nodeLabels);
    one asking for a block gets the TAS flavor."""
    docs = non_tas_docs([podset("main", 2, cpu="1")], plain_labels={"block": "b1"})
    docs = second_workload(docs, "tas", [podset("main", 2, {"required": "block"})])
    inst = load_instance(write_docs(tmp_path, docs), warn=lambda _: None)
    flavors = {j.name: (j.flavor, j.topology_name) for j in inst.jobs}
    assert flavors == {"w": ("plain", None), "tas": ("f", "t")}
    plan = solve_checked(inst)
    assert all(e.placed for e in plan.jobs)
    assert set(nodes_of(plan, "default/w")) <= {"n2", "n3"}  # block b1


def test_the_non_tas_flavor_still_charges_the_cluster_queue(tmp_path):
    """The TAS flavor has no quota here (the model sums a ClusterQueue's quota over flavors):
    ``w2``'s 8 CPUs fit the nodes but not the 12 CPUs left after ``w``'s 6."""
    docs = non_tas_docs([podset("main", 3, cpu="2")], tas_first=False)
    cq = next(d for d in docs if d["kind"] == "ClusterQueue")
    cq["spec"]["resourceGroups"][0]["flavors"][1]["resources"][0]["nominalQuota"] = "0"
    docs = second_workload(docs, "w2", [podset("main", 4, cpu="2")])
    inst = load_instance(write_docs(tmp_path, docs), warn=lambda _: None)
    plan = solve_checked(inst)
    jobs = by_job(plan)
    assert jobs["default/w"].placed
    assert not jobs["default/w2"].placed
    assert "nominal quota exceeded for cpu" in jobs["default/w2"].reason


def test_an_explicit_tas_request_skips_a_non_tas_flavor_listed_first(tmp_path):
    """``plain`` first: an ``unconstrained`` podset requests TAS itself and skips it ("does not
    support TopologyAwareScheduling"); it is placed by TAS on the TAS flavor."""
    docs = non_tas_docs([podset("main", 2, {"unconstrained": True})], tas_first=False)
    docs = second_workload(docs, "plain", [podset("main", 2)])
    inst = load_instance(write_docs(tmp_path, docs), warn=lambda _: None)
    assert {j.name: j.flavor for j in inst.jobs} == {"w": "f", "plain": "plain"}
    plan = solve_checked(inst)
    assert all(e.placed for e in plan.jobs)


def test_a_task_minimum_unmet_leaves_the_workload_unbound(tmp_path):
    """The job total (2 of 4) is met by the workers, but task ``ps`` (minimum 1) fits no node:
    the gang is not ready, so the plan binds none of it (the checker's task-minimum rule)."""
    job = gpu_job("a", 3, 8)
    job["minAvailable"] = 2
    job["tasks"].insert(0, {"name": "ps", "replicas": 1, "minAvailable": 1,
                            "requests": {"nvidia.com/gpu": 9}})
    plan = solve_checked(native(tmp_path, [job]))
    assert not plan.bindings and not plan.jobs[0].placed
    assert "kube-scheduler finds a node for only 3 of its 4 pending pods" in plan.jobs[0].reason


def test_a_subjob_short_of_its_size_is_left_out_of_the_plan():
    """Five free GPUs for three SubJobs of two 1-GPU pods (subGroupSize 2, minSubGroups 2):
    kube-scheduler binds five pods, but the third SubJob's lone pod would break its gang, so
    the plan binds the two whole SubJobs only (the lone pod holds its GPU)."""
    busy = Job(name="busy", min_available=1, tasks=[Task(
        name="w", replicas=1, requests={GPU: 5000}, running={0: "node1"})])
    sg = Job(name="sg", min_available=4,
             tasks=[Task(name=f"t{k}", replicas=2, requests={GPU: 1000}, labels={"sg": str(k)})
                    for k in range(3)],
             subgroup_policies=[SubGroupPolicy(
                 name="p", sub_group_size=2, min_sub_groups=2, match_label_keys=["sg"],
                 label_selector=LabelSelector(match_expressions=[
                     {"key": "sg", "operator": "Exists"}]))])
    inst = Instance(nodes=nodes(2, gpus=5000), hypernodes=[], jobs=[busy, sg])
    plan = solve_checked(inst)
    assert sorted(b.pod for b in plan.bindings) == [
        "default/sg-t0-0", "default/sg-t0-1", "default/sg-t1-0", "default/sg-t1-1"]
    assert by_job(plan)["default/sg"].placed
