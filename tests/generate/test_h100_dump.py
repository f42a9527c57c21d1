"""The h100-dump preset and its two bundled forms (instances/h100-dump.yaml with HyperNodes,
instances/h100-dump-labels.yaml with label discovery): deterministic, realistic, the same
cluster, the same tree on tiers >= 1 and the same plan once tier 0 is set aside."""

from __future__ import annotations

from pathlib import Path

import pytest

from toposolve import solve
from toposolve.cli.main import main
from toposolve.core.instance import Member, MemberSelector
from toposolve.core.problem import compile_problem
from toposolve.formats import load_instance
from toposolve.generate import dump_header, generate_dump, render_dump

INSTANCES = Path(__file__).resolve().parents[2] / "instances"
FILES = {"hypernodes": INSTANCES / "h100-dump.yaml", "labels": INSTANCES / "h100-dump-labels.yaml"}
OPTIONS = {"hypernodes": [], "labels": ["form=labels"]}


@pytest.fixture(scope="module")
def loaded():
    return {form: load_instance(path, warn=lambda _line: None) for form, path in FILES.items()}


@pytest.mark.parametrize("form", FILES)
def test_bundled_file_is_what_the_generator_writes(form):
    dump = generate_dump("h100-dump", seed=0, **dict(o.split("=") for o in OPTIONS[form]))
    header = dump_header("h100-dump", 0, OPTIONS[form], f"instances/{FILES[form].name}")
    assert FILES[form].read_text() == render_dump(dump, header)


def test_the_dump_has_what_real_dumps_have():
    dump = generate_dump("h100-dump", seed=0)
    items = dump["items"]
    kinds = {it["kind"] for it in items}
    assert (
        dump["kind"] == "List" and {"Node", "Pod", "HyperNode", "PodGroup", "Job", "Queue"} <= kinds
    )
    assert all(it["metadata"]["managedFields"] for it in items)
    nodes = [it for it in items if it["kind"] == "Node"]
    assert sum(bool(n["spec"].get("unschedulable")) for n in nodes) == 2
    not_ready = [n for n in nodes if n["status"]["conditions"][0]["status"] != "True"]
    assert len(not_ready) == 1 and {t["key"] for t in not_ready[0]["spec"]["taints"]} >= {
        "node.kubernetes.io/unreachable"
    }
    owners = {
        it["metadata"]["ownerReferences"][0]["kind"]
        for it in items
        if "ownerReferences" in it["metadata"]
    }
    assert owners == {"DaemonSet", "PyTorchJob", "ReplicaSet", "Job"}
    hypernodes = [it for it in items if it["kind"] == "HyperNode"]
    selectors = {next(iter(m["selector"])) for h in hypernodes for m in h["spec"]["members"]}
    assert selectors == {"exactMatch", "regexMatch", "labelMatch"}
    assert sorted({h["spec"]["tier"] for h in hypernodes}) == [0, 1, 2, 3]
    jobs = [it for it in items if it["kind"] == "Job"]
    assert any("partitionPolicy" in t for j in jobs for t in j["spec"]["tasks"])
    assert any("highestTierName" in j["spec"].get("networkTopology", {}) for j in jobs)


def test_same_cluster_apart_from_the_topology(loaded):
    h, lab = loaded["hypernodes"], loaded["labels"]
    assert h.nodes == lab.nodes
    assert h.jobs == lab.jobs
    assert (h.queues, h.priority_classes) == (lab.queues, lab.priority_classes)


def domains(instance, min_tier: int = 0) -> dict[str, tuple[int, str, frozenset[str]]]:
    """HyperNode name → (tier, tierName, nodes under it)."""
    topo = compile_problem(instance).topology
    names = {v: k for k, v in topo.tier_name_to_tier.items()}
    return {
        name: (
            int(topo.tier[i]),
            names.get(int(topo.tier[i])),
            frozenset(topo.node_names[j] for j in topo.members[i].indices),
        )
        for i, name in enumerate(topo.names[:-1])
        if topo.tier[i] >= min_tier
    }


def test_same_tree_on_tiers_one_and_up(loaded):
    hyper = domains(loaded["hypernodes"])
    labelled = domains(loaded["labels"])
    assert sorted(hyper[n][:2] for n in hyper if hyper[n][0] == 0) == [(0, "nvlink")] * 8
    assert {v for v in hyper.values() if v[0] >= 1} == set(labelled.values())
    assert len(labelled) == 7


def without_tier_zero(instance):
    """The HyperNode form with its NVLink domains folded into their leaves (leaves list the nodes)."""
    under = domains(instance)
    hypernodes = [
        h
        if h.tier != 1
        else h.model_copy(
            update={
                "members": [
                    Member(type="Node", selector=MemberSelector(exact_match=n))
                    for n in sorted(under[h.name][2])
                ]
            }
        )
        for h in instance.hypernodes
        if h.tier != 0
    ]
    return instance.model_copy(update={"hypernodes": hypernodes})


def same_domain_names(a, b) -> dict[str, str]:
    by_nodes = {v: k for k, v in domains(b).items()}
    return {name: by_nodes[v] for name, v in domains(a).items()}


@pytest.mark.parametrize("engine", ["heuristic", "cpsat"])
def test_same_plan_once_tier_zero_is_set_aside(loaded, engine):
    folded = without_tier_zero(loaded["hypernodes"])
    a = solve(folded, engine, deterministic=True, time_limit=30)
    b = solve(loaded["labels"], engine, deterministic=True, time_limit=30)
    assert a.bindings == b.bindings and a.objective == b.objective
    rename = same_domain_names(folded, loaded["labels"])
    assert [(j.job, j.placed, rename.get(j.hypernode)) for j in a.jobs] == [
        (j.job, j.placed, j.hypernode) for j in b.jobs
    ]
    assert sum(j.placed for j in a.jobs) == 6  # gpt-pretrain-c (256 GPUs, one spine) waits


def test_tier_zero_changes_node_choice_not_what_is_placed(loaded):
    """With NVLink domains the heuristic's gradient starts at tier 0 and packs gangs into them;
    label discovery has no tier 0, so the two forms place the same jobs and accelerators, on
    nodes that may differ."""
    a = solve(loaded["hypernodes"], "heuristic")
    b = solve(loaded["labels"], "heuristic")
    assert [(j.job, j.placed) for j in a.jobs] == [(j.job, j.placed) for j in b.jobs]
    assert a.stats["objective_stages"]["placed"] == b.stats["objective_stages"]["placed"]


@pytest.mark.parametrize("form", FILES)
def test_compare_succeeds_on_both_forms(form, capsys):
    assert main(["compare", str(FILES[form]), "--time-limit", "20", "--deterministic"]) == 0
    assert "jobs placed" in capsys.readouterr().out
