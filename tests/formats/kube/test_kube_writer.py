"""The kube writer keeps what kube-scheduler's scores count (an explicit 0 vs an unset request)."""

from __future__ import annotations

from toposolve.core.instance import Instance, Job, Node, Task
from toposolve.formats.k8s.pods import SCORE_DEFAULTS
from toposolve.formats.kube.writer import kube_documents
from toposolve.formats.load import instance_from_bodies

MEM = SCORE_DEFAULTS["memory"]


def written(task: Task) -> tuple[list[dict], list[str], Task]:
    """The pods written for a one-task job, the warnings, and the task the kube reader reads."""
    inst = Instance(nodes=[Node(name="n", allocatable={"cpu": 4, "memory": "8Gi"})],
                    jobs=[Job(name="j", tasks=[task])])
    warnings: list[str] = []
    docs = kube_documents(inst, warnings.append)
    back = instance_from_bodies([(d, "w.yaml") for d in docs], "w", lambda _: None)
    return [d for d in docs if d["kind"] == "Pod"], warnings, back.jobs[0].tasks[0]


def _pod_requests(pod: dict) -> dict:
    return pod["spec"]["containers"][0]["resources"]["requests"]


def test_a_request_scored_as_zero_is_written_as_an_explicit_zero():
    pods, warnings, back = written(Task(name="t", replicas=1, requests={"cpu": 1}))
    assert _pod_requests(pods[0]) == {"cpu": "1", "memory": "0"} and not warnings
    assert back.score_requests is None and back.requests == {"cpu": 1000, "memory": 0}


def test_a_scoring_default_is_written_as_an_unset_request():
    task = Task(name="t", replicas=1, requests={"cpu": 1},
                score_requests={"cpu": 1, "memory": "200Mi"})
    pods, warnings, back = written(task)
    assert _pod_requests(pods[0]) == {"cpu": "1"} and not warnings
    assert back.score_requests == {"cpu": 1000, "memory": MEM}


def test_a_scoring_request_one_container_cannot_state_is_reported():
    task = Task(name="t", replicas=1, requests={"cpu": 1},
                score_requests={"cpu": 1, "memory": "400Mi"})  # two containers' defaults
    _, warnings, _ = written(task)
    assert warnings == ["Job/default/j: task t: its scoring requests are left out (one container "
                        "states only its requests)"]
