"""A Topology no node carries every level of (issue 23): Kueue's TAS snapshot of its flavor has
no domain, so the workload's first podset using TAS fails with ``no topology domains at level:
<its level>`` (kueue@ff69552 ``tas_flavor_snapshot.go:1340-1342``); the reader words it and
marks that podset ``never_placed``, with one warning line."""

from __future__ import annotations

import pytest
from scheduler_docs import kueue_docs, podset, workload, write_docs

from toposolve.core.instance import NetworkTopology
from toposolve.formats.load import load_instance

# the nodes of kueue_docs carry block and hostname labels only
LEVELS = ["zone", "rack"]


def _load(tmp_path, podsets, levels=LEVELS):
    warnings: list[str] = []
    path = write_docs(tmp_path, kueue_docs(levels, workload(podsets)))
    return path, load_instance(path, warn=warnings.append), warnings


@pytest.mark.parametrize(
    ("request_", "why"),
    [
        ({"required": "rack"}, "no topology domains at level: rack"),
        ({"preferred": "zone"}, "no topology domains at level: zone"),
        ({"unconstrained": True}, "no topology domains at level: rack"),
        (None, "no topology domains at level: rack"),  # implied: a TAS-only ClusterQueue
        ({"podSetSliceRequiredTopology": "zone", "podSetSliceSize": 2},
         "no topology domains at level: zone"),  # slices only: the highest level
        ({"required": "rack", "podSetSliceRequiredTopology": "zone", "podSetSliceSize": 2},
         "podset slice topology zone is above the podset topology rack"),
    ],
)
def test_the_first_podset_is_never_placed_with_kueues_reason(tmp_path, request_, why):
    path, inst, warnings = _load(tmp_path, [podset("main", 4, request_)])
    (job,) = inst.jobs
    assert job.network_topology == NetworkTopology(mode="hard", never_placed=why)
    assert job.subgroup_policies == [] and job.tasks[0].partition is None
    assert warnings[-1] == (f"{path}: Workload/default/w: podset 'main': Topology 't' has no node "
                            f"with all its level labels; the workload stays pending (Kueue: {why})")


def test_a_podset_without_pods_is_skipped_and_the_next_one_marked(tmp_path):
    _, inst, _ = _load(tmp_path, [podset("a", 0, {"required": "zone"}),
                                  podset("b", 2, {"required": "rack"})])
    (job,) = inst.jobs
    # each podset is a SubJob of its own; podset a, without pods, keeps its level
    assert [p.network_topology.never_placed for p in job.subgroup_policies
            if p.network_topology] == [None, "no topology domains at level: rack"]


def test_a_topology_with_a_domain_is_read_as_before(tmp_path):
    _, inst, warnings = _load(tmp_path, [podset("main", 4, {"required": "block"})],
                              levels=["block", "kubernetes.io/hostname"])
    (job,) = inst.jobs
    assert job.network_topology is not None and job.network_topology.never_placed is None
    assert warnings == []


def test_a_missing_level_wins_over_the_empty_topology(tmp_path):
    _, inst, _ = _load(tmp_path, [podset("main", 4, {"required": "block"})])
    (job,) = inst.jobs
    assert job.network_topology == NetworkTopology(mode="hard", missing_level="block")


def test_a_podset_without_a_request_in_a_queue_with_a_plain_flavor_is_not_marked(tmp_path):
    """Without a topology request a podset uses TAS only in a ClusterQueue of TAS flavors
    (``isTASImplied``): beside a flavor without a topology it is not Kueue's TAS to refuse."""
    docs = kueue_docs(LEVELS, workload([podset("main", 4)]))
    for doc in docs:
        if doc["kind"] == "ClusterQueue":
            doc["spec"]["resourceGroups"][0]["flavors"].append(
                {"name": "plain", "resources": [{"name": "cpu", "nominalQuota": "4"}]})
    docs.append({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
                 "metadata": {"name": "plain"}, "spec": {}})
    (job,) = load_instance(write_docs(tmp_path, docs), warn=lambda _: None).jobs
    assert job.network_topology is None
