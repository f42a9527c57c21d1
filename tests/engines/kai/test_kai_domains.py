"""Direct unit tests of ``toposolve.engines.kai.domains`` (KAI's topology plugin re-expressed)."""

from __future__ import annotations

import numpy as np
from fidelity.kai.kai_objects import case_documents, load_case, plugin_case

from toposolve.core.problem import Limit, compile_problem
from toposolve.engines.kai.domains import (
    ONE_POD,
    node_accommodation,
    preferred_tier,
    relevant_tiers,
    representative_accounting,
    subset_nodes,
)

LEVELS = ["zone", "rack"]


def _problem(tmp_path, nodes: dict, job: dict):
    return compile_problem(load_case(tmp_path, case_documents(plugin_case(LEVELS, nodes, job))))


def _node(zone: str, rack: str, gpus: int = 4) -> dict:
    return {"gpus": gpus, "labels": {"zone": zone, "rack": rack}}


def test_representative_accounting_needs_only_gpus_and_extended_resources_all_or_none(tmp_path):
    problem = _problem(tmp_path, {"n": _node("z", "r")}, {"tasks": 1})
    gpu = problem.resource_index["nvidia.com/gpu"]
    cpu = problem.resource_index["cpu"]
    pods = np.zeros((2, len(problem.resources)), dtype=np.int64)
    pods[:, gpu] = [
        1000,
        2000,
    ]  # both ask GPUs (different amounts), CPUs differ: still representative
    pods[:, cpu] = [1000, 4000]
    assert representative_accounting(problem, pods)
    pods[1, gpu] = 0  # one asks GPUs, the other not: KAI falls back to the resource ratio
    assert not representative_accounting(problem, pods)


def test_node_accommodation_counts_pod_slots_and_a_request_of_nothing_fits_everywhere():
    free = np.array([[8000, 2000], [8000, 0]])  # (gpu, pods) per node
    one_gpu = np.array([1000, ONE_POD])
    assert node_accommodation(free, one_gpu, tasks=5, pods_resource=1).tolist() == [2, 0]
    nothing = np.array([0, ONE_POD])
    assert node_accommodation(free, nothing, tasks=5, pods_resource=1).tolist() == [5, 5]


def test_relevant_tiers_from_preferred_up_to_required_else_root():
    assert relevant_tiers(Limit(hard=True, tier=2, preferred=1), max_tier=3) == (1, 2)
    assert relevant_tiers(Limit(hard=True, tier=2), max_tier=3) == (2, 2)
    assert relevant_tiers(Limit(hard=False, tier=1, preferred=1), max_tier=3) == (1, 3)
    assert preferred_tier(Limit(hard=False, tier=1)) == 1
    assert preferred_tier(Limit(hard=True, tier=2)) is None


def test_without_constraint_the_node_set_itself_is_the_only_candidate(tmp_path):
    problem = _problem(
        tmp_path, {"a": _node("z1", "r1"), "b": _node("z2", "r2")}, {"gpus": 1, "tasks": 1}
    )
    nodes = np.array([True, False])
    got = subset_nodes(problem, problem.allocatable - problem.used, None, [0], nodes, None)
    assert [s.tolist() for s in got.node_sets] == [[True, False]]


def test_a_domain_above_the_lowest_common_domain_is_never_a_candidate(tmp_path):
    """KAI measures only the lowest common domain's subtree: a node set inside one rack cannot use
    a required zone above it (every relevant level is above the lowest common domain)."""
    nodes = {"a": _node("z1", "r1"), "b": _node("z1", "r1"), "c": _node("z1", "r2")}
    problem = _problem(tmp_path, nodes, {"gpus": 1, "tasks": 2, "required": "zone"})
    free = problem.allocatable - problem.used
    pods = [0, 0]
    in_rack = np.array([True, True, False])
    got = subset_nodes(problem, free, problem.jobs[0].limit, pods, in_rack, None)
    assert got.node_sets == [] and got.reason is not None
    everywhere = np.ones(3, dtype=bool)
    got = subset_nodes(problem, free, problem.jobs[0].limit, pods, everywhere, None)
    assert [problem.topology.names[h] for h in got.domains] == ["z1"]


def test_within_keeps_only_domains_inside_it(tmp_path):
    nodes = {"a": _node("z1", "r1"), "b": _node("z2", "r2")}
    problem = _problem(tmp_path, nodes, {"gpus": 1, "tasks": 2, "required": "zone"})
    free = problem.allocatable - problem.used
    everywhere = np.ones(2, dtype=bool)
    got = subset_nodes(
        problem,
        free,
        problem.jobs[0].limit,
        [0, 0],
        everywhere,
        None,
        within=np.array([False, True]),
    )
    assert [problem.topology.names[h] for h in got.domains] == ["z2"]
