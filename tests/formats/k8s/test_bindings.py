"""Plans as Kubernetes objects: Binding objects and pod patches, from Python and the CLI."""

from __future__ import annotations

import pytest
import yaml
from builders import example1_tree, gang, hard, instance, nodes

from toposolve.cli.main import main
from toposolve.core.instance import PriorityClass
from toposolve.core.plan import Binding, Plan
from toposolve.formats.k8s.bindings import dump_objects, export_objects, left_out
from toposolve.solve import solve

CLASSES = [PriorityClass(name="high", value=1000), PriorityClass(name="low", value=1)]


def preempting_plan() -> Plan:
    """The urgent gang's two pods are nominated behind evictions of low-priority pods."""
    low = gang("low", 8, priority_class="low", running={i: f"node{i}" for i in range(8)})
    urgent = gang("urgent", 2, topology=hard(1), priority_class="high")
    return solve(
        instance(nodes(8), example1_tree(), [low, urgent], CLASSES), "heuristic", evict="preempt"
    )


def test_bindings_are_v1_binding_objects():
    plan = solve(instance(nodes(8), example1_tree(), [gang("a", 2, topology=hard(1))]), "heuristic")
    objects = export_objects(plan, "bindings")
    assert [
        (o["metadata"]["namespace"], o["metadata"]["name"], o["target"]["name"]) for o in objects
    ] == [(*b.pod.split("/"), b.node) for b in plan.bindings]
    assert all(
        o["apiVersion"] == "v1" and o["kind"] == "Binding" and o["target"]["kind"] == "Node"
        for o in objects
    )
    assert left_out(plan, "bindings") == {}


def test_nominated_pods_are_not_bound_and_are_counted_with_the_evictions():
    plan = preempting_plan()
    assert plan.evictions and plan.bindings and all(b.nominated for b in plan.bindings)
    assert export_objects(plan, "bindings") == []
    assert left_out(plan, "bindings") == {
        "evictions": len(plan.evictions),
        "nominated": len(plan.bindings),
    }
    patches = export_objects(plan, "patches")
    assert [p["status"]["nominatedNodeName"] for p in patches] == [b.node for b in plan.bindings]


def test_patches_set_node_name_or_the_nomination():
    plan = Plan(
        engine="x",
        status="FEASIBLE",
        bindings=[Binding("team/a-0", "n1"), Binding("b-0", "n2", nominated=True)],
    )
    assert export_objects(plan, "patches") == [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "a-0", "namespace": "team"},
            "spec": {"nodeName": "n1"},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "b-0", "namespace": "default"},
            "status": {"nominatedNodeName": "n2"},
        },
    ]
    assert left_out(plan, "patches") == {}


def test_unknown_form_is_refused():
    with pytest.raises(ValueError, match="bindings, patches"):
        export_objects(Plan(engine="x", status="FEASIBLE"), "json")  # type: ignore[arg-type]


def test_cli_export_writes_yaml_documents_and_counts_what_it_leaves_out(tmp_path, capsys):
    plan = preempting_plan()
    path, out = tmp_path / "plan.json", tmp_path / "bindings.yaml"
    plan.write(path)
    assert main(["export", str(path), "--as", "bindings", "-o", str(out)]) == 0
    docs = list(yaml.safe_load_all(out.read_text()))
    assert docs == export_objects(plan, "bindings")
    assert "not expressible as bindings" in capsys.readouterr().err
    assert main(["export", str(path), "--as", "patches"]) == 0
    assert capsys.readouterr().out == dump_objects(export_objects(plan, "patches"))
    assert main(["export", str(tmp_path / "missing.json")]) == 2
