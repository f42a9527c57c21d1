"""The generic label → HyperNode builder (value and path identity, missing-label modes,
names), the --topology-labels option and the unused-topology-label warning."""

from __future__ import annotations

import pytest

from toposolve.core.errors import InputError
from toposolve.core.instance import Node
from toposolve.core.label_levels import (
    LabelLevel,
    LabelTopologyError,
    hypernodes_from_labels,
    option_hypernodes,
    parse_label_list,
    topology_label_hint,
)
from toposolve.core.problem import compile_problem
from toposolve.formats import load_instance

LEVELS = [LabelLevel("x/block", "block"), LabelLevel("x/rack")]


def node(name: str, **labels: str) -> Node:
    return Node(name=name, labels={f"x/{k}": v for k, v in labels.items()})


def tree(hypernodes) -> dict[str, tuple[int, str | None, list[str]]]:
    return {
        h.name: (h.tier, h.tier_name, [m.selector.exact_match for m in h.members])
        for h in hypernodes
    }


def test_value_identity_builds_tiers_from_the_bottom():
    nodes = [
        node("n1", block="b1", rack="r1"),
        node("n0", block="b1", rack="r1"),
        node("n2", block="b1", rack="r2"),
    ]
    assert tree(hypernodes_from_labels(nodes, LEVELS)) == {
        "r1": (1, "x/rack", ["n0", "n1"]),
        "r2": (1, "x/rack", ["n2"]),
        "b1": (2, "block", ["r1", "r2"]),
    }


def test_value_identity_rejects_a_value_under_two_parents():
    nodes = [node("n0", block="b1", rack="r1"), node("n1", block="b2", rack="r1")]
    with pytest.raises(
        LabelTopologyError, match="x/rack=r1 belongs to multiple parents: x/block=b1 and x/block=b2"
    ):
        hypernodes_from_labels(nodes, LEVELS)


def test_path_identity_keeps_equal_values_under_different_parents_apart():
    """Kueue/KAI: rack r1 of block b1 and rack r1 of block b2 are two racks."""
    nodes = [node("n0", block="b1", rack="r1"), node("n1", block="b2", rack="r1")]
    assert tree(hypernodes_from_labels(nodes, LEVELS, identity="path")) == {
        "b1.r1": (1, "x/rack", ["n0"]),
        "b2.r1": (1, "x/rack", ["n1"]),
        "b1": (2, "block", ["b1.r1"]),
        "b2": (2, "block", ["b2.r1"]),
    }


def test_a_missing_level_label_errors_or_truncates_by_mode():
    nodes = [node("n0", block="b1", rack="r1"), node("n1", rack="r2"), node("n2", block="b1")]
    with pytest.raises(LabelTopologyError, match="node n1 is missing level label x/block"):
        hypernodes_from_labels(nodes, LEVELS, missing="error")
    # truncate: n1's rack has no parent, n2 (no lowest label) is left out
    assert tree(hypernodes_from_labels(nodes, LEVELS, missing="truncate")) == {
        "r1": (1, "x/rack", ["n0"]),
        "r2": (1, "x/rack", ["n1"]),
        "b1": (2, "block", ["r1"]),
    }
    assert tree(hypernodes_from_labels(nodes, LEVELS, missing="skip")) == {
        "r1": (1, "x/rack", ["n0"]),
        "b1": (2, "block", ["r1"]),
    }


def test_keep_leaves_a_node_lacking_a_lower_label_in_the_domains_above():
    # kube-scheduler: a domain is the nodes carrying its value, whatever their lower labels
    nodes = [node("n0", block="b1", rack="r1"), node("n1", block="b1"), node("n2", rack="r2")]
    assert tree(hypernodes_from_labels(nodes, LEVELS, missing="keep")) == {
        "r1": (1, "x/rack", ["n0"]),
        "r2": (1, "x/rack", ["n2"]),
        "b1": (2, "block", ["n1", "r1"]),
    }
    kinds = {h.name: [m.type for m in h.members]
             for h in hypernodes_from_labels(nodes, LEVELS, missing="keep")}
    assert kinds["b1"] == ["Node", "HyperNode"]


