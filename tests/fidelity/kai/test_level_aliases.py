"""KAI-Scheduler's tests of Topology level aliases (data in ``data/level_aliases.yaml``, with the
inventory of every KAI test asserting alias behaviour), reproduced by the KAI reader and the kai
engine: a level named by alias gets the tier of the nodeLabel KAI resolves it to, and places as
that nodeLabel does."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

import toposolve
from toposolve.core.errors import InputError
from toposolve.core.instance import NetworkTopology

from .kai_objects import case_documents, load_case

DATA = yaml.safe_load((Path(__file__).parent / "data" / "level_aliases.yaml").read_text())
HOSTNAME = "kubernetes.io/hostname"


def _nodes(labels: list[str], count: int, gpus: int) -> dict:
    """``count`` nodes in one domain of every level (value ``<level>-1``), hostname their name."""
    return {
        f"node{i}": {"gpus": gpus, "labels": {
            k: (f"node{i}" if k == HOSTNAME else f"{k.rsplit('/', 1)[-1]}1") for k in labels}}
        for i in range(count)
    }


def _documents(case: dict, topology: str, job: dict, nodes: dict) -> list[dict]:
    """The case's objects, its Topology's levels carrying their aliases."""
    labels = [level["nodeLabel"] for level in case["levels"]]
    docs = case_documents({"topologies": {topology: labels}, "nodes": nodes, "jobs": [job]})
    for doc in docs:
        if doc["kind"] == "Topology":
            doc["spec"]["levels"] = copy.deepcopy(case["levels"])
    return docs


def _tier(case: dict, label: str | None) -> int | None:
    labels = [level["nodeLabel"] for level in case["levels"]]
    return None if label is None else len(labels) - labels.index(label)


def _resolved(case: dict, c: dict) -> dict:
    """``c`` with every alias replaced by its nodeLabel (KAI's ResolveAliases)."""
    aliases = {lv["alias"]: lv["nodeLabel"] for lv in case["levels"] if lv.get("alias")}
    return {k: aliases.get(v, v) for k, v in c.items()}


def _solve(tmp_path: Path, docs: list[dict]):
    inst = load_case(tmp_path, docs)
    plan = toposolve.solve(inst, "kai")
    assert toposolve.check_plan(inst, plan) == []
    return inst, sorted((b.pod, b.node) for b in plan.bindings)


def _check(nt: NetworkTopology | None, case: dict, expect: dict) -> None:
    assert nt is not None
    if "required" in expect:
        assert nt.mode == "hard" and nt.highest_tier_allowed == _tier(case, expect["required"])
    assert nt.preferred_tier == _tier(case, expect.get("preferred"))


@pytest.mark.parametrize("case", DATA["resolve"], ids=lambda c: c["name"])
def test_resolve(case, tmp_path):
    labels = [level["nodeLabel"] for level in case["levels"]]
    nodes = _nodes(labels, 2, 1)
    job = {"name": "job", "gpus": 1, "tasks": [{}], "constraint": case["constraint"]}
    inst, bindings = _solve(tmp_path, _documents(case, "network", job, nodes))
    _check(inst.jobs[0].network_topology, case, case["expect"])
    by_label = {**job, "constraint": _resolved(case, case["constraint"])}
    assert _solve(tmp_path, _documents(case, "network", by_label, nodes))[1] == bindings


@pytest.mark.parametrize("case", DATA["subgroups"], ids=lambda c: c["name"])
def test_subgroups(case, tmp_path):
    labels = [level["nodeLabel"] for level in case["levels"]]
    job = {"name": "job", "gpus": 1, "tasks": [{"subgroup": "leaf"}],
           "constraint": case["constraint"], "subgroups": case["tree"]}
    inst, _ = _solve(tmp_path, _documents(case, "network", job, _nodes(labels, 2, 1)))
    (j,) = inst.jobs
    _check(j.network_topology, case, case["expect"]["job"])
    (child,) = [g for g in j.gang_groups if g.name == "child"]
    _check(child.network_topology, case, case["expect"]["child"])
    (leaf,) = j.subgroup_policies
    _check(leaf.network_topology, case, case["expect"]["leaf"])


@pytest.mark.parametrize("case", DATA["validate"], ids=lambda c: c["name"])
def test_validate(case, tmp_path):
    labels = [level["nodeLabel"] for level in case["levels"]]
    job = {"name": "job", "gpus": 1, "tasks": [{}], "constraint": {"required": labels[0]}}
    docs = _documents(case, "network", job, _nodes(labels, 2, 1))
    if case["error"] is None:
        load_case(tmp_path, docs)
        return
    with pytest.raises(InputError) as info:
        load_case(tmp_path, docs)
    text = str(info.value)
    assert info.value.field == case["error"]["field"], text
    assert case["error"]["words"] in text and "\n" not in text


@pytest.mark.parametrize("case", DATA["e2e"], ids=lambda c: c["name"])
def test_e2e(case, tmp_path):
    labels = [level["nodeLabel"] for level in case["levels"]]
    job = {"name": "job", "gpus": case["gpus"], "tasks": [{}] * case["pods"],
           "constraint": {"required": case["required"]}}
    nodes = _nodes(labels, case["nodes"], case["gpus"])
    inst, bindings = _solve(tmp_path, _documents(case, case["topology"], job, nodes))
    rack = labels[1]
    racks = {nodes[node]["labels"][rack] for _, node in bindings}
    assert {"scheduled": len(bindings), "racks": len(racks)} == case["expect"]


def test_every_kai_alias_test_is_listed():
    listed = sum(len(DATA[k]) for k in ("resolve", "subgroups", "validate", "e2e", "not_ported"))
    assert listed == 3 + 1 + 6 + 1 + 5
