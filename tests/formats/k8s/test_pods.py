"""``pod_score_requests``: kube-scheduler's scoring default only for unset cpu / memory."""

from __future__ import annotations

from toposolve.core.quantity import parse_resource_amount
from toposolve.formats.k8s.fields import Field
from toposolve.formats.k8s.pods import SCORE_DEFAULTS, pod_requests, pod_score_requests

CPU, MEM = SCORE_DEFAULTS["cpu"], SCORE_DEFAULTS["memory"]


def spec(*containers, init=(), overhead=None) -> Field:
    body = {"containers": [{"name": f"c{i}", "resources": r} for i, r in enumerate(containers)],
            "initContainers": list(init)}
    if overhead:
        body["overhead"] = overhead
    return Field(body, "spec", "pods.yaml", "Pod/default/p")


def test_kube_scheduler_defaults_are_100m_cpu_and_200mi_memory():
    assert SCORE_DEFAULTS == {"cpu": 100, "memory": parse_resource_amount("200Mi", "memory")}


def test_an_explicit_zero_stays_zero_and_an_unset_request_gets_the_default():
    pod = spec({"requests": {"cpu": "1", "memory": "0"}}, {"requests": {"cpu": "0"}})
    assert pod_requests(pod) == {"cpu": 1000, "memory": 0}
    # the second container sets no memory: it alone counts the default
    assert pod_score_requests(pod) == {"cpu": 1000, "memory": MEM}


def test_a_limit_stands_in_for_an_unset_request():
    pod = spec({"limits": {"cpu": "2", "memory": "1Gi"}})
    assert pod_score_requests(pod) == pod_requests(pod)


def test_each_container_without_requests_counts_the_defaults():
    pod = spec({}, {}, overhead={"cpu": "50m"})
    assert pod_requests(pod) == {"cpu": 50}
    assert pod_score_requests(pod) == {"cpu": 2 * CPU + 50, "memory": 2 * MEM}


def test_an_init_container_peak_uses_its_scoring_request():
    init = {"name": "i", "resources": {"requests": {"cpu": "3", "memory": "0"}}}
    pod = spec({"requests": {"cpu": "1"}}, init=[init])
    assert pod_score_requests(pod) == {"cpu": 3000, "memory": MEM}
