"""The comm stage's value (docs/ranks.md, section 6): tier steps, cells, and how it bounds the
ring edges leaving each tier after the rank assignment — exact for rings, within (pp + 1)× for
tp×pp×dp layouts with TP inside pods; the dp_span and pp_span stages against brute force."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from builders import example1_tree, gang, instance, nodes, on

from toposolve.core.assignment import Assignment, to_plan
from toposolve.core.parallelism import parse_parallelism
from toposolve.core.problem import compile_problem
from toposolve.policy.comm import NODE_LOCAL, layout_edges, measure
from toposolve.policy.comm_stage import (
    comm_value,
    component_size,
    dp_span_value,
    level_tiers,
    node_cells,
    pp_span_value,
    tier_steps,
)
from toposolve.policy.objective import evaluate
from toposolve.policy.profiles import CommWeights, ObjectiveSpec, ObjectiveStage, load_profile
from toposolve.policy.ranks import compare_ranks


@pytest.mark.parametrize("tiers,factor,steps", [
    ([1, 2, 3], 2.0, [1, 2]),  # multipliers 1, 2, 4
    ([1, 3, 4], 2.0, [3, 4]),  # a skipped tier counts twice: 1, 4, 8
    ([1, 2, 3], 1.5, [500, 750]),  # 1, 1.5, 2.25 in thousandths
    ([1, 2], 1.0, [0]),  # a flat network: no domain costs more than another
])
def test_tier_steps_are_the_multiplier_increments(tiers, factor, steps):
    assert tier_steps(tiers, CommWeights(tier_factor=factor)) == steps


def test_cells_are_the_highest_domain_at_or_below_each_tier():
    problem = compile_problem(instance(nodes(8), example1_tree(), []))
    topo = problem.topology
    tiers = level_tiers(topo)
    cells = node_cells(topo, tiers)
    name = {h: topo.names[h] for h in range(len(topo.names))}
    assert [name[c] for c in cells[:, 0].tolist()] == [f"s{k // 2}" for k in range(8)]
    assert [name[c] for c in cells[:, 1].tolist()] == ["s4"] * 4 + ["s5"] * 4
    assert set(cells[:, 2].tolist()) == {topo.index["s6"]}


def _placed(job_pods: int, layout: str | None, node_list: list[int], gpus: int = 8):
    """Job ``a`` (``gpus``-GPU pods, ``layout``) placed on ``node_list`` of example 1."""
    job = gang("a", job_pods, gpus=gpus)
    job.parallelism = layout
    inst = instance(nodes(8), example1_tree(), [job])
    problem = compile_problem(inst)
    assignment = Assignment()
    for n in node_list:
        assignment.add(0, n, 1)
    return problem, assignment


def _ranked_leaving(problem, assignment) -> float:
    """``Σ_l Δ_l · leaving`` of the job's ranked ring edges (per rank) after rank assignment."""
    plan = to_plan(problem, assignment, engine="hand", status="FEASIBLE")
    (job,) = compare_ranks(problem, plan)
    tiers = level_tiers(problem.topology)
    return sum(step * job.ranked.leaving[t]
               for t, step in zip(tiers, tier_steps(tiers), strict=False))


@pytest.mark.parametrize("axis", ["dp", "pp"])
def test_ring_and_chain_values_equal_ranked_leaving_exactly(axis):
    """tp=8,dp=n on 8-GPU pods is one DP ring per TP rank, tp=8,pp=n one chain: the stage
    equals the ring edges the depth-first rank order leaves each tier with (the ring theorem;
    a chain in DFS order crosses k − 1 times), for random placements."""
    rng = random.Random(3)
    for _ in range(30):
        count = rng.randint(2, 8)
        problem, assignment = _placed(count, f"tp=8,{axis}={count}", rng.sample(range(8), count))
        assert comm_value(problem, assignment) == _ranked_leaving(problem, assignment)


def test_layout_value_bounds_ranked_leaving_within_pp_plus_one():
    """tp=8,pp=2,dp=3: the stage is a lower bound of the ranked ring edges leaving each tier,
    and the ranked order is within (pp + 1)× of it (docs/ranks.md, section 6)."""
    rng = random.Random(5)
    seen_gap = False
    for _ in range(30):
        problem, assignment = _placed(6, "tp=8,pp=2,dp=3", rng.sample(range(8), 6))
        value, ranked = comm_value(problem, assignment), _ranked_leaving(problem, assignment)
        assert value <= ranked <= 3 * value
        seen_gap |= ranked > value
    assert seen_gap  # the bound is not exact for pipelines


def test_value_counts_only_layout_jobs_placed_by_the_plan():
    problem, assignment = _placed(4, None, [0, 2, 4, 6])  # no layout: not counted
    assert comm_value(problem, assignment) == 0
    problem, assignment = _placed(4, "tp=8,dp=4", [0, 1, 2, 3])  # leaves s0, s1 of s4
    assert comm_value(problem, assignment) == 8 * (1 * 2 + 2 * 0)
    assert comm_value(problem, Assignment()) == 0  # not placed by the plan


