"""Several KAI Topologies in one input (issue 23 §1): a subtree per Topology, each constraint
kept on the nodes of the Topology it names; a Topology crossing the forest over the same nodes
read as a constraint tree of its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from scheduler_docs import write_docs

from toposolve.core.problem import compile_problem
from toposolve.formats.load import load_instance

DUMP = Path(__file__).resolve().parents[3] / "instances" / "kai-two-topologies.yaml"


def docs() -> list[dict]:
    return list(yaml.safe_load_all(DUMP.read_text(encoding="utf-8")))


def jobs(inst):
    return {job.name: job for job in inst.jobs}


def test_each_constraint_stays_in_the_tree_of_its_topology():
    inst = load_instance(DUMP, warn=lambda _: None)
    names = {hn.name: hn.tier for hn in inst.hypernodes}
    assert names["gpu-topology"] == 4 and names["cpu-topology"] == 3
    by_name = jobs(inst)
    train, etl = by_name["train"].network_topology, by_name["etl"].network_topology
    # levels keep the tiers they have alone: spine 3 (rack 2 preferred), zone 2
    assert (train.mode, train.highest_tier_allowed, train.preferred_tier) == ("hard", 3, 2)
    assert train.within_hypernode == "gpu-topology"
    assert (etl.highest_tier_allowed, etl.within_hypernode) == (2, "cpu-topology")
    serve = {p.label_selector.match_labels["kai.scheduler/subgroup-name"]:
             p.network_topology.within_hypernode for p in by_name["serve"].subgroup_policies}
    assert serve == {"model": "gpu-topology", "frontend": "cpu-topology"}
    assert by_name["batch"].network_topology is None


def test_the_problem_admits_a_constrained_pod_only_on_its_topologys_nodes():
    inst = load_instance(DUMP, warn=lambda _: None)
    problem = compile_problem(inst)
    names = np.array(problem.topology.node_names)
    where = {}
    for g in range(problem.n_groups):
        job = problem.jobs[problem.group_job[g]].key.split("/")[1]
        where.setdefault(job, set()).update(names[problem.group_feasible[g]].tolist())
    gpu = {f"gpu-{i}" for i in range(8)}
    cpu = {f"cpu-{i}" for i in range(4)}
    assert where["train"] == gpu and where["etl"] == cpu
    assert where["serve"] == gpu | cpu and where["batch"] == gpu | cpu  # per SubGroup / none


def test_one_named_topology_keeps_the_single_tree(tmp_path):
    kept = [d for d in docs() if d["metadata"]["name"] not in ("etl", "serve")
            and d.get("metadata", {}).get("annotations", {}).get("pod-group-name")
            not in ("etl", "serve")]
    inst = load_instance(write_docs(tmp_path, kept), warn=lambda _: None)
    assert "gpu-topology" not in {hn.name for hn in inst.hypernodes}
    assert jobs(inst)["train"].network_topology.within_hypernode is None


def test_a_topology_crossing_the_forest_becomes_a_constraint_tree(tmp_path):
    changed = docs()
    changed[0]["metadata"]["labels"]["topology.kubernetes.io/zone"] = "zone-a"  # gpu-0
    inst = load_instance(write_docs(tmp_path, changed), warn=lambda _: None)
    # the first named Topology keeps the forest; the one sharing gpu-0 is a tree of its own
    assert [t.name for t in inst.constraint_trees] == ["cpu-topology"]
    tree = compile_problem(inst).trees["cpu-topology"]
    held = {tree.node_names[n] for n in tree.members[tree.index["cpu-topology"]].indices}
    assert held == {"gpu-0", "cpu-0", "cpu-1", "cpu-2", "cpu-3"}
    etl = jobs(inst)["etl"].network_topology
    assert (etl.tree, etl.within_hypernode, etl.highest_tier_allowed) == (
        "cpu-topology", "cpu-topology", 2)
    assert jobs(inst)["train"].network_topology.tree is None
    assert "cpu-topology" not in {hn.name for hn in inst.hypernodes}


@pytest.mark.parametrize("engine", ["volcano", "kueue", "kai", "kube", "cpsat"])
def test_every_engine_keeps_the_cpu_job_on_the_cpu_pool(engine):
    import toposolve

    inst = load_instance(DUMP, warn=lambda _: None)
    plan = toposolve.solve(inst, engine, time_limit=5, workers=1)  # checked inside solve()
    etl = [b.node for b in plan.bindings if b.pod.startswith("default/etl-")]
    assert len(etl) == 3 and all(node.startswith("cpu-") for node in etl)
    placed = {p.job: p for p in plan.jobs}
    if engine == "kube":  # the Workload API has no sub-gangs: says so instead of misplacing
        assert not placed["default/serve"].placed
        assert "sub-gangs" in placed["default/serve"].reason
    else:
        assert all(p.placed for p in plan.jobs)


def test_a_node_lacking_only_the_lower_level_stays_outside_its_spine(tmp_path):
    # KAI's tree holds only nodes carrying every level label (isNodePartOfTopology,
    # pkg/scheduler/plugins/topology/common.go, KAI-Scheduler@d5bc503): gpu-0 keeps its spine
    # label yet is in no spine
    changed = docs()
    node = next(d for d in changed if d["kind"] == "Node" and d["metadata"]["name"] == "gpu-0")
    del node["metadata"]["labels"]["network.example.com/rack"]
    lines: list[str] = []
    inst = load_instance(write_docs(tmp_path, changed), warn=lines.append)
    held = {m.selector.exact_match for h in inst.hypernodes for m in h.members
            if m.type == "Node"}
    assert "gpu-0" not in held and "gpu-1" in held
    assert any("lack a level label" in line and "gpu-0" in line for line in lines)
