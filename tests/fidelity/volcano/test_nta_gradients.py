"""Volcano's plugin tables on gradients and arguments (``network_topology_aware_test.go``).

* ``TestHyperNodeGradientPreFiltering``: whether the resource prefilter keeps ``hn-1-0`` in the
  gradients of a job (``PodGroup.minResources``) or SubJob (its pending requests), for
  allocation (free resources) and eviction (allocatable). The Go test overrides the cached idle
  of ``hn-1-0``; here pods of another job run on its nodes so that it has exactly that much free.
  The evict cap is raised above the HyperNode count: the Go test calls the uncapped function.
* ``TestReverseAndCapEvictionGradients`` and ``…NoSubJobPolicyRespectsHardTopology``: the order,
  cap and hard limit of eviction domains.
* ``TestNew``: plugin arguments parsed as the plugin's ``New`` does.
"""

from __future__ import annotations

import pytest
from fidelity.volcano.cases import case_params, instance_of, load_table

from toposolve.core.instance import (
    HyperNode,
    Instance,
    Job,
    Member,
    NetworkTopology,
    Node,
    Task,
)
from toposolve.core.problem import compile_problem
from toposolve.engines.volcano import HeuristicEngine
from toposolve.engines.volcano.evict.domains import candidate_domains, cap_widest_first
from toposolve.policy.profiles import PluginArgs, Profile

CLUSTER = load_table("nta_gradients")["cluster"]
RESOURCES = {"MilliCPU": "cpu", "Memory": "memory"}


def _quantities(resource: dict[str, int], share: int = 1) -> dict[str, str]:
    """A Volcano ``api.Resource`` (milli-CPU, bytes) as Kubernetes quantities, divided by
    ``share``."""
    out = {}
    for key, name in RESOURCES.items():
        amount = resource.get(key, 0)
        assert amount % share == 0
        out[name] = f"{amount // share}m" if name == "cpu" else str(amount // share)
    return out


def _members(kind: str, names) -> list[Member]:
    return [Member.exact(n, kind) for n in names]


def prefilter_instance(case) -> Instance:
    c = CLUSTER
    nodes = [
        Node(
            name=f"node-{i}",
            allocatable={"cpu": f"{c['nodeMilliCPU']}m", "memory": str(c["nodeMemory"])},
        )
        for i in range(c["nodes"])
    ]
    per = c["nodesPerTier1"]
    leaves = [
        HyperNode(
            name=f"hn-1-{k}",
            tier=1,
            members=_members("Node", (f"node-{k * per + j}" for j in range(per))),
        )
        for k in range(c["tier1"])
    ]
    top = HyperNode(
        name=c["searchRoot"], tier=2, members=_members("HyperNode", (h.name for h in leaves))
    )
    # the probe's free resources: what the Go test writes into its cache entry
    total = {"MilliCPU": c["nodeMilliCPU"] * per, "Memory": c["nodeMemory"] * per}
    used = {k: total[k] - case["idleResource"].get(k, 0) for k in RESOURCES}
    filler = Job(
        name="filler",
        min_available=per,
        tasks=[
            Task(
                name="t",
                replicas=per,
                requests=_quantities(used, per),
                running={j: f"node-{j}" for j in range(per)},
            )
        ],
    )
    need = _quantities(case["minResource"])
    probe = Job(
        name="probe",
        min_available=1,
        network_topology=NetworkTopology(
            mode="hard", highest_tier_allowed=case["highestAllowedTier"]
        ),
        min_resources={} if case["isSubJob"] else need,
        tasks=[Task(name="t", replicas=1, requests=need)],
    )
    return Instance(nodes=nodes, hypernodes=[*leaves, top], jobs=[filler, probe])


@pytest.mark.parametrize("case", case_params("nta_gradients", pytest))
def test_prefilter_keeps_or_drops_the_hypernode_as_volcano_does(case):
    instance = prefilter_instance(case)
    problem = compile_problem(instance)
    profile = Profile(plugin=PluginArgs(evict_max_hypernodes=len(instance.hypernodes) + 1))
    engine = HeuristicEngine(problem, profile)
    topo = problem.topology
    probe = next(j for j, cj in enumerate(problem.jobs) if cj.key.endswith("/probe"))
    if case["purpose"] == "Evict":
        found = candidate_domains(engine, probe)
    elif case["isSubJob"]:
        s = problem.jobs[probe].subjobs[0]
        found = [
            h for g in engine.subjob_gradients(s, topo.index[CLUSTER["searchRoot"]]) for h in g
        ]
    else:
        found = [h for g in engine.job_gradients(probe) for h in g]
    assert (topo.index[CLUSTER["probe"]] in found) is case["expectTier1Selected"]


@pytest.mark.parametrize("case", case_params("nta_evict_gradients", pytest))
def test_evict_gradients_match_volcano(case):
    if "gradients" in case:
        flat = cap_widest_first(case["gradients"], case["maxHyperNodesForEviction"])
        assert flat == [h for g in case["expected"] for h in g]
        return
    problem = compile_problem(instance_of(case))
    engine = HeuristicEngine(problem, Profile())
    assert candidate_domains(engine, 0) == case["expected"]


@pytest.mark.parametrize("case", case_params("nta_arguments", pytest))
def test_plugin_arguments_read_as_volcano_reads_them(case):
    warnings: list[str] = []
    args = PluginArgs.from_volcano(case["arguments"], warn=warnings.append)
    e = case["expected"]
    got = {
        "weight": args.weight,
        "binpackCPU": args.binpack_cpu,
        "binpackMemory": args.binpack_memory,
        "binpackResources": args.binpack_resources,
        "normalPodEnable": args.normal_pod_enable,
        "normalPodFading": args.normal_pod_fading,
    }
    assert got == e
    # beyond the Go test: toposolve names every value it drops or replaces (``warns``)
    assert len(warnings) == case["warns"], warnings
