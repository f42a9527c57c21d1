"""Native YAML carries ``withinHyperNode``, so an input with several Kueue/KAI Topologies
round-trips through it; the Kueue and KAI writers say they leave it out."""

from __future__ import annotations

from pathlib import Path

import pytest

from toposolve.formats.kai.writer import kai_documents
from toposolve.formats.load import load_instance
from toposolve.formats.native.writer import write_native

ROOT = Path(__file__).resolve().parents[3] / "instances"


def constraints(inst) -> dict[str, tuple]:
    out = {}
    for job in inst.jobs:
        specs = [job.network_topology, *(p.network_topology for p in job.subgroup_policies)]
        out[job.key] = [(s.mode, s.highest_tier_allowed, s.within_hypernode)
                        for s in specs if s is not None]
    return out


@pytest.mark.parametrize("name", ["kueue-two-flavors.yaml"])
def test_native_round_trip_keeps_each_constraints_topology(tmp_path, name):
    inst = load_instance(ROOT / name, warn=lambda _: None)
    write_native(inst, tmp_path / "native.yaml")
    back = load_instance(tmp_path / "native.yaml", warn=lambda _: None)
    assert constraints(back) == constraints(inst)
    assert any(c[2] == "cpu-topology" for cs in constraints(back).values() for c in cs)
    assert back.hypernodes == inst.hypernodes


def test_the_kai_writer_names_each_job_whose_topology_it_drops():
    inst = load_instance(ROOT / "kai-two-topologies.yaml", warn=lambda _: None)
    lines: list[str] = []
    kai_documents(inst, lines.append)
    dropped = sorted(line.split(":")[0] for line in lines if "Topology its constraints" in line)
    assert dropped == ["Job/default/etl", "Job/default/serve", "Job/default/train"]


def test_native_round_trip_keeps_constraint_trees_and_the_tree_each_constraint_names(tmp_path):
    inst = load_instance(ROOT / "kai-crossing-topologies.yaml", warn=lambda _: None)
    # KAI SubGroups all map to policies named "subgroup", which native YAML cannot hold twice
    inst.jobs = [job for job in inst.jobs if not job.subgroup_policies]
    write_native(inst, tmp_path / "native.yaml")
    back = load_instance(tmp_path / "native.yaml", warn=lambda _: None)
    assert back.constraint_trees == inst.constraint_trees and back.hypernodes == inst.hypernodes
    trees = {job.name: job.network_topology.tree for job in back.jobs if job.network_topology}
    assert trees == {"train": None, "eval": "zone-topology"}
