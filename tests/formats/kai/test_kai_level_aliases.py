"""KAI Topology level aliases (issue 23 §1): a constraint may name a level by the ``alias`` of
its Topology (``spec.levels[].alias``, KAI @ d5bc503a); it places exactly as one naming the
nodeLabel. A name that is neither, and an alias the webhook refuses, are one line naming the
field."""

from __future__ import annotations

import copy

import pytest
from scheduler_docs import kai_docs, write_docs

import toposolve
from toposolve.core.errors import InputError
from toposolve.formats.load import load_instance

HOSTNAME = "kubernetes.io/hostname"
ALIASES = {"rack": "rack-level", HOSTNAME: "node"}


def docs(constraint: dict | None = None, annotations: dict | None = None,
         subgroup: dict | None = None, aliases: dict | None = None) -> list[dict]:
    """Topology ``t`` (rack, hostname) with ``aliases``; PodGroup ``pg`` of three 4-GPU pods in
    SubGroup ``a``, under ``constraint`` (none: the annotations, if any); ``a`` under
    ``subgroup``."""
    group = {"name": "a", "minMember": 3}
    if subgroup:
        group["topologyConstraint"] = subgroup
    out = kai_docs([group], ["a"] * 3)
    aliases = ALIASES if aliases is None else aliases
    for d in out:
        if d["kind"] == "Topology":
            for level in d["spec"]["levels"]:
                if level["nodeLabel"] in aliases:
                    level["alias"] = aliases[level["nodeLabel"]]
        if d["kind"] == "PodGroup":
            if constraint is None:
                del d["spec"]["topologyConstraint"]
            else:
                d["spec"]["topologyConstraint"] = constraint
            if annotations:
                d["metadata"]["annotations"] = annotations
    return out


def load(tmp_path, documents, name="in.yaml"):
    return load_instance(write_docs(tmp_path, documents, name), warn=lambda _: None)


def placement(tmp_path, documents, name):
    inst = load(tmp_path, documents, name)
    plan = toposolve.solve(inst, "kai")
    assert toposolve.check_plan(inst, plan) == []
    job = inst.jobs[0]
    return job.network_topology, [g.network_topology for g in job.subgroup_policies], sorted(
        (b.pod, b.node) for b in plan.bindings)


def racks(bindings) -> set[int]:
    return {int(node[1:]) // 2 for _, node in bindings}


CASES = {
    "required": ({"topology": "t", "requiredTopologyLevel": "rack-level"},
                 {"topology": "t", "requiredTopologyLevel": "rack"}),
    "preferred": ({"topology": "t", "requiredTopologyLevel": "rack-level",
                   "preferredTopologyLevel": "node"},
                  {"topology": "t", "requiredTopologyLevel": "rack",
                   "preferredTopologyLevel": HOSTNAME}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_level_named_by_alias_places_like_its_node_label(case, tmp_path):
    by_alias, by_label = CASES[case]
    alias = placement(tmp_path, docs(by_alias), "alias.yaml")
    label = placement(tmp_path, docs(by_label), "label.yaml")
    assert alias == label
    assert alias[0] is not None and alias[0].mode == "hard"
    assert len(alias[2]) == 3 and len(racks(alias[2])) == 1  # three 4-GPU pods, one rack


def test_annotations_and_subgroups_accept_aliases(tmp_path):
    def annotated(level):
        return {"kai.scheduler/topology": "t", "kai.scheduler/topology-required-placement": level}

    assert (placement(tmp_path, docs(annotations=annotated("rack-level")), "a.yaml")
            == placement(tmp_path, docs(annotations=annotated("rack")), "b.yaml"))
    sub_alias = placement(tmp_path, docs(
        subgroup={"topology": "t", "requiredTopologyLevel": "rack-level"}), "c.yaml")
    sub_label = placement(tmp_path, docs(
        subgroup={"topology": "t", "requiredTopologyLevel": "rack"}), "d.yaml")
    assert sub_alias == sub_label and sub_alias[1][0] is not None


def refused(tmp_path, documents, field: str, words: str) -> str:
    with pytest.raises(InputError) as info:
        load(tmp_path, documents)
    text = str(info.value)
    assert info.value.field == field, text
    assert words in text and "\n" not in text
    return text


def test_a_name_neither_label_nor_alias_is_one_line_naming_the_field(tmp_path):
    text = refused(tmp_path, docs({"topology": "t", "requiredTopologyLevel": "rack-lvl"}),
                   "spec.topologyConstraint.requiredTopologyLevel",
                   "'rack-lvl' is neither a level nor a level alias of Topology 't'")
    assert "rack-level" in text  # the known names are listed
    refused(tmp_path, docs({"topology": "t", "requiredTopologyLevel": "rack",
                            "preferredTopologyLevel": "nodes"}),
            "spec.topologyConstraint.preferredTopologyLevel", "'nodes' is neither")
    refused(tmp_path, docs(annotations={"kai.scheduler/topology": "t",
                                        "kai.scheduler/topology-required-placement": "rackz"}),
            "metadata.annotations.kai.scheduler/topology-required-placement", "'rackz'")


def test_an_alias_resolves_only_in_its_own_topology(tmp_path):
    """KAI resolves a constraint's levels with the aliases of the Topology it names."""
    documents = docs({"topology": "u", "requiredTopologyLevel": "rack-level"})
    other = copy.deepcopy(next(d for d in documents if d["kind"] == "Topology"))
    other["metadata"]["name"] = "u"
    for level in other["spec"]["levels"]:
        level.pop("alias", None)
    documents.append(other)
    refused(tmp_path, documents, "spec.topologyConstraint.requiredTopologyLevel",
            "of Topology 'u'")


@pytest.mark.parametrize(
    ("aliases", "field", "words"),
    [
        ({"rack": "x", HOSTNAME: "x"}, "spec.levels[1].alias", "duplicate alias 'x'"),
        ({"rack": HOSTNAME}, "spec.levels[0].alias", "equals a nodeLabel"),
        ({"rack": "bad alias!"}, "spec.levels[0].alias", "not a valid qualified name"),
        ({"rack": ""}, "spec.levels[0].alias", "must not be empty"),
    ],
)
def test_aliases_the_kai_webhook_refuses_are_one_line(aliases, field, words, tmp_path):
    refused(tmp_path, docs({"topology": "t", "requiredTopologyLevel": "rack"}, aliases=aliases),
            field, words)
