"""KAI-Scheduler's topology plugin tests (data in ``data/topology_plugin.yaml``, with the inventory
of
every KAI test asserting topology placement) and its README example, reproduced by the kai engine;
cases not ported are listed in the data with why."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from toposolve.core.problem import POD_COUNT_RESOURCE, Problem, compile_problem
from toposolve.engines.kai import run_kai
from toposolve.engines.kai.domains import (
    allocatable_pods,
    bin_pack_order,
    kai_id,
    lowest_common_domain,
    position_scores,
    relevant_tiers,
    reverse_level_order,
    subset_nodes,
)
from toposolve.engines.kai.engine import KaiEngine

from .kai_objects import case_documents, load_case, plugin_case

DATA = yaml.safe_load((Path(__file__).parent / "data" / "topology_plugin.yaml").read_text())


def _problem(tmp_path, levels: list[str], nodes: dict, job: dict) -> Problem:
    return compile_problem(load_case(tmp_path, case_documents(plugin_case(levels, nodes, job))))


def _domain(problem: Problem, h: int) -> str:
    return "root" if h == problem.topology.root else kai_id(problem, h)


def _pending(problem: Problem) -> list[int]:
    return [g for g in problem.jobs[0].groups for _ in problem.group_pending[g]]


def _tier(levels: list[str], level: str) -> int:
    return len(levels) - levels.index(level)


@pytest.mark.parametrize("case", DATA["node_in_topology"], ids=lambda c: c["name"])
def test_node_in_topology(case, tmp_path):
    problem = _problem(
        tmp_path, ["zone", "rack"], {"node-1": {"labels": case["labels"]}}, {"tasks": 1}
    )
    assert (problem.topology.node_home[0] != problem.topology.root) == case["part"]


@pytest.mark.parametrize("case", DATA["lowest_common_domain"], ids=lambda c: c["name"])
def test_lowest_common_domain(case, tmp_path):
    levels = ["zone", "rack"]
    nodes = {n: {"labels": labels} for n, labels in case["nodes"].items()}
    problem = _problem(tmp_path, levels, nodes, {"tasks": 1})
    valid = problem.topology.node_home != problem.topology.root
    preferred = _tier(levels, case["preferred"]) if "preferred" in case else None
    assert _domain(problem, lowest_common_domain(problem, valid, preferred)) == case["domain"]
    assert sorted(problem.topology.node_names[n] for n in np.flatnonzero(valid)) == case["valid"]


@pytest.mark.parametrize("case", DATA["reverse_level_order"], ids=lambda c: c["name"])
def test_reverse_level_order(case):
    assert reverse_level_order(case["root"], lambda d: case["children"].get(d, [])) == case["order"]


@pytest.mark.parametrize("case", DATA["level_domains"], ids=lambda c: c["name"])
def test_level_domains(case):
    """The preferred-level domains of the node scores: one level of the tree, in tree order."""
    order = reverse_level_order(case["root"], lambda d: case["children"].get(d, []))
    assert [d for d in order if case["levels"][d] == case["level"]] == case["domains"]


def test_topology_tree(tmp_path):
    tree = DATA["topology_tree"]
    nodes = {n: {"labels": labels} for n, labels in tree["nodes"].items()}
    problem = _problem(tmp_path, tree["levels"], nodes, {"tasks": 1})
    topo = problem.topology
    got = {
        kai_id(problem, h): len(topo.children[h]) for h in range(len(topo.names)) if h != topo.root
    }
    assert got == tree["children"]


@pytest.mark.parametrize("case", DATA["sort_tree"], ids=lambda c: c["name"])
def test_sort_tree(case):
    free = {d: np.array(v, dtype=float) for d, v in case["free"].items()}
    assert bin_pack_order(np.array(case["demand"], dtype=float), free) == case["order"]


def test_sort_tree_nested():
    case = DATA["sort_tree_nested"]
    demand = np.array(case["demand"], dtype=float)
    parents = {"region1": case["free"], **case["children"]}
    got = {
        p: bin_pack_order(demand, {d: np.array(v, dtype=float) for d, v in kids.items()})
        for p, kids in parents.items()
    }
    assert got == case["order"]


@pytest.mark.parametrize("case", DATA["node_scores"], ids=lambda c: c["name"])
def test_node_scores(case):
    got = {}
    for domain, score in zip(case["domains"], position_scores(len(case["domains"])), strict=True):
        for node in domain:
            got[node] = score
    assert got == case["scores"]


@pytest.mark.parametrize("case", DATA["relevant_levels"], ids=lambda c: c["name"])
def test_relevant_levels(case, tmp_path):
    levels = case["levels"]
    job = {"tasks": 1, **{k: case[k] for k in ("required", "preferred") if k in case}}
    problem = _problem(tmp_path, levels, {"n": {"labels": {lv: "x" for lv in levels}}}, job)
    low, high = relevant_tiers(problem.jobs[0].limit, problem.topology.max_tier)
    names = [levels[len(levels) - t] if t <= len(levels) else "root" for t in range(low, high + 1)]
    assert names == case["relevant"]


@pytest.mark.parametrize("case", DATA["tree_allocatable"], ids=lambda c: c["name"])
def test_tree_allocatable(case, tmp_path):
    problem = _problem(tmp_path, case["levels"], case["nodes"], case["job"])
    free = problem.allocatable - problem.used
    pods = problem.group_request[_pending(problem)]
    room = allocatable_pods(
        free, pods, problem.resource_index.get(POD_COUNT_RESOURCE), problem.topology.members
    )
    topo = problem.topology
    assert {
        kai_id(problem, h): int(room[h]) for h in range(len(topo.names)) if h != topo.root
    } == case["allocatable"]


def _candidates(problem: Problem):
    cj = problem.jobs[0]
    engine = KaiEngine(problem)
    within = engine.required_domains(cj.groups, cj.limit)
    everywhere = np.ones(problem.n_nodes, dtype=bool)
    return subset_nodes(
        problem,
        engine.cap.free,
        cj.limit,
        _pending(problem),
        everywhere,
        engine.pods_resource,
        within=within,
    )


@pytest.mark.parametrize("case", DATA["allocatable_domains"], ids=lambda c: c["name"])
def test_allocatable_domains(case, tmp_path):
    problem = _problem(tmp_path, case["levels"], case["nodes"], case["job"])
    got = _candidates(problem)
    assert sorted(_domain(problem, h) for h in got.domains) == case["domains"]
    assert (got.reason is None) == bool(case["domains"])


@pytest.mark.parametrize("case", DATA["subset_nodes"], ids=lambda c: c["name"])
def test_subset_nodes(case, tmp_path):
    problem = _problem(tmp_path, case["levels"], case["nodes"], case["job"])
    got = _candidates(problem)
    if case["first"] is None:
        assert got.node_sets == [] and got.reason is not None
        return
    assert (
        sorted(problem.topology.node_names[n] for n in np.flatnonzero(got.node_sets[0]))
        == case["first"]
    )


def test_readme_example(tmp_path):
    ex = DATA["readme_example"]
    nodes = {}
    for zone, racks in ex["racks"].items():
        for rack, gpus in racks.items():
            for k in range(gpus):
                nodes[f"{rack}-{k}"] = {"gpus": 1, "cpu": 8, "labels": {"zone": zone, "rack": rack}}
    job = {"gpus": 1, "tasks": ex["pods"], "required": ex["required"], "preferred": ex["preferred"]}
    problem = _problem(tmp_path, ["zone", "rack"], nodes, job)
    per_rack: dict[str, int] = {}
    for per_node in run_kai(problem).counts.values():
        for n, c in per_node.items():
            rack = problem.topology.node_names[n].rsplit("-", 1)[0]
            per_rack[rack] = per_rack.get(rack, 0) + c
    assert per_rack == ex["pods_per_rack"]
    assert all(r.startswith(ex["zone"].replace("zone-", "rack-")) for r in per_rack)
