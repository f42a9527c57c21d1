"""The kube reader's handling of a gang with fewer pods than its ``gang.minCount``."""

from __future__ import annotations

from tests.fidelity.kube.objects import load
from toposolve.formats.k8s.pods import SCORE_DEFAULTS


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
