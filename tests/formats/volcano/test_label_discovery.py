"""Volcano's HyperNode label discovery: the discoverer's own Go tests as data
(``data/volcano_label_discovery.yaml``, commit pinned there), then the ConfigMap reader and the
load path."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from toposolve.core.errors import InputError
from toposolve.core.instance import Node
from toposolve.core.label_levels import LabelTopologyError
from toposolve.core.problem import compile_problem
from toposolve.formats import load_instance
from toposolve.formats.k8s.fields import Document
from toposolve.formats.volcano.label_discovery import (
    PROFILE_LABEL,
    ExistingHyperNode,
    discover,
    profiles_for_node,
    read_discovery_profiles,
)

TABLE = yaml.safe_load(
    (Path(__file__).parent / "data" / "volcano_label_discovery.yaml").read_text()
)
CASES = TABLE["cases"]


def configmap(conf: str | dict, name: str = "volcano-controller-configmap") -> Document:
    text = conf if isinstance(conf, str) else yaml.safe_dump(conf)
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "volcano-system"},
        "data": {"volcano-controller.conf": text},
    }
    return Document(body, "cm.yaml", 0)


def label_entry(config: dict) -> dict:
    return {"networkTopologyDiscovery": [{"source": "label", "enabled": True, "config": config}]}


def run_case(case: dict):
    profiles = read_discovery_profiles(configmap(label_entry(case["config"])))
    nodes = [Node(name=n, labels=labels) for n, labels in (case.get("nodes") or {}).items()]
    existing = [ExistingHyperNode(e["name"], e["labels"]) for e in case.get("existing", [])]
    return profiles, nodes, discover(nodes, profiles, existing)


def domain_names(found) -> dict[str, str]:
    """``label=value`` and ``profile:label=value`` → HyperNode name."""
    names: dict[str, str] = {}
    for d in found:
        ((key, value),) = [
            (k, v) for k, v in d.labels.items() if not k.startswith("volcano.sh/network-topology-")
        ]
        names.setdefault(f"{key}={value}", d.hypernode.name)
        names[f"{d.labels[PROFILE_LABEL]}:{key}={value}"] = d.hypernode.name
    return names


def matches(expected: dict, d) -> bool:
    hn = d.hypernode
    return (
        expected["tier"] == hn.tier
        and expected.get("tierName", hn.tier_name) == hn.tier_name
        and expected.get("profile", d.labels[PROFILE_LABEL]) == d.labels[PROFILE_LABEL]
        and all(d.labels.get(k) == v for k, v in expected.get("domain", {}).items())
    )


@pytest.mark.parametrize("case", CASES, ids=[c["go"] for c in CASES])
def test_volcano_label_discovery_table(case):
    if "error" in case:
        with pytest.raises((InputError, LabelTopologyError)) as info:
            run_case(case)
        assert case["error"] in str(info.value)
        return
    profiles, nodes, found = run_case(case)
    if "count" in case:
        assert len(found) == case["count"]
    names = domain_names(found)
    for expected in case.get("hypernodes", []):
        hits = [d for d in found if matches(expected, d)]
        assert len(hits) == 1, expected
        members = [m.selector.exact_match for m in hits[0].hypernode.members]
        want = expected.get("members")
        if want is not None:
            assert members == sorted(names.get(m, m) for m in want)
        kind = "Node" if expected["tier"] == 1 else "HyperNode"
        assert {m.type for m in hits[0].hypernode.members} == {kind}
    for domain, name in case.get("names", {}).items():
        assert names[domain] == name
    for domain, other in case.get("different_name", []):
        assert names[domain] != other
    if case.get("stable"):  # the same desired state gives the same names and graph
        assert run_case(case)[2] == found
    for probe in case.get("selects", []):
        picked = profiles_for_node(Node(name="probe", labels=probe["labels"]), profiles)
        assert [p.name for p in picked] == ([probe["profile"]] if probe["profile"] else [])


def test_mixed_profiles_from_the_controller_yaml():
    """TestParseMixedTopologyProfilesFromYAML: profiles sorted by name, levels as written
    (toposolve keeps them top level first; Volcano stores them bottom first)."""
    conf = textwrap.dedent("""
        networkTopologyDiscovery:
          - source: ufm
            enabled: true
          - source: label
            enabled: true
            config:
              networkTopologyTypes:
                topologyshallow:
                  nodeSelector:
                    matchLabels:
                      volcano.sh/network-topology-profile: shallow
                  levels:
                    - nodeLabel: volcano.sh/shallow-hypercluster
                      tierName: volcano.sh/hypercluster
                    - nodeLabel: volcano.sh/shallow-hypernode
                      tierName: volcano.sh/hypernode
                    - nodeLabel: kubernetes.io/hostname
                topologydeep:
                  nodeSelector:
                    matchLabels:
                      volcano.sh/network-topology-profile: deep
                  levels:
                    - nodeLabel: volcano.sh/deep-hypercluster
                      tierName: volcano.sh/hypercluster
                    - nodeLabel: volcano.sh/deep-hypernode
                      tierName: volcano.sh/hypernode
                    - nodeLabel: volcano.sh/deep-superpod
                      tierName: volcano.sh/superpod
                    - nodeLabel: kubernetes.io/hostname
    """)
    profiles = read_discovery_profiles(configmap(conf))
    assert [p.name for p in profiles] == ["topologydeep", "topologyshallow"]
    assert [(lv.node_label, lv.tier_name) for lv in reversed(profiles[0].levels)] == [
        ("volcano.sh/deep-superpod", "volcano.sh/superpod"),
        ("volcano.sh/deep-hypernode", "volcano.sh/hypernode"),
        ("volcano.sh/deep-hypercluster", "volcano.sh/hypercluster"),
    ]


@pytest.mark.parametrize(
    "entries",
    [
        [],
        [{"source": "label", "enabled": False, "config": CASES[0]["config"]}],
        [{"source": "label", "config": CASES[0]["config"]}],  # enabled defaults to false
        [{"source": "ufm", "enabled": True}],
    ],
)
def test_no_enabled_label_source_means_no_discovery(entries):
    assert read_discovery_profiles(configmap({"networkTopologyDiscovery": entries})) is None


def test_first_enabled_label_entry_wins():
    first = {
        "networkTopologyTypes": {
            "a": [{"nodeLabel": "x/a"}, {"nodeLabel": "kubernetes.io/hostname"}]
        }
    }
    second = {
        "networkTopologyTypes": {
            "b": [{"nodeLabel": "x/b"}, {"nodeLabel": "kubernetes.io/hostname"}]
        }
    }
    conf = {
        "networkTopologyDiscovery": [
            {"source": "label", "enabled": False, "config": second},
            {"source": "label", "enabled": True, "config": first},
            {"source": "label", "enabled": True, "config": second},
        ]
    }
    assert [p.name for p in read_discovery_profiles(configmap(conf))] == ["a"]


# -- the load path ---------------------------------------------------------------------------

NODES = "".join(
    f"""
