"""KAI's allocate tests with two Topologies over the same nodes (``data/multi_topology.yaml``):
the Topologies cross (a rack spans two zones); the one named second is a constraint tree of its
own, the kai engine measures each SubGroup in its own Topology's tree and reproduces KAI's
outcome, every plan checked (``toposolve.solve`` raises on a violation)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import toposolve

from .kai_objects import case_documents, load_case

DATA = yaml.safe_load((Path(__file__).parent / "data" / "multi_topology.yaml").read_text())


def _subgroup_nodes(case: dict, plan) -> dict[str, list[str]]:
    """SubGroup → the nodes its pods are bound to (one entry per pod)."""
    bound = {b.pod.split("/", 1)[1]: b.node for b in plan.bindings}
    out: dict[str, list[str]] = {}
    for job in case["jobs"]:
        for i, task in enumerate(job["tasks"]):
            name = f"{job['name']}-{i}"
            if "subgroup" in task and name in bound:
                out.setdefault(task["subgroup"], []).append(bound[name])
    return out


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: c["name"])
def test_kai_places_crossing_topologies_as_kai(tmp_path, case):
    inst = load_case(tmp_path, case_documents(case))
    assert inst.constraint_trees, "the crossing Topology is a tree of its own"
    plan = toposolve.solve(inst, "kai")
    labels = {name: spec["labels"] for name, spec in case["nodes"].items()}
    placed = _subgroup_nodes(case, plan)
    for subgroup, want in case["expect"].items():
        nodes = placed.get(subgroup, [])
        assert len(nodes) == want["pods"], subgroup
        for key, value in want.get("in", {}).items():
            assert {labels[n][key] for n in nodes} == {value}, (subgroup, key)
        for key in want.get("same", []):
            assert len({labels[n][key] for n in nodes}) == 1, (subgroup, key)
        if "nodes" in want:
            assert set(nodes) == set(want["nodes"]), subgroup
    apart = case.get("apart")
    if apart:
        values = [labels[placed[s][0]][apart["label"]] for s in apart["subgroups"]]
        assert len(set(values)) == len(values) and set(values) == set(apart["values"])


@pytest.mark.parametrize("engine", ["volcano", "kueue"])
@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: c["name"])
def test_other_engines_leave_crossing_jobs_pending_in_one_line(tmp_path, case, engine):
    inst = load_case(tmp_path, case_documents(case))
    plan = toposolve.solve(inst, engine, time_limit=5)
    pending = [j for j in plan.jobs if not j.placed]
    assert not plan.bindings and len(pending) == 1
    reason = pending[0].reason
    assert "\n" not in reason
    if engine == "volcano":
        assert "crosses the cluster's main tree" in reason
        assert "the volcano engine does not mirror crossing Topologies" in reason
    else:  # kueue places a workload in one flavor's Topology; these jobs name two
        assert reason.startswith("its constraints are measured in several Topologies")


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: c["name"])
def test_cpsat_places_every_pod_each_subgroup_in_one_domain_of_its_own_topology(tmp_path, case):
    inst = load_case(tmp_path, case_documents(case))
    plan = toposolve.solve(inst, "cpsat", time_limit=5, workers=1)  # checked inside solve()
    labels = {name: spec["labels"] for name, spec in case["nodes"].items()}
    placed = _subgroup_nodes(case, plan)
    for subgroup, want in case["expect"].items():
        nodes = placed.get(subgroup, [])
        assert len(nodes) == want["pods"], subgroup
        for key in [*want.get("in", {}), *want.get("same", [])]:
            assert len({labels[n][key] for n in nodes}) == 1, (subgroup, key)
