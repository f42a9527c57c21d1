"""ClusterState.evict: capacity, HyperNode usage, queue usage and gang counts go down; undo and
replay restore or re-apply them with the pods' names."""

from __future__ import annotations

import numpy as np
import pytest
from builders import GPU, example1_tree, gang, nodes

from toposolve.core.instance import Instance
from toposolve.core.problem import compile_problem
from toposolve.engines.volcano import HeuristicEngine
from toposolve.policy.profiles import Profile


def test_evict_frees_capacity_and_undo_restores_it():
    job = gang("v", 3, running={0: "node0", 1: "node0", 2: "node2"}, gpus=4)
    problem = compile_problem(Instance(nodes=nodes(8), hypernodes=example1_tree(), jobs=[job]))
    engine = HeuristicEngine(problem, Profile())
    state = engine.state
    gpu = problem.resource_index[GPU]
    s0, s4 = problem.topology.index["s0"], problem.topology.index["s4"]
    before = (state.idle.copy(), state.hn_used.copy(), state.queue_used["default"].copy())
    assert state.idle[0, gpu] == 0 and state.hn_used[s4, gpu] == 12000

    mark = state.mark()
    state.evict(["default/v-worker-1", "default/v-worker-2"])
    assert state.idle[0, gpu] == 4000 and state.idle[2, gpu] == 8000
    assert state.hn_used[s0, gpu] == 4000 and state.hn_used[s4, gpu] == 4000
    assert state.queue_used["default"][gpu] == 4000
    assert engine.gang.job_count(0) == 1
    assert state.evicted_pods() == ["default/v-worker-1", "default/v-worker-2"]
    assert state.placed_pods(mark) == 0  # evictions are not placements
    with pytest.raises(ValueError, match="not running"):
        state.evict(["default/v-worker-1"])

    undone = state.undo_to(mark)
    assert np.array_equal(state.idle, before[0]) and np.array_equal(state.hn_used, before[1])
    assert np.array_equal(state.queue_used["default"], before[2])
    assert engine.gang.job_count(0) == 3 and state.evicted_pods() == []

    state.replay(undone)
    assert state.evicted_pods() == ["default/v-worker-1", "default/v-worker-2"]
    assert engine.gang.job_count(0) == 1


def test_queue_held_counts_evictions_but_not_placements():
    """``queue_held`` (what reclaim judges a victim queue by) starts at the running pods, goes
    down with evictions and back up when they are undone; placements leave it alone, while
    ``queue_used`` follows both."""
    jobs = [gang("v", 2, running={0: "node0", 1: "node1"}), gang("new", 1)]
    problem = compile_problem(Instance(nodes=nodes(8), hypernodes=example1_tree(), jobs=jobs))
    state = HeuristicEngine(problem, Profile()).state
    gpu = problem.resource_index[GPU]
    new_group = problem.jobs[1].groups[0]
    assert state.queue_held["default"][gpu] == 16000

    mark = state.mark()
    state.place(new_group, 4, 1)
    state.evict(["default/v-worker-0"])
    assert state.queue_used["default"][gpu] == 16000  # +8 placed, -8 evicted
    assert state.queue_held["default"][gpu] == 8000
    undone = state.undo_to(mark)
    assert state.queue_held["default"][gpu] == 16000 and state.queue_used["default"][gpu] == 16000
    state.replay(undone)
    assert state.queue_held["default"][gpu] == 8000
