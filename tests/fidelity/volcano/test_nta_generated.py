"""Volcano's large-scale plugin tests on a generated cluster (``nta_generated.yaml``): the
HyperNode resource sums and the normal-pod (fading) node score of every node."""

from __future__ import annotations

import numpy as np
import pytest
from fidelity.volcano.cases import case_params

from toposolve.core.instance import HyperNode, Instance, Job, Member, Node, Task
from toposolve.core.problem import compile_problem
from toposolve.engines.volcano import HeuristicEngine
from toposolve.engines.volcano.scores import fading_node_scores
from toposolve.policy.profiles import PluginArgs, Profile

EPS = 0.1


def _quantities(resource: dict[str, int]) -> dict[str, str]:
    names = {"MilliCPU": "cpu", "Memory": "memory"}
    return {names.get(k, k): (f"{v}m" if k == "MilliCPU" else str(v)) for k, v in resource.items()}


def generated(case) -> Instance:
    n = case["nodeNumber"]
    counts = case["hyperNodeNumbers"]
    nodes = [Node(name=f"node-{i}", allocatable=_quantities(case["allocatable"])) for i in range(n)]
    hypernodes = []
    for tier, count in enumerate(counts, start=1):
        for k in range(count):
            if tier == 1:
                members = [
                    Member.exact(f"node-{i}")
                    for i in range(k, n, count)
                ]
            else:  # node i sits in index i % count, so a child index c sits in c % count
                members = [
                    Member.exact(f"hypernode-tier-{tier - 1}-index-{c}", "HyperNode")
                    for c in range(k, counts[tier - 2], count)
                ]
            hypernodes.append(
                HyperNode(name=f"hypernode-tier-{tier}-index-{k}", tier=tier, members=members)
            )
    load = Job(
        name="load",
        min_available=n,
        tasks=[
            Task(
                name="t",
                replicas=n,
                requests=_quantities(case["used"]),
                running={i: f"node-{i}" for i in range(n)},
            )
        ],
    )
    jobs = [load]
    if "request" in case:
        jobs.append(
            Job(
                name="probe",
                min_available=1,
                tasks=[Task(name="t", replicas=1, requests=_quantities(case["request"]))],
            )
        )
    return Instance(nodes=nodes, hypernodes=hypernodes, jobs=jobs)


@pytest.mark.parametrize("case", case_params("nta_generated", pytest))
def test_generated_cluster_sums_and_fading_scores_match_volcano(case):
    problem = compile_problem(generated(case))
    args = PluginArgs.from_volcano(case.get("arguments", {}))
    engine = HeuristicEngine(problem, Profile(plugin=args))
    topo, state = problem.topology, engine.state
    if case.get("expected") == "sums":
        per_node_alloc = problem.allocatable[0].astype(float)
        per_node_used = problem.used[0].astype(float)
        for h, name in enumerate(topo.names[:-1]):  # the virtual root is toposolve's own
            tier = int(topo.tier[h])
            share = case["nodeNumber"] // case["hyperNodeNumbers"][tier - 1]
            assert np.array_equal(state.hn_alloc[h], share * per_node_alloc), name
            assert np.array_equal(state.hn_used[h], share * per_node_used), name
        return
    g = len(problem.group_request) - 1  # the probe's pod
    scores = fading_node_scores(
        problem,
        topo.node_at_tier,
        state.hn_used,
        state.hn_alloc,
        problem.group_request[g],
        args,
        topo.max_tier,
    )
    assert np.all(np.abs(scores - case["expectedScore"]) <= EPS)
