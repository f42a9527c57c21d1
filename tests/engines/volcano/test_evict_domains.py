"""Candidate domains (widest first, capped, tail of a partial tier) and queue quotas.

Seed 000 Example-1 tree: s0..s3 tier 1 (two nodes of 8 GPUs each), s4 = {s0, s1}, s5 = {s2, s3}
tier 2, s6 tier 3 over both.
"""

from __future__ import annotations

import numpy as np
import pytest
from builders import GPU, example1_tree, gang, hard, in_queue, nodes

from toposolve.core.instance import Instance, Queue
from toposolve.core.problem import compile_problem
from toposolve.engines.volcano import HeuristicEngine
from toposolve.engines.volcano.evict.domains import candidate_domains, cap_widest_first
from toposolve.policy.profiles import Profile
from toposolve.policy.rules import QueueQuotas


def engine_for(jobs, profile=None, queues=()):
    problem = compile_problem(
        Instance(nodes=nodes(8), hypernodes=example1_tree(), jobs=jobs, queues=list(queues))
    )
    return HeuristicEngine(problem, profile or Profile())


def domain_names(engine, j=0):
    return [engine.problem.topology.names[h] for h in candidate_domains(engine, j)]


def test_widest_tier_first_then_lower_tiers():
    assert domain_names(engine_for([gang("p", 2, topology=hard(2))])) == [
        "s4",
        "s5",
        "s0",
        "s1",
        "s2",
        "s3",
    ]


def test_cap_keeps_the_tail_of_a_partial_tier():
    profile = Profile.model_validate({"plugin": {"hypernode.gradient.evict.max-hypernodes": 3}})
    assert domain_names(engine_for([gang("p", 2, topology=hard(2))], profile)) == ["s4", "s5", "s3"]
    assert cap_widest_first([[1, 2, 3], [4, 5]], 4) == [4, 5, 2, 3]


def test_eligibility_is_allocatable_not_idle():
    """3 pods × 8 GPUs: tier-1 HyperNodes (16 GPUs) can never hold the gang, tier 2 can even
    though every node is busy."""
    busy = gang("busy", 8, running={i: f"node{i}" for i in range(8)})
    assert domain_names(engine_for([busy, gang("p", 3, topology=hard(2))]), 1) == ["s4", "s5"]
    assert domain_names(engine_for([busy, gang("p", 3, topology=hard(1))]), 1) == []


def test_job_without_topology_has_the_root_only():
    assert domain_names(engine_for([gang("p", 2)])) == ["<cluster-top-hypernode>"]


def test_partly_running_job_searches_under_its_allocated_hypernode():
    """2 of 4 pods run in s2: with tier limit 2 the domains stay under s5."""
    job = gang("p", 4, topology=hard(2), running={0: "node4", 1: "node5"})
    assert domain_names(engine_for([job])) == ["s5", "s2", "s3"]


def gpus(engine, queue_vector):
    return queue_vector[engine.problem.resource_index[GPU]] / 1000


def test_deserved_share_splits_the_cluster_by_weight():
    """64 GPUs; queue a runs 48 and wants 16 more (request 64), queue b wants 64. Weights 3:1
    give a 48 and b 16 in the first round; nothing is left to share after it."""
    a = in_queue(gang("a", 8, running={i: f"node{i}" for i in range(6)}), "a")
    b = in_queue(gang("b", 8), "b")
    engine = engine_for([a, b], queues=[Queue(name="a", weight=3), Queue(name="b", weight=1)])
    quotas = QueueQuotas(engine.problem, engine.state.queue_used)
    assert gpus(engine, quotas.deserved["a"]) == pytest.approx(48)
    assert gpus(engine, quotas.deserved["b"]) == pytest.approx(16)
    assert quotas.overused("a") and not quotas.exceeds("a")  # exactly at its share
    assert not quotas.overused("b")
    demand = engine.problem.group_request[engine.problem.jobs[1].groups[0]].astype(float)
    assert quotas.preemptive("b", 2 * demand) and not quotas.preemptive("b", 3 * demand)


def test_a_capped_queue_leaves_its_share_to_the_others():
    """Equal weights, a wants only 16: round 1 gives a 16 (its request) and b 32; round 2 gives
    b the 16 that a left."""
    a = in_queue(gang("a", 2), "a")
    b = in_queue(gang("b", 8, running={i: f"node{i}" for i in range(6)}), "b")
    engine = engine_for([a, b], queues=[Queue(name="a"), Queue(name="b")])
    quotas = QueueQuotas(engine.problem, engine.state.queue_used)
    assert gpus(engine, quotas.deserved["a"]) == pytest.approx(16)
    assert gpus(engine, quotas.deserved["b"]) == pytest.approx(48)


def test_explicit_deserved_wins_and_only_listed_resources_count():
    a = in_queue(gang("a", 4, running={i: f"node{i}" for i in range(4)}), "a")
    engine = engine_for([a], queues=[Queue(name="a", deserved={GPU: 16})])
    quotas = QueueQuotas(engine.problem, engine.state.queue_used)
    assert quotas.exceeds("a") and quotas.share("a") == pytest.approx(2.0)
    # proportion's Reclaimable cut-off: 32 → 24 → 16, then a is back at its share
    request = engine.problem.group_request[0].astype(float)
    ordered = [(f"p{i}", "a", request) for i in range(4)]
    assert quotas.cut_off(ordered) == {"p0", "p1"}
    assert not np.isinf(quotas.share("a"))


def test_a_view_keeps_the_shares_and_judges_another_allocation():
    """``viewing`` judges the same deserved shares against another mapping (the victim side of
    reclaim: what a queue held before the plan); the original is unchanged."""
    a = in_queue(gang("a", 4, running={i: f"node{i}" for i in range(2)}), "a")
    engine = engine_for([a], queues=[Queue(name="a", deserved={GPU: 16})])
    live = {"a": engine.state.queue_used["a"] * 2}  # as if the plan bound two more pods
    quotas = QueueQuotas(engine.problem, live)
    held = quotas.viewing(engine.state.queue_held)
    assert quotas.exceeds("a") and not held.exceeds("a")  # 32 live, 16 held: at its share
    assert held.deserved is quotas.deserved and quotas.queue_used is live