def test_keep_rejects_a_domain_both_under_a_parent_and_under_none():
    nodes = [node("n0", block="b1", rack="r1"), node("n1", rack="r1")]
    with pytest.raises(LabelTopologyError,
                       match="x/rack=r1 belongs to x/block=b1 and to no x/block"):
        hypernodes_from_labels(nodes, LEVELS, missing="keep")
    # the unlabelled node first (nodes are taken by name): the same conflict, found from above
    nodes = [node("a", rack="r1"), node("b", block="b1", rack="r1")]
    with pytest.raises(LabelTopologyError,
                       match=r"x/rack=r1 belongs to x/block=b1 \(node b\) and to no x/block"):
        hypernodes_from_labels(nodes, LEVELS, missing="keep")


def test_values_shared_by_two_levels_get_tier_prefixed_names():
    nodes = [node("n0", block="a", rack="a")]
    assert sorted(h.name for h in hypernodes_from_labels(nodes, LEVELS)) == ["tier1-a", "tier2-a"]


def test_a_trailing_hostname_level_is_the_node_itself():
    nodes = [Node(name="n0", labels={"x/rack": "r1", "kubernetes.io/hostname": "h0"})]
    levels = [LabelLevel("x/rack"), LabelLevel("kubernetes.io/hostname")]
    assert tree(hypernodes_from_labels(nodes, levels)) == {"r1": (1, "x/rack", ["n0"])}
    with pytest.raises(LabelTopologyError, match="no topology level"):
        hypernodes_from_labels(nodes, levels[1:])


def test_custom_names_must_be_distinct():
    nodes = [node("n0", block="b1", rack="r1")]
    with pytest.raises(LabelTopologyError, match="two domains get the HyperNode name 'same'"):
        hypernodes_from_labels(nodes, LEVELS, name=lambda d: "same")


@pytest.mark.parametrize(
    ("value", "phrase"),
    [
        ("", "expected LABEL"),
        ("a,,b", "expected LABEL"),
        ("a,a", "given twice"),
        ("a/b/c", "at most one '/'"),
        ("x/-bad", "name part"),
        (",".join(f"l{i}" for i in range(10_000)), "10,000 labels, more than the limit of 100"),
    ],
)
def test_bad_label_lists(value, phrase):
    with pytest.raises(LabelTopologyError, match=phrase):
        parse_label_list(value)


def test_option_names_clash_with_input_hypernodes():
    with pytest.raises(InputError, match="'r1', which an input HyperNode already is"):
        option_hypernodes([node("n0", rack="r1")], "x/rack", taken=["r1"])


def test_hint_lists_well_known_labels_fewest_values_first():
    nodes = [
        Node(
            name=f"n{i}",
            labels={
                "cloud.google.com/gce-topology-block": "b",
                "cloud.google.com/gce-topology-subblock": f"s{i // 2}",
                "other/label": "x",
            },
        )
        for i in range(4)
    ]
    hint = topology_label_hint(nodes)
    assert (
        "--topology-labels "
        "cloud.google.com/gce-topology-block,cloud.google.com/gce-topology-subblock "
        in hint
    )
    assert "other/label" not in hint
    assert (
        topology_label_hint([Node(name="n", labels={"volcano.sh/network-topology-profile": "a"})])
        is None
    )


NATIVE = """
apiVersion: toposolve/v1
kind: Instance
nodeGroups:
  - {name: n0,
     labels: {network.topology.kubernetes.io/spine: s0, network.topology.kubernetes.io/leaf: l0},
     allocatable: {cpu: "8"}}
  - {name: n1,
     labels: {network.topology.kubernetes.io/spine: s0, network.topology.kubernetes.io/leaf: l1},
     allocatable: {cpu: "8"}}
"""