- apiVersion: v1
  kind: Node
  metadata:
    name: n{i}
    labels: {{example.com/spine: sp{i // 4}, example.com/leaf: lf{i // 2}}}
  status: {{allocatable: {{cpu: "8", nvidia.com/gpu: "8"}}}}"""
    for i in range(8)
)
CONF = """networkTopologyDiscovery:
  - source: label
    enabled: true
    config:
      networkTopologyTypes:
        fabric:
          - nodeLabel: example.com/spine
          - nodeLabel: example.com/leaf
          - nodeLabel: kubernetes.io/hostname
"""


def dump(tmp_path: Path, extra: str = "", conf: str = CONF) -> Path:
    cm = textwrap.indent(f"volcano-controller.conf: |\n{textwrap.indent(conf, '  ')}", "    ")
    text = (
        "apiVersion: v1\nkind: List\nitems:"
        + NODES
        + f"\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: "
          f"volcano-controller-configmap, namespace: volcano-system}}\n  data:\n{cm}"
        + extra
    )
    path = tmp_path / "dump.yaml"
    path.write_text(text)
    return path


def test_configmap_in_a_dump_builds_the_tree(tmp_path):
    instance = load_instance(dump(tmp_path))
    topo = compile_problem(instance).topology
    assert sorted(topo.tier_name_to_tier.items()) == [
        ("example.com/leaf", 1),
        ("example.com/spine", 2),
    ]
    assert sum(1 for t in topo.tier.tolist() if t == 1) == 4
    assert sum(1 for t in topo.tier.tolist() if t == 2) == 2
    assert all(h.name.startswith("hypernode-fabric-tier") for h in instance.hypernodes)


def test_discovery_replaces_label_sourced_hypernodes_and_keeps_others(tmp_path):
    first = load_instance(dump(tmp_path))
    leaf = next(
        h for h in first.hypernodes if h.tier == 1 and h.members[0].selector.exact_match == "n0"
    )
    stale = f"""
- apiVersion: topology.volcano.sh/v1alpha1
  kind: HyperNode
  metadata:
    name: {leaf.name}
    labels: {{volcano.sh/network-topology-source: label, example.com/leaf: lf0}}
  spec: {{tier: 1, members: [{{type: Node, selector: {{exactMatch: {{name: n0}}}}}}]}}
- apiVersion: topology.volcano.sh/v1alpha1
  kind: HyperNode
  metadata: {{name: storage}}
  spec: {{tier: 5, members: [{{type: Node, selector: {{exactMatch: {{name: absent}}}}}}]}}"""
    warnings: list[str] = []
    again = load_instance(dump(tmp_path, stale), warn=warnings.append)
    assert sorted(h.name for h in again.hypernodes) == sorted(
        [*(h.name for h in first.hypernodes), "storage"]
    )
    assert next(h for h in again.hypernodes if h.name == leaf.name).members == leaf.members
    assert any("label-sourced HyperNodes, which differ" in w for w in warnings)


@pytest.mark.parametrize(
    ("conf", "phrase"),
    [
        ("networkTopologyDiscovery: [", "invalid YAML"),
        (
            CONF.replace("fabric:", "fabric:\n          nodeSelecter: {}\n          levels:"),
            "nodeSelecter",
        ),
        (
            CONF.replace(
                "example.com/leaf\n", "example.com/leaf\n          - nodeLabel: example.com/leaf\n"
            ),
            "duplicate nodeLabel",
        ),
        (
            CONF.replace(
                "- nodeLabel: kubernetes.io/hostname",
                "".join(f"- nodeLabel: example.com/l{i}\n          " for i in range(20_000))
                + "- nodeLabel: kubernetes.io/hostname",
            ),
            "20,003 levels, more than the limit of 100 topology levels and the node level",
        ),
    ],
)
def test_bad_configmap_is_one_line_naming_the_configmap(tmp_path, conf, phrase):
    with pytest.raises(InputError) as info:
        load_instance(dump(tmp_path, conf=conf))
    message = str(info.value)
    assert "\n" not in message and phrase in message
    assert "ConfigMap/volcano-system/volcano-controller-configmap" in message


def test_discovery_failure_is_one_line(tmp_path):
    conf = CONF.replace("example.com/spine", "example.com/leaf", 1).replace(
        "- nodeLabel: example.com/leaf\n          - nodeLabel: kubernetes.io",
        "- nodeLabel: example.com/rack\n          - nodeLabel: kubernetes.io",
    )
    path = dump(tmp_path, conf=conf)
    path.write_text(
        path.read_text().replace(
            "example.com/spine: sp0", "example.com/spine: sp0, example.com/rack: r0"
        )
    )
    # rack r0 sits below leaf lf0 (n0, n1) and lf1 (n2, n3)
    with pytest.raises(InputError, match="belongs to multiple parents"):
        load_instance(path)


def test_configmap_and_topology_labels_together_is_an_error(tmp_path):
    with pytest.raises(InputError, match="build the tree twice"):
        load_instance(dump(tmp_path), topology_labels="example.com/spine,example.com/leaf")


def test_two_controller_configmaps_is_an_error(tmp_path):
    extra = (
        "\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: other-controller-configmap}\n"
        "  data: {volcano-controller.conf: ''}"
    )
    path = dump(tmp_path, extra)
    with pytest.raises(InputError, match="two Volcano controller ConfigMaps"):
        load_instance(path)


def test_other_configmaps_are_skipped_with_a_warning(tmp_path):
    extra = (
        "\n- apiVersion: v1\n  kind: ConfigMap\n"
        "  metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}\n  data: {a: b}"
    )
    warnings: list[str] = []
    load_instance(dump(tmp_path, extra), warn=warnings.append)
    assert warnings == [
        f"{tmp_path / 'dump.yaml'}: ConfigMap/volcano-system/volcano-scheduler-configmap: skipped "
        "(kind not used by toposolve)"
    ]