def test_running_pods_count_with_the_new_ones():
    job = gang("a", 4, running=on(0, 1))
    job.parallelism = "tp=8,dp=4"
    problem = compile_problem(instance(nodes(8), example1_tree(), [job]))
    inside, outside = Assignment(), Assignment()
    for n in (2, 3):
        inside.add(0, n, 1)
    for n in (4, 5):
        outside.add(0, n, 1)
    spec = ObjectiveSpec(stages=[ObjectiveStage(name="comm")])
    # s0 + s1 (both under s4): two leaves; s0 + s2: two leaves and two tier-2 domains
    assert evaluate(problem, inside, spec).stages == {"comm": 8 * 2}
    assert evaluate(problem, outside, spec).stages == {"comm": 8 * (2 + 2 * 2)}
    flat = CommWeights(tier_factor=1.0)
    assert evaluate(problem, outside, spec, flat).stages == {"comm": 0}


def test_the_comm_profile_puts_the_stage_after_placement():
    profile = load_profile("comm")
    assert [s.name for s in profile.objective.stages] == ["placed", "comm", "spread",
                                                          "fragmentation"]
    assert profile.comm == CommWeights()  # the documented defaults, written out


@pytest.mark.parametrize(("layout", "gpus", "axis"), [
    ("tp=8,pp=2,dp=3", 8, "dp"), ("tp=8,pp=3,dp=2", 8, "dp"), ("tp=8,dp=6", 8, "dp"),
    ("tp=4,pp=3,dp=4", 8, "dp"),  # two TP groups per pod: a DP group over several pods' halves
    ("tp=8,dp=3", 4, "dp"),  # TP groups split over two 4-GPU pods
    ("tp=8,pp=2,dp=3", 8, "pp"), ("tp=8,pp=3,dp=2", 8, "pp"), ("tp=8,pp=6", 8, "pp"),
    ("tp=8,pp=3", 4, "pp"),
])
def test_span_value_is_the_best_largest_group_span_of_any_rank_order(layout, gpus, axis):
    """Six pods on random nodes of example 1: the ``dp_span`` (``pp_span``) value equals, over all
    720 rank orders, the smallest largest DP (pipeline) span as the tier-multiplier steps below
    it — a lower bound for every order, reached by one (docs/ranks.md, sections 6b, 6c) — also
    with several TP groups per pod and with TP groups split over pods."""
    rng = random.Random(5)
    parsed = parse_parallelism(layout)
    edges = layout_edges(parsed, parsed.world // 6)
    value_of = dp_span_value if axis == "dp" else pp_span_value
    for _ in range(4):
        node_list = rng.sample(range(8), 6)
        problem, assignment = _placed(6, layout, node_list, gpus)
        tiers = level_tiers(problem.topology)
        steps = tier_steps(tiers)
        below = {t: sum(s for tier, s in zip(tiers, steps, strict=False) if tier < t)
                 for t in (NODE_LOCAL, *tiers)}
        at = np.array(node_list)
        spans = (measure(problem.topology, at[list(p)], edges)
                 for p in itertools.permutations(range(6)))
        best = min(m.largest_dp_span if axis == "dp" else m.largest_pp_span for m in spans)
        assert value_of(problem, assignment) == below[best]


@pytest.mark.parametrize(("layout", "per_pod", "axis", "size"), [
    ("tp=8,pp=4,dp=8", 8, "dp", 8), ("tp=8,pp=4,dp=8", 8, "pp", 4),
    ("tp=4,pp=2,dp=4", 8, "dp", 4),  # a pod holds both stages of one replica: every pod
    ("tp=4,dp=8", 8, "dp", 4),  # a pod holds two replicas: the DP group's 8 ranks in 4 pods
    ("tp=8,pp=4,dp=8", 4, "dp", 8),  # half a TP group per pod: one component per half
    ("tp=8,pp=4,dp=8", 4, "pp", 4), ("tp=8,dp=8", 8, "pp", None),
])
def test_components_of_dp_groups_and_pipelines(layout, per_pod, axis, size):
    assert component_size(layout, per_pod, axis) == size


def test_dp_span_counts_jobs_with_several_tp_groups_per_pod():
    """Pods 2 + 1 + 1 over three leaves of example 1: no level-1 cell split into whole DP groups
    of 2, spine s4 holds 3 (odd) → steps 1 + 2. With two TP groups per pod (tp=4,pp=2,dp=4) every
    DP group touches all 4 pods: aligned only where one cell holds the job."""
    problem, assignment = _placed(4, "tp=8,pp=2,dp=2", [0, 1, 2, 4])
    assert dp_span_value(problem, assignment) == 3
    problem, assignment = _placed(4, "tp=8,pp=2,dp=2", [0, 2, 4, 5])
    assert dp_span_value(problem, assignment) == 1  # leaves 1 + 1 + 2, spines 2 + 2
    problem, assignment = _placed(4, None, [0, 1, 2, 4])
    assert dp_span_value(problem, assignment) == 0
    problem, assignment = _placed(4, "tp=4,pp=2,dp=4", [0, 1, 2, 4])
    assert dp_span_value(problem, assignment) == 3
    problem, assignment = _placed(4, "tp=4,pp=2,dp=4", [0, 1, 2, 3])  # all in spine s4
    assert dp_span_value(problem, assignment) == 1


def test_dp_span_from_level_leaves_the_lower_levels_unpriced():
    """DP groups of 2 over leaves 2 + 1 + 1 (spines 3 + 1): from level 1 only the spine step."""
    problem, assignment = _placed(4, "tp=8,pp=2,dp=2", [0, 1, 2, 4])
    assert dp_span_value(problem, assignment, CommWeights(dp_span_from_level=1)) == 2
    assert pp_span_value(problem, assignment, CommWeights(dp_span_from_level=1)) == 3
