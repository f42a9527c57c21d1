"""Rule ``eviction`` (freed room): the room an eviction frees belongs to the jobs allowed to make
it.

The rule (``docs/eviction.md``): on every node, each resource's new requests must be payable
from the room that was idle before the plan — anyone's — and from the room freed there by
evicting pods of a job ``v``, which only jobs allowed to evict ``v`` may take. A node that was
already overcommitted pays its deficit first, from any freed room. So a job that may evict no
victim of a node (a *non-preemptor* there) may still be bound on it, but only into room that was
idle before the plan: Volcano's allocate action runs before preempt and reclaim and binds into
idle room, and the freed room is nominated to the preemptor (Volcano's gang-aware eviction design).

Checked per node and resource as a transport problem (jobs draw from sources they may use)
solved by max-flow; when the node's total room suffices (else ``capacity`` reports it) but the
flow falls short, the minimum cut names the jobs that take room freed for someone else.
"""

from __future__ import annotations

from collections import defaultdict, deque

from toposolve.check.context import Context
from toposolve.check.jobs import EvictionMode
from toposolve.check.resources import pod_usage
from toposolve.check.rights import may_evict
from toposolve.check.violation import Violation

_IDLE = "(idle before the plan)"


def check_freed_room(ctx: Context, mode: EvictionMode,
                     unexplained: set[str] = frozenset()) -> list[Violation]:
    """One violation per node and resource where new pods take room freed for other jobs.
    The room of ``unexplained`` evictions (reported already) counts as idle, not again here."""
    evicted_on: dict[str, list[str]] = defaultdict(list)
    for pod, node in ctx.evicted.items():
        if pod not in unexplained:
            evicted_on[node].append(pod)
    bound_on: dict[str, list[str]] = defaultdict(list)
    for pod, node in ctx.bound.items():
        bound_on[node].append(pod)
    running_on: dict[str, list[str]] = defaultdict(list)
    for pod in ctx.pods.values():
        if pod.running_on is not None and pod.name not in unexplained:
            running_on[pod.running_on].append(pod.name)
    out: list[Violation] = []
    for node_name in sorted(set(evicted_on) & set(bound_on)):
        out += _check_node(ctx, mode, node_name, running_on[node_name], evicted_on[node_name],
                           bound_on[node_name])
    return out


def _by_job(ctx: Context, pods: list[str], counted: dict[str, int]) -> dict[str, dict[str, int]]:
    jobs: dict[str, list[str]] = defaultdict(list)
    for pod in pods:
        jobs[ctx.pods[pod].job.key].append(pod)
    return {job: dict(pod_usage(ctx, names, counted)) for job, names in sorted(jobs.items())}


def _check_node(ctx: Context, mode: EvictionMode, node_name: str, running: list[str],
                evicted: list[str], bound: list[str]) -> list[Violation]:
    allocatable = ctx.nodes[node_name].allocatable
    idle = {r: allocatable.get(r, 0) - used
            for r, used in pod_usage(ctx, running, allocatable).items()}
    freed = _by_job(ctx, evicted, allocatable)
    demand = _by_job(ctx, bound, allocatable)
    allowed = {j: [v for v in freed if may_evict(ctx, mode, j, v)] for j in demand}
    if all(len(vs) == len(freed) for vs in allowed.values()):
        return []  # every job may take every freed room: plain capacity
    out: list[Violation] = []
    for r in sorted({r for d in demand.values() for r in d}):
        need = {j: d.get(r, 0) for j, d in demand.items() if d.get(r, 0) > 0}
        have = {v: f.get(r, 0) for v, f in freed.items() if f.get(r, 0) > 0}
        before = idle.get(r, allocatable.get(r, 0))
        room, deficit = max(before, 0), max(-before, 0)
        if sum(need.values()) + deficit > room + sum(have.values()):
            continue  # the node is short of room whoever takes it: ``capacity`` reports it
        cut = _unpaid(need, have, room, deficit, allowed)
        if cut:
            takers = ", ".join(f"Job/{j}" for j in sorted(cut))
            theirs = sorted({v for j in cut for v in allowed[j] if v in have})
            owed = f" (owing {deficit}m)" if deficit else ""
            out.append(Violation(
                "eviction", f"Node/{node_name}",
                f"{r}: new pods of {takers} request {sum(need[j] for j in cut)}m, but {room}m was "
                "idle "
                f"before the plan{owed} and evicting pods of jobs they may evict frees "
                f"{sum(have[v] for v in theirs)}m: they take room freed for other jobs",
            ))
    return out


def _unpaid(need: dict[str, int], have: dict[str, int], room: int, deficit: int,
            allowed: dict[str, list[str]]) -> set[str]:
    """Jobs on the source side of a minimum cut when the new requests cannot all be paid (else
    empty): max-flow source → job (request) → usable room (idle, allowed victims) → sink."""
    src, sink, debt = ("src",), ("sink",), ("deficit",)
    cap: dict[tuple, dict[tuple, int]] = defaultdict(lambda: defaultdict(int))
    sources = [("room", _IDLE)] + [("room", v) for v in have]
    for j, amount in need.items():
        cap[src][("job", j)] = amount
        for v in [_IDLE, *allowed[j]]:
            if v == _IDLE or v in have:
                cap[("job", j)][("room", v)] = amount
    if deficit:
        cap[src][debt] = deficit
        for s in sources:
            cap[debt][s] = deficit
    cap[("room", _IDLE)][sink] = room
    for v, amount in have.items():
        cap[("room", v)][sink] = amount
    total = sum(need.values()) + deficit
    flow = 0
    while True:
        parent = _search(cap, src)
        if sink not in parent:
            break
        path, v = [], sink
        while v != src:
            path.append((parent[v], v))
            v = parent[v]
        push = min(cap[a][b] for a, b in path)
        for a, b in path:
            cap[a][b] -= push
            cap[b][a] += push
        flow += push
    if flow >= total:
        return set()
    return {n[1] for n in parent if n[0] == "job"}


def _search(cap, src) -> dict:
    """Breadth-first tree of the residual graph from ``src``: node -> parent."""
    parent = {src: src}
    todo = deque([src])
    while todo:
        a = todo.popleft()
        for b, c in list(cap[a].items()):
            if c > 0 and b not in parent:
                parent[b] = a
                todo.append(b)
    return parent
