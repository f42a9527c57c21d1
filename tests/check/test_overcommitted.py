"""A node whose running pods already exceed its allocatable (issue 19 §1): Kubernetes' rule."""

from __future__ import annotations

import pytest
from builders import GPU, gang, nodes

import toposolve
from toposolve.check.checker import check_plan
from toposolve.core.instance import Instance
from toposolve.core.plan import Binding, Plan
from toposolve.formats.k8s.tolerated import overcommitted, warn_tolerated


def shrunk_node_instance() -> Instance:
    """node0 has 4 GPUs while a running pod holds 8 (a device-plugin restart shrank it)."""
    return Instance(
        nodes=nodes(1, gpus=4, cpu=16),
        jobs=[
            gang("big", 1, gpus=8, cpu=1, running={0: "node0"}),
            gang("cpu-only", 2, gpus=0, cpu=4),
            gang("gpu", 1, gpus=1),
        ],
    )


def plan_binding(*pods: str) -> Plan:
    return Plan(engine="test", status="FEASIBLE",
                bindings=[Binding(pod=f"default/{p}", node="node0") for p in pods])


def test_a_pod_fits_if_every_resource_it_requests_fits():
    inst = shrunk_node_instance()
    cpu_pods = plan_binding("cpu-only-worker-0", "cpu-only-worker-1")
    assert check_plan(inst, cpu_pods) == []


def test_a_pod_requesting_the_overcommitted_resource_does_not_fit():
    violations = check_plan(shrunk_node_instance(), plan_binding("gpu-worker-0"))
    assert [(v.kind, v.obj) for v in violations] == [("capacity", "Node/node0")]
    assert "nvidia.com/gpu: pods request 9000m, allocatable is 4000m" in violations[0].message


@pytest.mark.parametrize("engine", ["volcano", "kai", "cpsat"])
def test_engines_bind_pods_that_fit_by_kubernetes_rule(engine):
    plan = toposolve.solve(shrunk_node_instance(), engine=engine, time_limit=5)
    bound = sorted(b.pod for b in plan.bindings)
    assert bound == ["default/cpu-only-worker-0", "default/cpu-only-worker-1"]


def test_one_warning_line_per_overcommitted_node():
    inst = shrunk_node_instance()
    assert overcommitted(inst) == [("node0", GPU, 8000, 4000)]
    lines: list[str] = []
    warn_tolerated(inst, lines.append)
    assert len(lines) == 1
    assert "Node/node0: status.allocatable[nvidia.com/gpu]: running pods request 8000m" in lines[0]
