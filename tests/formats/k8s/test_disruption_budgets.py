"""``policy/v1 PodDisruptionBudget`` objects: read from manifests and the native format, written
back by every writer, bad ones refused in one line naming file, object and field (issue 20)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml
from builders import gang, nodes

from toposolve.core.errors import InputError
from toposolve.core.instance import (
    Instance,
    LabelRequirement,
    LabelSelector,
    Node,
    PodDisruptionBudget,
)
from toposolve.core.problem import compile_problem
from toposolve.formats import load_instance
from toposolve.formats.native.writer import write_native
from toposolve.formats.volcano.writer import write_manifests
from toposolve.formats.write import write_scheduler_form

POD = """
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}, labels: {{app: {app}}}}}
spec: {{nodeName: node0, containers: [{{name: c}}]}}
status: {{phase: Running}}
"""
NODE = """
apiVersion: v1
kind: Node
metadata: {name: node0}
status: {allocatable: {cpu: "64"}}
"""


def pdb(spec: str, name: str = "p", ns: str = "team") -> str:
    return (f"apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
            f"metadata: {{name: {name}, namespace: {ns}}}\nspec:\n"
            + textwrap.indent(textwrap.dedent(spec), "  "))


def load(tmp_path: Path, *docs: str) -> Instance:
    path = tmp_path / "in.yaml"
    path.write_text("\n---\n".join(docs))
    return load_instance(path, warn=lambda _: None)


def error(tmp_path: Path, *docs: str) -> str:
    with pytest.raises(InputError) as info:
        load(tmp_path, *docs)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(tmp_path / "in.yaml"))
    return message


def test_integers_percentages_and_selectors_are_read(tmp_path):
    inst = load(tmp_path, NODE,
                pdb("selector: {matchLabels: {app: web}}\nminAvailable: 2\n", "a"),
                pdb("selector:\n  matchExpressions: [{key: app, operator: In, values: [db]}]\n"
                    "maxUnavailable: 25%\nunhealthyPodEvictionPolicy: AlwaysAllow\n", "b"),
                pdb("minAvailable: 50%\n", "c"))
    a, b, c = inst.disruption_budgets
    assert (a.key, a.selector.match_labels, a.min_available) == ("team/a", {"app": "web"}, 2)
    assert b.selector.match_expressions == [LabelRequirement(key="app", operator="In",
                                                             values=["db"])]
    assert (b.max_unavailable, b.unhealthy_pod_eviction_policy) == ("25%", "AlwaysAllow")
    assert c.selector is None and c.min_available == "50%"


def test_budgets_cover_their_namespace_pods_the_selector_matches(tmp_path):
    inst = load(tmp_path, NODE, POD.format(name="w0", ns="team", app="web"),
                POD.format(name="w1", ns="team", app="web"),
                POD.format(name="w2", ns="other", app="web"),
                pdb("selector: {matchLabels: {app: web}}\nminAvailable: 1\n", "a"),
                pdb("selector: {}\nmaxUnavailable: 0\n", "all"),
                pdb("minAvailable: 0\n", "none"))
    a, everything, nothing = compile_problem(inst).budgets
    assert a.running == {"team/w0", "team/w1"} and a.allowed() == 1
    assert everything.running == {"team/w0", "team/w1"} and everything.allowed() == 0
    assert nothing.running == frozenset() and nothing.allowed() == 0
    assert a.allowed(["team/w0"]) == 0  # a pod on a failed node is not healthy


@pytest.mark.parametrize(("spec", "field", "words"), [
    ("minAvailable: 1\nmaxUnavailable: 1\n", None, "cannot both be set"),
    ("minAvailable: 120%\n", "spec.minAvailable", "more than 100%"),
    ("maxUnavailable: half\n", "spec.maxUnavailable", "percentage"),
    ("maxUnavailable: -2\n", "spec.maxUnavailable", "at least 0"),
    ("selector: {matchExpressions: [{key: app, operator: Near}]}\n",
     "spec.selector.matchExpressions[0].operator", "Input should be"),
    ("selector: {matchLabel: {app: x}}\n", "spec.selector", "matchLabel"),
    ("unhealthyPodEvictionPolicy: Sometimes\n", "spec.unhealthyPodEvictionPolicy", ""),
])
def test_bad_budgets_are_one_line_errors(tmp_path, spec, field, words):
    message = error(tmp_path, NODE, pdb(spec))
    assert "PodDisruptionBudget/team/p" in message and words in message
    if field is not None:
        assert field in message


def test_duplicate_budget_is_refused(tmp_path):
    message = error(tmp_path, NODE, pdb("minAvailable: 1\n"), pdb("minAvailable: 2\n"))
    assert "duplicate PodDisruptionBudget" in message


BUDGETS = [
    PodDisruptionBudget(namespace="team", name="a", min_available="50%",
                        selector=LabelSelector(match_labels={"app": "web"})),
    PodDisruptionBudget(name="b", max_unavailable=1, unhealthy_pod_eviction_policy="AlwaysAllow",
                        selector=LabelSelector(match_expressions=[
                            LabelRequirement(key="app", operator="Exists")])),
    PodDisruptionBudget(name="c", min_available=0),
]


def write_as(inst, form, path):
    """``inst`` written to ``path`` by the writer of ``form``; the path."""
    if form == "native":
        write_native(inst, path)
    elif form == "manifests":
        write_manifests(inst, path)
    else:
        write_scheduler_form(inst, form, str(path), warn=lambda _: None)
    return path


@pytest.mark.parametrize("form", ["native", "manifests", "kueue", "kai", "kube"])
def test_every_writer_writes_budgets_back(tmp_path, form):
    inst = Instance(nodes=[Node(name="node0", allocatable={"cpu": 8})],
                    disruption_budgets=BUDGETS)
    path = write_as(inst, form, tmp_path / "out.yaml")
    assert load_instance(path, warn=lambda _: None).disruption_budgets == BUDGETS


def test_native_budget_errors_name_the_entry(tmp_path):
    doc = {"apiVersion": "toposolve/v1", "kind": "Instance",
           "nodeGroups": [{"name": "n", "count": 1, "allocatable": {"cpu": 1}}],
           "podDisruptionBudgets": [{"name": "p", "minAvailable": "7 %"}], "jobs": []}
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(InputError, match=r"PodDisruptionBudget/p: minAvailable: .*percentage"):
        load_instance(path)


UNREADY_POD = """
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: team, labels: {{app: web}}}}
spec: {{nodeName: node0, containers: [{{name: c}}]}}
status: {status}
"""


def test_pod_readiness_is_read_and_counts_for_budgets(tmp_path):
    inst = load(tmp_path, NODE,
                UNREADY_POD.format(name="ok", status="{phase: Running, conditions: "
                                   "[{type: Ready, status: 'True'}]}"),
                UNREADY_POD.format(name="sick", status="{phase: Running, conditions: "
                                   "[{type: Ready, status: 'False'}]}"),
                UNREADY_POD.format(name="new", status="{phase: Pending}"),
                UNREADY_POD.format(name="plain", status="{phase: Running}"),
                pdb("selector: {matchLabels: {app: web}}\nminAvailable: 1\n", "a"))
    health = {task.pod_name(job.name, i): task.health_of(i)
              for job in inst.jobs for task in job.tasks for i in task.running}
    assert health == {"ok": "ready", "sick": "not-ready", "new": "starting", "plain": "ready"}
    (a,) = compile_problem(inst).budgets
    assert (a.not_ready, a.starting) == ({"team/sick"}, {"team/new"})
    assert a.allowed() == 1  # 2 healthy (ok, plain) - 1 desired
    # the budget is met, so the not-Ready pod goes free; the starting one never counts
    assert a.charged() == {"team/ok", "team/plain"}


@pytest.mark.parametrize("form", ["native", "manifests", "kai", "kube"])
def test_every_pod_writer_writes_readiness_back(tmp_path, form):
    job = gang("g", 3, running={0: "node0", 1: "node0", 2: "node0"})
    job.tasks[0].unready = {1: "not-ready", 2: "starting"}
    inst = Instance(nodes=nodes(1), jobs=[job])
    path = write_as(inst, form, tmp_path / "out.yaml")
    back = load_instance(path, warn=lambda _: None)
    tasks = [t for j in back.jobs for t in j.tasks]
    assert sorted(t.health_of(i) for t in tasks for i in t.running) == [
        "not-ready", "ready", "starting"]


def test_a_bad_unready_state_in_the_native_format_is_one_line(tmp_path):
    job = gang("g", 1, running={0: "node0"})
    path = tmp_path / "in.yaml"
    write_native(Instance(nodes=nodes(1), jobs=[job]), path)
    doc = yaml.safe_load(path.read_text())
    doc["jobs"][0]["tasks"][0]["unready"] = {0: "sick"}
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(InputError) as info:
        load_instance(path, warn=lambda _: None)
    message = str(info.value)
    assert "\n" not in message and "unready" in message and "not-ready, starting" in message
