"""Multi-layer slices on a Workload (``podsetSliceRequiredTopologyConstraints``) → the gang tree
(``formats/kueue/slices.py``), and what the reader refuses in one line."""

from __future__ import annotations

import pytest
from scheduler_docs import kueue_docs, podset, workload, write_docs

from toposolve.core.errors import InputError
from toposolve.formats.load import load_instance

LEVELS = ["block", "rack", "kubernetes.io/hostname"]


def load(tmp_path, podsets, warn=lambda _: None):
    docs = kueue_docs(LEVELS, workload(podsets))
    for doc in docs:  # two racks per block, one host per node
        if doc["kind"] == "Node":
            labels = doc["metadata"]["labels"]
            labels["rack"] = f"{labels['block']}-r{int(doc['metadata']['name'][-1]) % 2}"
            labels["kubernetes.io/hostname"] = doc["metadata"]["name"]
    return load_instance(write_docs(tmp_path, docs), warn=warn)


def layers(*pairs):
    return {"podsetSliceRequiredTopologyConstraints": [{"topology": t, "size": s}
                                                        for t, s in pairs]}


def test_three_layers_nest_gang_groups_in_pod_index_order(tmp_path):
    inst = load(tmp_path, [podset("main", 8, {"required": "block", **layers(
        ("block", 8), ("rack", 4), ("kubernetes.io/hostname", 2))})])
    (job,) = inst.jobs
    groups = {g.name: (g.parent, g.network_topology.highest_tier_allowed) for g in job.gang_groups}
    assert groups == {"main-layer0-0": (None, 3), "main-layer1-0": ("main-layer0-0", 2),
                      "main-layer1-1": ("main-layer0-0", 2)}
    assert [(p.parent, p.sub_group_size, p.network_topology.highest_tier_allowed)
            for p in job.subgroup_policies] == [("main-layer1-0", 2, 1), ("main-layer1-1", 2, 1)]
    labels = job.tasks[0].labels_of(5)
    assert [labels[f"toposolve.io/kueue-slice-{k}"] for k in range(3)] == ["0", "1", "2"]


def test_more_layers_than_the_workload_crd_allows_is_a_one_line_error(tmp_path):
    request = layers(("block", 8), ("rack", 4), ("kubernetes.io/hostname", 2),
                     ("kubernetes.io/hostname", 1))
    with pytest.raises(InputError, match="topology constraints must contain between 1 and 3 "
                                         "entries, got 4") as err:
        load(tmp_path, [podset("main", 8, request)])
    assert "\n" not in str(err.value) and "Workload/default/w" in str(err.value)


@pytest.mark.parametrize(("request_", "why"), [
    (layers(("kubernetes.io/hostname", 4), ("rack", 2)),
     "additional slice layer topology rack must be at a lower level than kubernetes.io/hostname"),
    (layers(("rack", 4), ("kubernetes.io/hostname", 3)),
     "additional slice layer size 3 must evenly divide parent layer size 4"),
    (layers(("rack", 4), ("rack", 2)),
     "additional slice layer topology rack must be at a lower level than rack"),
])
def test_layers_kueues_tas_never_places_leave_the_workload_pending(tmp_path, request_, why):
    """The Workload webhook checks only size > 0; TAS refuses these layers
    (``buildSliceSizeAtLevel``): a constraint no node satisfies, Kueue's text kept."""
    warnings: list[str] = []
    (job,) = load(tmp_path, [podset("main", 8, request_)], warn=warnings.append).jobs
    assert job.network_topology.never_placed == why
    assert not job.gang_groups and not job.subgroup_policies
    assert len(warnings) == 1 and why in warnings[0] and "stays pending" in warnings[0]


def test_a_layer_level_the_topology_lacks_leaves_the_workload_pending(tmp_path):
    """Kueue's ``HasLevel`` checks every layer: no flavor fits, the workload stays pending, before
    TAS could check the layers' sizes."""
    inst = load(tmp_path, [podset("main", 8, layers(("rack", 4), ("zone", 2)))])
    (job,) = inst.jobs
    assert job.network_topology.missing_level == "zone"
    assert not job.gang_groups and not job.subgroup_policies
    (job,) = load(tmp_path, [podset("main", 8, layers(("rack", 4), ("zone", 3)))]).jobs
    assert job.network_topology.missing_level == "zone"
    assert job.network_topology.never_placed is None


def test_a_podset_group_takes_no_multi_layer_slices(tmp_path):
    group = {"required": "block", "podSetGroupName": "g"}
    with pytest.raises(InputError, match="podSetGroupName: may not be set when "
                                         "podsetSliceRequiredTopologyConstraints is specified"):
        load(tmp_path, [podset("leader", 1, group), podset("workers", 4, {**group, **layers(
            ("rack", 4), ("kubernetes.io/hostname", 2))})])


def test_slices_inside_a_podset_with_its_own_level_nest_below_its_gang_group(tmp_path):
    """Kueue places each podset with its own request: podset a's level is a GangGroup
    ``podset-a`` over its layers (``tests/formats/kueue/test_podset_slices.py`` has the rest)."""
    (job,) = load(tmp_path, [podset("a", 4, {"required": "block", **layers(
        ("rack", 4), ("kubernetes.io/hostname", 2))}), podset("b", 2, {"required": "rack"})]).jobs
    assert [(g.name, g.parent, g.network_topology.highest_tier_allowed)
            for g in job.gang_groups] == [("podset-a", None, 3), ("a-layer0-0", "podset-a", 2)]
