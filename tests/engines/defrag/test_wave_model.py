"""CP-SAT's wave model (``--max-waves N``) against brute force on tiny instances.

Racks r0 = {node0, node1} and r1 = {node2, node3} of 4-GPU nodes, two to four running pods of
2 or 4 GPUs in up to three jobs, two PodDisruptionBudgets (teams x and y) that let one pod go
at a time, and a pending target of one or two pods hard-limited to one rack. The brute force
enumerates every final node of every pod, then every wave (1..N) of every move, and asks the
independent checker which plans are valid; defrag must admit what the best of them admits, at
its move cost, and say it is proven minimal."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.builders import GPU, hard, inner, leaf, nodes
from toposolve.check.checker import check_plan
from toposolve.core.errors import InputError
from toposolve.core.instance import (
    Instance,
    Job,
    LabelSelector,
    Node,
    PodConstraints,
    PodDisruptionBudget,
    Task,
)
from toposolve.core.plan import Binding, Move, Plan
from toposolve.core.problem import compile_problem
from toposolve.defrag import defrag
from toposolve.engines.defrag.common import build_input
from toposolve.engines.defrag.waves import assign_waves

TARGET = "default/target"
NODES = [f"node{i}" for i in range(4)]


def _budget(team: str, **spec) -> PodDisruptionBudget:
    return PodDisruptionBudget(name=team, selector=LabelSelector(match_labels={"team": team}),
                               **spec)


def tiny(seed: int) -> Instance:
    """A random tiny instance (see the module docstring)."""
    rng = random.Random(seed)
    room = dict.fromkeys(NODES, 4)
    jobs, placed = [], 0
    for k in range(rng.randint(2, 3)):
        size, running = rng.choice([2, 2, 4]), {}
        for i in range(rng.randint(1, 2)):
            fits = [n for n in NODES if room[n] >= size]
            if not fits or placed == 4:
                break
            node = rng.choice(fits)
            room[node] -= size
            running[i] = node
            placed += 1
        if running:
            jobs.append(Job(name=f"j{k}", min_available=len(running), tasks=[Task(
                name="w", replicas=len(running), requests={GPU: size}, running=running,
                labels={"team": rng.choice("xy")})]))
    pods, size = rng.choice([(2, 4), (2, 4), (1, 4), (2, 2)])
    jobs.append(Job(name="target", min_available=pods, network_topology=hard(1),
                    tasks=[Task(name="w", replicas=pods, requests={GPU: size})]))
    return Instance(nodes=nodes(4, gpus=4),
                    hypernodes=[leaf("r0", NODES[:2]), leaf("r1", NODES[2:]),
                                inner("top", ["r0", "r1"], 2)],
                    jobs=jobs, disruption_budgets=[_budget("x", max_unavailable=1),
                                                   _budget("y", min_available=1)])


def knotted(seed: int) -> Instance:
    """A random tiny instance of full-node pods that may go to few nodes: racks r0..r2 of two
    8-GPU nodes, four or five running pods in jobs of one or two (each job allowed on its
    nodes and two others), budgets x and y as in :func:`tiny`, and a target of two pods that
    only rack r0 may hold."""
    rng = random.Random(seed)
    names = [f"node{i}" for i in range(6)]
    held = rng.sample(names, rng.randint(4, 5))
    jobs, labels = [], {n: ({"t": "ok"} if n in ("node0", "node1") else {}) for n in names}
    while held:
        size = rng.randint(1, 2)
        pods, held = held[:size], held[size:]
        name = f"j{len(jobs)}"
        for n in pods + rng.sample([n for n in names if n not in pods], 2):
            labels[n][name] = "ok"
        jobs.append(Job(name=name, min_available=len(pods), tasks=[Task(
            name="w", replicas=len(pods), requests={GPU: 8}, running=dict(enumerate(pods)),
            labels={"team": rng.choice("xy")},
            constraints=PodConstraints(node_selector={name: "ok"}))]))
    jobs.append(Job(name="target", min_available=2, network_topology=hard(1), tasks=[Task(
        name="w", replicas=2, requests={GPU: 8},
        constraints=PodConstraints(node_selector={"t": "ok"}))]))
    return Instance(nodes=[Node(name=n, allocatable={GPU: 8}, labels=labels[n]) for n in names],
                    hypernodes=[*(leaf(f"r{k}", names[2 * k:2 * k + 2]) for k in range(3)),
                                inner("top", ["r0", "r1", "r2"], 2)],
                    jobs=jobs, disruption_budgets=[_budget("x", max_unavailable=1),
                                                   _budget("y", max_unavailable=1)])


def _pods(inst: Instance) -> tuple[list[tuple], list[tuple]]:
    """Running pods (name, job, node, GPUs, nodes it may use) and the target's pods (name, GPUs,
    nodes it may use)."""
    running, pending = [], []
    for job in inst.jobs:
        for task in job.tasks:
            may = [n.name for n in inst.nodes if all(
                n.labels.get(k) == v for k, v in task.constraints.node_selector.items())]
            for i in range(task.replicas):
                name = f"default/{task.pod_name(job.name, i)}"
                if i in task.running:
                    running.append((name, job.name, task.running[i], task.requests[GPU], may))
                else:
                    pending.append((name, task.requests[GPU], may))
    return running, pending


def _finals(inst: Instance, admit: bool) -> list[tuple[int, dict, dict]]:
    """Every final placement within the nodes' GPUs and selectors (target in one rack when
    admitted), as (move cost, pod -> node of the running pods, pod -> node of the target's),
    cheapest first."""
    running, pending = _pods(inst)
    pending = pending if admit else []
    have = {n.name: n.allocatable[GPU] for n in inst.nodes}
    rack = {m.selector.exact_match: h.name for h in inst.hypernodes if h.tier == 1
            for m in h.members}
    out = []
    for ends in itertools.product(*(r[4] for r in running)):
        for binds in itertools.product(*(p[2] for p in pending)):
            used = dict.fromkeys(have, 0)
            for (_, _, _, gpus, _), node in zip(running, ends, strict=True):
                used[node] += gpus
            for (_, gpus, _), node in zip(pending, binds, strict=True):
                used[node] += gpus
            if any(used[n] > have[n] for n in have) or len({rack[n] for n in binds}) > 1:
                continue
            moved = {r[1] for r, node in zip(running, ends, strict=True) if node != r[2]}
            cost = sum(sum(1 for r in running if r[1] == job) for job in moved)
            out.append((cost, {r[0]: n for r, n in zip(running, ends, strict=True)},
                        {p[0]: n for p, n in zip(pending, binds, strict=True)}))
    return sorted(out, key=lambda f: f[0])


def _valid_in_waves(inst: Instance, final: dict, binds: dict, waves: int) -> bool:
    running = {r[0]: r[2] for r in _pods(inst)[0]}
    moves = [(pod, running[pod], node) for pod, node in final.items() if node != running[pod]]
    bindings = [Binding(pod, node) for pod, node in binds.items()]
    for assign in itertools.product(range(1, waves + 1), repeat=len(moves)):
        plan = Plan(engine="brute", status="FEASIBLE", bindings=bindings,
                    moves=[Move(p, a, b, w) for (p, a, b), w in zip(moves, assign, strict=True)])
        if not check_plan(inst, plan, eviction_mode="none"):
            return True
    return False


def brute_force(inst: Instance, waves: int) -> tuple[bool, int]:
    """(target admitted, least move cost) over every plan in at most ``waves`` waves."""
    for admit in (True, False):
        for cost, final, binds in _finals(inst, admit):
            if _valid_in_waves(inst, final, binds, waves):
                return admit, cost
    raise AssertionError("staying put is always valid")


@pytest.mark.parametrize("family", [tiny, knotted])
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("waves", [2, 3])
def test_the_wave_model_finds_the_brute_force_minimum(family, seed, waves):
    inst = family(seed)
    plan = defrag(inst, [TARGET], max_waves=waves, time_limit=5)
    d = plan.stats["defrag"]
    assert (bool(d["admitted"]), d["move_cost"]) == brute_force(inst, waves)
    assert d["proven_minimal"] and "waves_note" not in d
    assert max((m.wave for m in plan.moves), default=0) <= waves
    assert check_plan(inst, plan, eviction_mode="none") == []


def chain() -> Instance:
    """Rack r0 = {node0, node1} must empty for the target: `a` (two pods, budget x: one at a
    time) leaves node0 and node2, `b` may only go from node3 to node2 and `c` only from node1
    to node3 (budget y covers b and c: one at a time); node4 and node5 are free. In two waves
    only {a's node2 pod, b}, then {a's node0 pod, c} works; filled in plan order (a, b, c) the
    sequencer takes a's node0 pod first and needs a third wave."""
    def job(name: str, team: str, running: dict[int, str]) -> Job:
        return Job(name=name, min_available=len(running), tasks=[Task(
            name="w", replicas=len(running), requests={GPU: 8}, running=running,
            labels={"team": team}, constraints=PodConstraints(node_selector={name: "ok"}))])

    may = {0: "a t", 1: "c t", 2: "a b", 3: "b c", 4: "a", 5: "a"}
    cluster = [Node(name=f"node{i}", allocatable={GPU: 8},
                    labels={who: "ok" for who in may[i].split()}) for i in range(6)]
    target = Job(name="target", min_available=2, network_topology=hard(1), tasks=[Task(
        name="w", replicas=2, requests={GPU: 8}, constraints=PodConstraints(
            node_selector={"t": "ok"}))])
    return Instance(nodes=cluster, hypernodes=[leaf("r0", ["node0", "node1"]),
                                               leaf("r1", ["node2", "node3"]),
                                               leaf("r2", ["node4", "node5"]),
                                               inner("top", ["r0", "r1", "r2"], 2)],
                    jobs=[job("a", "x", {0: "node0", 1: "node2"}), job("b", "y", {0: "node3"}),
                          job("c", "y", {0: "node1"}), target],
                    disruption_budgets=[_budget("x", max_unavailable=1),
                                        _budget("y", max_unavailable=1)])


def test_the_model_sequences_what_the_greedy_sequencer_cannot():
    inst = chain()
    plan = defrag(inst, [TARGET], max_waves=2)
    d = plan.stats["defrag"]
    assert d["admitted"] == [TARGET] and d["move_cost"] == 4 and d["proven_minimal"]
    assert d["waves"] == 2 and "waves_note" not in d
    assert {(m.pod, m.wave) for m in plan.moves} == {
        ("default/a-w-1", 1), ("default/b-w-0", 1), ("default/a-w-0", 2), ("default/c-w-0", 2)}
    assert check_plan(inst, plan, eviction_mode="none") == []
    p = compile_problem(inst)
    rows = [(m.pod, p.node_index[m.source], p.node_index[m.to]) for m in plan.moves]
    rows.sort(key=lambda row: row[0])  # plan order: a, b, c
    assert assign_waves(build_input(p, [p.jobs[-1].index], waves=2), rows, 2) is None
    assert assign_waves(build_input(p, [p.jobs[-1].index], waves=3), rows, 3) is not None


@pytest.mark.parametrize("seed", [1, 6, 10, 19, 20, 29])
def test_the_models_own_waves_are_valid(seed, monkeypatch):
    # the full model decides these (the master's re-placement breaks a budget); without the
    # greedy sequencer the plan's waves are the model's own
    import sys

    inst = knotted(seed)
    monkeypatch.setattr(sys.modules["toposolve.defrag"], "assign_waves", lambda *_: None)
    plan = defrag(inst, [TARGET], max_waves=2, time_limit=5)
    d = plan.stats["defrag"]
    assert plan.stats["path"] == "full model" and "waves_note" not in d
    assert (bool(d["admitted"]), d["move_cost"]) == brute_force(inst, 2)
    assert {m.wave for m in plan.moves} <= {1, 2} and plan.moves
    assert check_plan(inst, plan, eviction_mode="none") == []


@pytest.mark.parametrize("seed", [0, 3])
def test_full_model_modes_decide_in_the_full_model_with_and_without_waves(seed):
    """``full_model`` (what bench_defrag_wave_model.py compares): "waves" decides in the full
    model with its waves as variables and reaches the brute-force minimum; "one-wave" decides in
    the full model of one wave and sequences it after; each plan passes the checker."""
    inst = tiny(seed)
    waved = defrag(inst, [TARGET], max_waves=2, time_limit=5, full_model="waves")
    d = waved.stats["defrag"]
    assert waved.stats["path"] == "full model"
    assert (bool(d["admitted"]), d["move_cost"]) == brute_force(inst, 2)
    flat = defrag(inst, [TARGET], max_waves=2, time_limit=5, full_model="one-wave")
    assert flat.stats["path"] == "full model, waves sequenced after it"
    for plan in (waved, flat):
        assert check_plan(inst, plan, eviction_mode="none") == []
    with pytest.raises(InputError, match="full_model"):
        defrag(inst, [TARGET], max_waves=2, full_model="sometimes")
