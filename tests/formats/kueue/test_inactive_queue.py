"""A ResourceFlavor naming a Topology the input lacks (issue 23): Kueue marks the ClusterQueues
listing it inactive (``TopologyNotFound``, kueue@ff69552
``pkg/cache/scheduler/clusterqueue.go:351-356``); toposolve loads it with one warning line and
their workloads stay pending (``NetworkTopology.never_placed``)."""

from __future__ import annotations

from scheduler_docs import inactive_queue_docs, write_docs

from toposolve.core.instance import NetworkTopology
from toposolve.formats.load import load_instance


def _load(tmp_path, name="in.yaml", **kwargs):
    warnings: list[str] = []
    path = write_docs(tmp_path, inactive_queue_docs(**kwargs), name)
    return path, load_instance(path, warn=warnings.append), warnings


def test_one_line_names_the_file_the_flavor_and_the_topology(tmp_path):
    path, _, warnings = _load(tmp_path)
    assert warnings == [f"{path}: ResourceFlavor/g: spec.topologyName: Topology 'gone' is not in "
                        "the input; ClusterQueue(s) cq2 inactive (Kueue: TopologyNotFound), "
                        "their workloads pending"]


def test_the_inactive_queues_workload_is_never_placed_in_kueues_words(tmp_path):
    _, inst, _ = _load(tmp_path)
    jobs = {job.name: job for job in inst.jobs}
    assert jobs["w2"].network_topology == NetworkTopology(
        mode="hard", never_placed="ClusterQueue cq2 is inactive")
    assert jobs["w2"].subgroup_policies == [] and jobs["w2"].queue == "cq2"


def test_the_other_queues_workload_reads_as_without_the_broken_flavor(tmp_path):
    _, inst, _ = _load(tmp_path)
    _, healthy, warnings = _load(tmp_path, "healthy.yaml", missing=None)
    assert warnings == []
    assert [j for j in inst.jobs if j.name == "w"] == [j for j in healthy.jobs if j.name == "w"]
    assert inst.hypernodes == healthy.hypernodes


def test_a_flavor_no_queue_lists_leaves_every_workload_as_it_was(tmp_path):
    path, inst, warnings = _load(tmp_path, listed=False)
    assert warnings == [f"{path}: ResourceFlavor/g: spec.topologyName: Topology 'gone' is not in "
                        "the input; no ClusterQueue lists the flavor"]
    assert all(job.network_topology is not None and job.network_topology.never_placed is None
               for job in inst.jobs)
