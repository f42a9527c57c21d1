"""KAI's message shapes (engines/kai/reasons.py), each against a string KAI's own tests assert
(pkg/scheduler/api/common_info/job_errors_test.go, plugins/topology/job_filtering_test.go and the
allocate tests at the commit in docs/kai-fidelity.md)."""

from __future__ import annotations

import numpy as np
import pytest

from toposolve.engines.kai.reasons import (
    FitError,
    detailed_message,
    domain_error,
    insufficient_resources,
    no_topology_match,
    not_enough_in,
    pods_short,
)

GB = 1e9 * 1000  # one GB of memory in toposolve's milli-units


@pytest.mark.parametrize("name,requested,available,line", [
    ("cpu", 1500, 1000, "domain1 didn't have enough resources: CPU cores, requested: 1.5, "
     "available: 1"),
    ("memory", 0.003 * GB, 0.002 * GB, "domain1 didn't have enough resources: memory, "
     "requested: 0.003, available: 0.002"),
    ("nvidia.com/gpu", 2000, 1000, "domain1 didn't have enough resource: GPUs, requested: 2, "
     "available: 1"),
    ("custom.io/res", 5_000_000, 3_000_000, "domain1 didn't have enough resource: "
     "custom.io/res, requested: 5000, available: 3000"),
])
def test_insufficient_resource_line(name, requested, available, line):
    got = insufficient_resources("domain1", [name], np.array([requested]), np.array([available]))
    assert got == [line]


def test_insufficient_resources_skips_what_fits_and_keeps_order():
    got = insufficient_resources("zone1", ["cpu", "memory", "nvidia.com/gpu"],
                                 np.array([1000, 1.0, 1000]), np.array([500, 5.0, 0]))
    assert got == ["zone1 didn't have enough resources: CPU cores, requested: 1, available: 0.5",
                   "zone1 didn't have enough resource: GPUs, requested: 1, available: 0"]


def test_pods_short():
    assert pods_short("zone1", 1, 2) == "node-group zone1 can allocate only 1 of 2 required pods"


def test_no_topology_match_names_a_subgroup_but_not_the_default():
    sub = no_topology_match("test-topology", "zone", "test-namespace/test-job", "test")
    assert sub.detail == ("topology test-topology, requirement zone couldn't be satisfied for job "
                          "<test-namespace/test-job>, subgroup test")
    plain = no_topology_match("test-topology", "zone", "/test-job", "default",
                              not_enough_in("zone1"))
    assert plain.detail == ("topology test-topology, requirement zone couldn't be satisfied for "
                            "job </test-job>: not enough resources in zone1 to allocate the job")


def test_domain_error_prefixes_domain_and_subgroup():
    assert domain_error("rack1", "default", ["x"]).detail == "<rack1>: x"
    assert domain_error("rack1", "sub-a", ["x", "y"]).detail == "<rack1>: subgroup sub-a: x, y"


def test_detailed_message_one_error_keeps_its_reason_several_are_sorted():
    one = FitError("PodSchedulingErrors", "b")
    assert detailed_message([one]) == "\nPodSchedulingErrors.\nb."
    many = [FitError("r", "topology t"), FitError("r", "<rack2>: y"), FitError("r", "<rack1>: x")]
    assert detailed_message(many) == ("\nUnable to schedule podgroup.\n<rack1>: x.\n<rack2>: y."
                                      "\ntopology t.")


def test_a_constraint_trees_root_is_the_cluster_and_its_level_is_the_label(tmp_path):
    from pathlib import Path

    import yaml

    import toposolve
    from toposolve.formats.load import load_instance

    dump = Path(__file__).resolve().parents[3] / "instances" / "kai-crossing-topologies.yaml"
    docs = list(yaml.safe_load_all(dump.read_text()))
    for d in docs:  # eval's pods fit no node: no zone of zone-topology holds them
        if d["kind"] == "Pod" and d["metadata"]["name"].startswith("eval-"):
            d["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "12"
    (tmp_path / "in.yaml").write_text(yaml.safe_dump_all(docs))
    plan = toposolve.solve(load_instance(tmp_path / "in.yaml", warn=lambda _: None), "kai")
    (entry,) = [j for j in plan.jobs if j.job == "default/eval"]
    assert entry.scheduler_reason == (
        "\nPodSchedulingErrors.\ntopology zone-topology, requirement topology.kubernetes.io/zone "
        "couldn't be satisfied for job <default/eval>: not enough resources in the cluster to "
        "allocate the job.")
