"""Volcano's network-topology-aware plugin score tables (``network_topology_aware_test.go``).

Node scores (``TestNetworkTopologyAwareNodeScore_Hard|Soft``, ``TestBatchNodeOrderFn``) and
HyperNode scores (``TestHyperNodeOrderFn``) from the heuristic's score functions on the case's
instance, times ``100 × weight`` as the plugin reports them, within the Go tests' ``eps = 0.1``.

As in the Go tests, the scored pod is the job's pending pod (each case has exactly one) and its
SubJob's running LCA is the PodGroup's ``volcano.sh/job-allocated-hypernode`` annotation
(``parseTask`` copies it onto the task). A plugin that adds no scores (Volcano returns an empty
map) is a zero for every node here.
"""

from __future__ import annotations

import numpy as np
import pytest
from fidelity.volcano.cases import case_params, instance_of

from toposolve.core.problem import compile_problem
from toposolve.engines.volcano import HeuristicEngine
from toposolve.engines.volcano.fill import anchor_lca_tiers
from toposolve.engines.volcano.scores import fading_node_scores, lca_node_scores, task_num_share
from toposolve.policy.profiles import PluginArgs, load_profile

EPS = 0.1  # the Go tests' tolerance


def engine_for(case) -> HeuristicEngine:
    profile = load_profile(None).model_copy(
        update={"plugin": PluginArgs.from_volcano(case["arguments"])}
    )
    return HeuristicEngine(compile_problem(instance_of(case)), profile)


def _pending_group(engine: HeuristicEngine) -> int:
    pending = [g for g, pods in enumerate(engine.problem.group_pending) for _ in pods]
    assert len(pending) == 1, "the Go test scores the job's one pending pod"
    return pending[0]


def node_scores(case) -> dict[str, float]:
    """BatchNodeOrderFn of the pending pod over the case's ``scoreNodes`` (else every node), as
    the plugin reports it: the task-count tie-break looks only at the nodes it is given."""
    engine = engine_for(case)
    problem, state, topo = engine.problem, engine.state, engine.problem.topology
    g = _pending_group(engine)
    s = int(problem.group_subjob[g])
    names = case.get("scoreNodes") or topo.node_names
    nodes = np.array([problem.node_index[n] for n in names])
    if problem.subjobs[s].limit is not None:  # the SubJob has a networkTopology
        anchor_name = case["podgroups"][0].get("allocatedHyperNodeAnnotation")
        if not anchor_name:
            scores = np.zeros(nodes.size)
        else:
            anchor = topo.index[anchor_name]
            groups = problem.subjobs[s].groups
            total = sum(
                len(problem.group_pending[x]) + sum(problem.group_running[x].values())
                for x in groups
            )
            tasks = state.tasks_in(groups)
            leaf = state.leaf
            per_leaf = np.array(
                [tasks[leaf == leaf[n]].sum() if leaf[n] >= 0 else 0 for n in nodes]
            )
            scores = lca_node_scores(
                anchor_lca_tiers(state, nodes, anchor) * np.where(leaf[nodes] >= 0, 1.0, np.nan),
                leaf[nodes] == anchor,
                topo.min_tier,
                topo.max_tier,
                task_num_share(per_leaf, total),
            )
    else:
        scores = fading_node_scores(
            problem,
            topo.node_at_tier,
            state.hn_used,
            state.hn_alloc,
            problem.group_request[g],
            engine.args,
            topo.max_tier,
        )[nodes]
    factor = 100 * engine.args.weight
    return {
        topo.node_names[n]: float(factor * score) for n, score in zip(nodes, scores, strict=True)
    }


def hypernode_scores(case, subjob_id: str) -> dict[str, float]:
    """HyperNodeOrderFn of one SubJob over every HyperNode (root included)."""
    engine = engine_for(case)
    topo = engine.problem.topology
    s = next(i for i, sj in enumerate(engine.problem.subjobs) if sj.id == subjob_id)
    candidates = np.arange(len(topo.names))
    scores = engine.hypernode_scores(s, candidates)
    return {topo.names[h]: float(100 * engine.args.weight * scores[h]) for h in candidates}


@pytest.mark.parametrize("case", case_params("nta_node_scores", pytest))
def test_node_scores_match_volcano_within_eps(case):
    got = node_scores(case)
    expected = case["expectedScores"]
    for node in got:
        assert got[node] == pytest.approx(expected.get(node, 0.0), abs=EPS), node


@pytest.mark.parametrize("case", case_params("nta_hypernode_order", pytest))
def test_hypernode_scores_match_volcano_within_eps(case):
    # parseSubJob picks the SubJob "ns1/pg1/task1-worker"
    got = hypernode_scores(case, "ns1/pg1/task1-worker")
    expected = case["expectedScores"]
    assert set(got) == set(expected)
    for name, score in expected.items():
        assert got[name] == pytest.approx(score, abs=EPS), name
