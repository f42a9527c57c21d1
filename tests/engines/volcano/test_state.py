"""The greedy engine's mutable state (engines/volcano/state.py): place, evict, undo, replay,
fit and queue room. Example 1: eight 8-GPU nodes (64 cores each) in racks s0..s3."""

from __future__ import annotations

import numpy as np
import pytest
from builders import GPU, example1_tree, gang, in_queue, instance, nodes

from toposolve.core.instance import Queue
from toposolve.core.problem import compile_problem
from toposolve.engines.volcano import HeuristicEngine
from toposolve.policy.profiles import Profile


def state_of(jobs, queues=()):
    inst = instance(nodes(8), example1_tree(), jobs)
    inst.queues = list(queues)
    problem = compile_problem(inst)
    return problem, HeuristicEngine(problem, Profile()).state


def gpus_used(problem, state, hypernode: str) -> float:
    h = problem.topology.names.index(hypernode)
    return state.hn_used[h, problem.resource_index[GPU]] / 1000


def test_place_then_undo_restores_idle_room_hypernode_use_and_counts():
    problem, state = state_of([gang("a", 4, gpus=4)])
    idle = state.idle.copy()
    mark = state.mark()
    state.place(0, [0, 1], [2, 1])
    assert state.fit_counts(0)[:3].tolist() == [0, 1, 2]  # node0 full, node1 half
    assert gpus_used(problem, state, "s0") == 12 and gpus_used(problem, state, "s6") == 12
    assert state.group_count(0) == 3 and state.placed_pods(mark) == 3
    undone = state.undo_to(mark)
    assert np.array_equal(state.idle, idle) and gpus_used(problem, state, "s6") == 0
    assert state.group_count(0) == 0 and state.log == []
    state.replay(undone)
    assert state.group_count(0) == 3 and gpus_used(problem, state, "s0") == 12


def test_evict_gives_room_back_and_undo_puts_the_pods_back():
    problem, state = state_of([gang("r", 2, running={0: "node0", 1: "node2"})])
    assert gpus_used(problem, state, "s4") == 16
    mark = state.mark()
    state.evict(["default/r-worker-1"])
    assert state.evicted_pods(mark) == ["default/r-worker-1"]
    assert gpus_used(problem, state, "s1") == 0 and state.group_count(0) == 1
    assert state.placed_pods(mark) == 0  # evictions are not placements
    with pytest.raises(ValueError, match="not running"):
        state.evict(["default/r-worker-1"])  # already evicted
    state.undo_to(mark)
    assert gpus_used(problem, state, "s1") == 8 and state.evicted_pods() == []


def test_queue_room_counts_what_the_capability_still_admits():
    jobs = [in_queue(gang("a", 8, gpus=4), "q"), in_queue(gang("b", 1, running={0: "node7"}), "q")]
    problem, state = state_of(jobs, [Queue(name="q", capability={GPU: 20})])
    assert state.queue_room(0) == 3  # 20 - 8 running = 12 GPUs: three 4-GPU pods
    state.place(0, 0, 2)
    assert state.queue_room(0) == 1


def test_per_hypernode_sums_and_tasks_in():
    problem, state = state_of([gang("a", 3, running={0: "node0", 1: "node0", 2: "node5"}, gpus=1)])
    counts = state.tasks_in([0])
    assert counts.tolist() == [2, 0, 0, 0, 0, 1, 0, 0]
    per = dict(zip(problem.topology.names, state.per_hypernode(counts).tolist(), strict=True))
    assert (per["s0"], per["s2"], per["s4"], per["s5"], per["s6"]) == (2, 1, 2, 1, 3)
    s4 = np.array([problem.topology.names.index("s4")])
    assert state.per_hypernode(counts, s4).tolist() == [2]
    assert state.nodes_of([0]) == [0, 5]
