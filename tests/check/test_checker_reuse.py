"""checker.fixed_cluster: the tree is derived once for instances on the same cluster lists, and
the verdicts are those of a checker that derives everything afresh."""

from __future__ import annotations

import pytest
from builders import example1_tree, gang, hard, instance, nodes

from toposolve.check import reuse
from toposolve.check.checker import check_plan, fixed_cluster
from toposolve.core.errors import InputError
from toposolve.core.instance import Instance
from toposolve.core.plan import Binding, JobPlacement, Plan


def plan(*bindings: tuple[str, str], job: str = "default/a") -> Plan:
    return Plan(
        engine="test",
        status="FEASIBLE",
        bindings=[Binding(pod=p, node=n) for p, n in bindings],
        jobs=[JobPlacement(job=job, placed=True)],
    )


@pytest.fixture
def builds(monkeypatch):
    """Count the trees the checker builds."""
    calls = []
    real = reuse.build_tree

    def counting(inst):
        calls.append(inst.source)
        return real(inst)

    monkeypatch.setattr(reuse, "build_tree", counting)
    return calls


def test_one_tree_for_the_cycles_of_one_cluster(builds):
    first = instance(nodes(8), example1_tree(), [gang("a", 2, topology=hard(1))])
    cycles = [
        first,
        first.model_copy(
            update={
                "jobs": [  # a shallow copy: the same node and HyperNode lists
                    gang("a", 2, topology=hard(1), running={0: "node0", 1: "node1"}),
                    gang("b", 2, topology=hard(1)),
                ]
            }
        ),
    ]
    plans = [
        plan(
            ("default/a-worker-0", "node0"), ("default/a-worker-1", "node3")
        ),  # spans s4: tier 2 > 1
        plan(("default/b-worker-0", "node2"), ("default/b-worker-1", "node3"), job="default/b"),
    ]
    fresh = [check_plan(i, p) for i, p in zip(cycles, plans, strict=True)]
    assert [v.kind for v in fresh[0]] == ["tier"] and fresh[1] == []
    builds.clear()
    with fixed_cluster(first.nodes, first.hypernodes):
        reused = [check_plan(i, p) for i, p in zip(cycles, plans, strict=True)]
    assert reused == fresh
    assert len(builds) == 1


def test_other_clusters_are_derived_afresh(builds):
    first = instance(nodes(8), example1_tree(), [gang("a", 1)])
    binding = plan(("default/a-worker-0", "node2"))
    with fixed_cluster(first.nodes, first.hypernodes):
        assert check_plan(first, binding) == []
        other = check_plan(
            instance(nodes(2), [], [gang("a", 1)]), binding
        )  # node2 does not exist there
        assert (
            check_plan(instance(first.nodes, first.hypernodes, [gang("a", 1)]), binding) == []
        )  # validated: copied lists
    assert "unknown-node" in [v.kind for v in other]
    assert len(builds) == 3


def test_a_broken_cluster_is_refused_every_time():
    node_list = nodes(2)
    twice = [*node_list, node_list[0]]
    broken = Instance.model_construct(
        nodes=twice, hypernodes=[], jobs=[], queues=[], priority_classes=[], source="x.yaml"
    )
    with fixed_cluster(twice, []):
        for _ in range(2):
            with pytest.raises(InputError, match="duplicate node"):
                check_plan(broken, Plan(engine="test", status="FEASIBLE"))
