"""The kube reader: a gang with fewer pods than its ``gang.minCount``, pods' requests, nominated
nodes, and the HyperNode tree of the PodGroups' topology keys where a node lacks a key."""

from __future__ import annotations

import pytest

import toposolve
from tests.fidelity.kube.objects import load, node, pod, podgroup
from toposolve.core.errors import InputError
from toposolve.core.status import SolveStatus
from toposolve.formats.k8s.pods import SCORE_DEFAULTS
from toposolve.formats.load import instance_from_bodies, load_instance
from toposolve.formats.native.writer import write_native


def scenario(minimum: int, pods: int) -> dict:
    return {"policy": {"minCount": minimum}, "nodes": [{"name": "node1"}],
            "pods": [{"name": f"p{i}"} for i in range(pods)]}


def test_a_gang_short_of_its_min_count_waits_with_one_warning():
    warnings: list[str] = []
    instance = load(scenario(4, 3), warnings)
    assert not instance.jobs
    assert warnings == ["case.yaml: PodGroup/default/pg: skipped (gang.minCount 4 exceeds its "
                        "3 pod(s): the gang waits for its pods)"]


def test_a_gang_with_exactly_its_min_count_is_read():
    warnings: list[str] = []
    instance = load(scenario(3, 3), warnings)
    assert [j.min_available for j in instance.jobs] == [3] and not warnings


def test_pods_differing_only_in_unset_memory_are_two_tasks_with_their_scoring_request():
    scenario = {"nodes": [{"name": "node1"}],
                "pods": [{"name": "set", "requests": {"cpu": "1", "memory": "0"}},
                         {"name": "unset", "requests": {"cpu": "1"}}]}
    warnings: list[str] = []
    tasks = load(scenario, warnings).jobs[0].tasks
    assert [t.pod_names for t in tasks] == [["set"], ["unset"]]
    assert [t.requests for t in tasks] == [{"cpu": 1000, "memory": 0}, {"cpu": 1000}]
    assert tasks[0].score_requests is None
    assert tasks[1].score_requests == {"cpu": 1000, "memory": SCORE_DEFAULTS["memory"]}


def test_pending_pods_keep_their_nominated_node_and_the_problem_its_index():
    from toposolve.core.problem import compile_problem

    scenario = {"policy": {"minCount": 1}, "nodes": [{"name": "node1"}, {"name": "node2"}],
                "pods": [{"name": "p0", "node": "node1", "nominated": "node2"},
                         {"name": "p1", "nominated": "node2"}, {"name": "p2"},
                         {"name": "p3", "nominated": "gone"}]}
    instance = load(scenario, [])
    (task,) = instance.jobs[0].tasks
    # a running pod's nomination is stale: only pending pods keep theirs
    assert task.nominated == {1: "node2", 3: "gone"}
    problem = compile_problem(instance)
    (g,) = problem.jobs[0].groups
    assert problem.group_nominated[g] == [1, -1, -1]  # p1 → node2; p2 none; "gone" unknown


def test_pod_level_resources_replace_the_containers_for_fit_and_scores():
    from tests.fidelity.kube.objects import node, pod, podgroup
    from toposolve.formats.load import instance_from_bodies

    level = pod({"name": "p", "requests": {"cpu": "1"}})
    # nvidia.com/gpu is not a pod-level resource: ignored there
    level["spec"]["resources"] = {"requests": {"cpu": "3", "nvidia.com/gpu": "1"},
                                  "limits": {"memory": "2Gi"}}
    docs = [node({"name": "node1"}), podgroup("basic", None), level]
    instance = instance_from_bodies([(d, "c.yaml") for d in docs], "c", lambda _: None)
    (task,) = instance.jobs[0].tasks
    # cpu from the pod level, memory from its limit (API defaulting), no gpu
    assert task.requests == {"cpu": 3000, "memory": 2 * 1024**3 * 1000}
    assert task.score_requests is None  # pod-level values leave no default to add


def _zones_and_racks(rack_of_n3: str | None) -> list[tuple[dict, str]]:
    """Zone z1 (node n1 in rack r1, n2 in r2, n3 in ``rack_of_n3`` or no rack) and zone z2 (n4
    in rack r3); PodGroup ``pg`` of three 4-cpu pods at the zone key, ``pg2`` at the rack key."""
    labels = {"n1": {"zone": "z1", "rack": "r1"}, "n2": {"zone": "z1", "rack": "r2"},
              "n3": {"zone": "z1"}, "n4": {"zone": "z2", "rack": "r3"}}
    if rack_of_n3:
        labels["n3"]["rack"] = rack_of_n3
    docs = [node({"name": n, "labels": v}) for n, v in labels.items()]
    docs.append(podgroup({"minCount": 3}, "zone"))
    docs += [pod({"name": f"p{i}", "cpu": "4"}) for i in range(3)]
    docs.append(podgroup("basic", "rack") | {"metadata": {"name": "pg2", "namespace": "default"}})
    docs.append(pod({"name": "q0"}, group="pg2"))
    return [(d, "case.yaml") for d in docs]


def test_a_node_lacking_the_lower_key_stays_in_its_zone():
    # kube-scheduler groups nodes by the constraint key's value alone: n3 is in zone z1's
    # domain though it has no rack, so pg's three full-node pods fit only in z1, n3 included
    warnings: list[str] = []
    instance = instance_from_bodies(_zones_and_racks(None), "case", warnings.append)
    members = {h.name: sorted(m.selector.exact_match for m in h.members)
               for h in instance.hypernodes}
    assert members["z1"] == ["n3", "r1", "r2"] and members["z2"] == ["r3"]
    plan = toposolve.solve(instance, "kube")
    assert plan.status is not SolveStatus.FALLBACK and plan.job("default/pg").placed
    assert sorted(b.node for b in plan.bindings if "/p" in b.pod) == ["n1", "n2", "n3"]


def test_a_rack_both_in_a_zone_and_in_none_does_not_nest():
    # n3 in rack r1 of zone z1 and n5 in r1 without a zone: zone z1's domain is not a union of
    # racks, which a HyperNode tree cannot say
    docs = _zones_and_racks("r1") + [(node({"name": "n5", "labels": {"rack": "r1"}}),
                                      "case.yaml")]
    with pytest.raises(InputError, match="do not nest: .*rack=r1 belongs to zone=z1 .*and to "
                                         "no zone"):
        instance_from_bodies(docs, "case", [].append)


def test_tasks_of_one_podgroup_get_distinct_names_that_read_back(tmp_path):
    scenario = {"nodes": [{"name": "node1"}],
                "pods": [{"name": "a", "requests": {"cpu": "1"}},
                         {"name": "b", "requests": {"cpu": "2"}}]}
    instance = load(scenario, [])
    assert [(t.name, t.pod_names) for t in instance.jobs[0].tasks] == [("pod", ["a"]),
                                                                       ("pod-2", ["b"])]
    write_native(instance, tmp_path / "native.yaml")
    again = load_instance(tmp_path / "native.yaml")
    assert [(t.name, t.requests) for t in again.jobs[0].tasks] == [
        (t.name, t.requests) for t in instance.jobs[0].tasks]
