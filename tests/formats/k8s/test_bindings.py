"""Plans as ``v1 Binding`` objects without an instance, from Python and the CLI; the nonsense a
plan may hold is refused for every form (the other forms: tests/formats/export/)."""

from __future__ import annotations

import pytest
import yaml
from builders import example1_tree, gang, hard, instance, nodes

from toposolve.cli.main import main
from toposolve.core.errors import InputError
from toposolve.core.instance import PriorityClass
from toposolve.core.plan import Binding, Plan
from toposolve.formats.export.forms import EXPORT_FORMS, export_plan
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
    objects = export_plan(plan, "bindings", None).objects
    assert [
        (o["metadata"]["namespace"], o["metadata"]["name"], o["target"]["name"]) for o in objects
    ] == [(*b.pod.split("/"), b.node) for b in plan.bindings]
    assert all(
        o["apiVersion"] == "v1" and o["kind"] == "Binding" and o["target"]["kind"] == "Node"
        for o in objects
    )
    assert export_plan(plan, "bindings", None).notes == []


def test_nominated_pods_are_not_bound_and_are_counted_with_the_evictions():
    plan = preempting_plan()
    assert plan.evictions and plan.bindings and all(b.nominated for b in plan.bindings)
    exported = export_plan(plan, "bindings", None)
    assert exported.objects == []
    assert exported.notes == [
        f"the plan evicts {len(plan.evictions)} pods: export them with --as evictions and "
        "apply those first",
        f"{len(plan.bindings)} nominated pods left out: they wait for their victims (not "
        "expressible as bindings)",
    ]
    evictions = export_plan(plan, "evictions", None).objects
    assert [e["metadata"]["name"] for e in evictions] == [
        v.pod.rpartition("/")[2] for v in plan.evictions]


def test_unknown_form_is_refused():
    with pytest.raises(ValueError, match="bindings, templates"):
        export_plan(Plan(engine="x", status="FEASIBLE"), "patches", None)


def test_cli_export_writes_yaml_documents_and_counts_what_it_leaves_out(tmp_path, capsys):
    plan = preempting_plan()
    path, out = tmp_path / "plan.json", tmp_path / "bindings.yaml"
    plan.write(path)
    assert main(["export", str(path), "--as", "bindings", "-o", str(out)]) == 0
    docs = list(yaml.safe_load_all(out.read_text()))
    assert docs == export_plan(plan, "bindings", None).objects
    assert "not expressible as bindings" in capsys.readouterr().err
    assert main(["export", str(path), "--as", "evictions"]) == 0
    assert capsys.readouterr().out == export_plan(plan, "evictions", None).text()
    # the form the API server refused is gone
    assert main(["export", str(path), "--as", "patches"]) == 2
    assert main(["export", str(tmp_path / "missing.json")]) == 2


# -- nonsense refused before anything is written (issue 19 §2) --------------------------------


def plan_of(*bindings: Binding) -> Plan:
    return Plan(engine="x", status="FEASIBLE", bindings=list(bindings))


@pytest.mark.parametrize(
    "binding, field, words",
    [
        (Binding("ns/", "n1"), "bindings[1].pod", "pod name '' is not a DNS subdomain"),
        (Binding("", "n1"), "bindings[1].pod", "pod name '' is not a DNS subdomain"),
        (Binding("ns/a\n---\nkind: Secret", "n1"), "bindings[1].pod", "is not a DNS subdomain"),
        (Binding("ns/---", "n1"), "bindings[1].pod", "pod name '---' is not a DNS subdomain"),
        (Binding("ns/Pod_0", "n1"), "bindings[1].pod", "pod name 'Pod_0'"),
        (Binding("ns/" + "a" * 254, "n1"), "bindings[1].pod", "(254 characters)"),
        (Binding("a.b/p", "n1"), "bindings[1].pod", "namespace 'a.b' is not a DNS label"),
        (Binding("x/y/p", "n1"), "bindings[1].pod", "namespace 'x/y' is not a DNS label"),
        (Binding("ns/p", ""), "bindings[1].node", "node name '' is not a DNS subdomain"),
        (Binding("ns/p", "n\n1"), "bindings[1].node", "node name 'n\\n1'"),
        # from Python, where nothing checked the types before (the plan reader now does)
        (Binding(5, "n1"), "bindings[1].pod", "expected a string, got 5"),
        (Binding("ns/p", None), "bindings[1].node", "expected a string, got None"),
        (Binding("ns/p", "n1", "yes"), "bindings[1].nominated", "true or false, got 'yes'"),
        (Binding("ns/ok", "n2"), "bindings[1].pod", "binds 'ns/ok' twice (first at bindings[0])"),
    ],
)
@pytest.mark.parametrize("form", EXPORT_FORMS)
def test_nonsense_bindings_are_one_line_naming_the_binding(binding, field, words, form):
    plan = plan_of(Binding("ns/ok", "n1"), binding)
    with pytest.raises(InputError) as err:
        export_plan(plan, form, None, plan_file="plan.json")
    assert str(err.value).startswith(f"plan.json: Plan: {field}: ")
    assert words in str(err.value) and "\n" not in str(err.value)


def test_kubernetes_names_pass(tmp_path):
    plan = plan_of(Binding("team-1/a-0.w", "node-1.rack-2"), Binding("b-0", "n2"),
                   Binding("team-1/" + "a" * 253, "n" * 253))
    assert len(export_plan(plan, "bindings", None).objects) == 3


def test_cli_refuses_a_plan_naming_a_pod_twice_and_writes_nothing(tmp_path, capsys):
    path, out = tmp_path / "plan.json", tmp_path / "bindings.yaml"
    plan_of(Binding("ns/a", "n1"), Binding("ns/a", "n2")).write(path)
    assert main(["export", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"toposolve: {path}: Plan: bindings[1].pod: the plan binds 'ns/a' twice " \
                  "(first at bindings[0])"
    assert not out.exists()


def test_export_output_is_yaml_documents_each_under_its_comment():
    plan = plan_of(Binding("ns/a", "n1"), Binding("ns/b", "n2", nominated=True))
    exported = export_plan(plan, "bindings", None)
    text = exported.text()
    assert list(yaml.safe_load_all(text)) == exported.objects  # the header is no document
    assert "# bind ns/a to n1\napiVersion: v1\nkind: Binding\n" in text
    assert text.startswith("# v1 Binding objects") and "kubectl create -f FILE" in text