def test_load_instance_topology_labels_and_the_warning(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(NATIVE)
    warnings: list[str] = []
    bare = load_instance(path, warn=warnings.append)
    assert bare.hypernodes == [] and len(warnings) == 1
    assert "network.topology.kubernetes.io/spine,network.topology.kubernetes.io/leaf" in warnings[0]
    warnings.clear()
    labels = ["network.topology.kubernetes.io/spine", "network.topology.kubernetes.io/leaf"]
    built = load_instance(path, warn=warnings.append, topology_labels=labels)
    assert warnings == []
    assert compile_problem(built).topology.tier_name_to_tier == {labels[1]: 1, labels[0]: 2}
    with pytest.raises(InputError, match="--topology-labels: expected LABEL"):
        load_instance(path, topology_labels="a,")


def test_a_topology_label_no_node_carries_is_one_warning(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(NATIVE)
    warnings: list[str] = []
    flat = load_instance(path, warn=warnings.append, topology_labels="example.com/nosuch")
    assert flat.hypernodes == []
    assert [w for w in warnings if "no node carries" in w] == [
        f"{path}: --topology-labels: no node carries label 'example.com/nosuch', so that level "
        "holds no domain"]


def test_hostname_level_kept_makes_one_domain_per_node():
    """Kueue/KAI: a trailing kubernetes.io/hostname level is a tier of its own."""
    nodes = [
        Node(name=f"n{i}", labels={"x/rack": "r1", "kubernetes.io/hostname": f"h{i}"})
        for i in range(2)
    ]
    levels = [LabelLevel("x/rack"), LabelLevel("kubernetes.io/hostname")]
    built = hypernodes_from_labels(nodes, levels, identity="path", hostname_level=True)
    assert tree(built) == {
        "r1.h0": (1, "kubernetes.io/hostname", ["n0"]),
        "r1.h1": (1, "kubernetes.io/hostname", ["n1"]),
        "r1": (2, "x/rack", ["r1.h0", "r1.h1"]),
    }


def test_the_hint_gives_one_suggestion_per_naming_scheme():
    """Issue 21 §3: four schemes naming the same two levels gave one 8-label suggestion."""
    schemes = {"volcano.sh/": ("block", "rack"),
               "cloud.google.com/gce-topology-": ("block", "subblock"),
               "network.topology.kubernetes.io/": ("spine", "leaf"),
               "topology.k8s.aws/network-node-layer-": ("1", "2")}
    nodes = [Node(name=f"n{i}", labels={f"{prefix}{level}": f"{level}{i // (4 if k == 0 else 2)}"
                                        for prefix, names in schemes.items()
                                        for k, level in enumerate(names)})
             for i in range(8)]
    hint = topology_label_hint(nodes)
    assert "pass ONE of" in hint and hint.count("--topology-labels ") == 4
    for prefix, (top, low) in schemes.items():
        assert f"--topology-labels {prefix}{top},{prefix}{low} (2, 4 values)" in hint
    assert "LABEL=TIERNAME" in hint


def test_topology_labels_take_tier_names(tmp_path):
    """Issue 21 §3: LABEL=TIERNAME names the tier, so a job's highestTierName resolves."""
    from toposolve.core.label_levels import parse_label_items

    levels = parse_label_items("example.com/block=block, example.com/rack=rack ,example.com/x")
    assert [(lv.node_label, lv.tier_name) for lv in levels] == [
        ("example.com/block", "block"), ("example.com/rack", "rack"), ("example.com/x", None)]
    for bad in ("a=", "=b", "a=t,b=t"):
        with pytest.raises(LabelTopologyError):
            parse_label_items(bad)
    path = tmp_path / "labels.yaml"
    path.write_text("""
apiVersion: toposolve/v1
kind: Instance
nodeGroups:
  - {name: "n-{i}", count: 4, allocatable: {nvidia.com/gpu: 8},
     labels: {example.com/block: b0, example.com/rack: r0}}
jobs:
  - name: j
    networkTopology: {mode: hard, highestTierName: rack}
    tasks: [{name: w, replicas: 2, requests: {nvidia.com/gpu: 8}}]
""")
    warnings: list[str] = []
    inst = load_instance(path, topology_labels="example.com/block=block,example.com/rack=rack",
                         warn=warnings.append)
    assert warnings == []  # the tier name is known: the constraint is kept
    problem = compile_problem(inst)
    assert problem.jobs[0].limit.hard and problem.jobs[0].limit.tier == 1
