"""Queue deserved shares, re-derived for the checker (no engine code is shared).

* A queue that lists ``spec.deserved`` deserves exactly that, and only the listed resources
  count for it (the capacity plugin's input).
* Otherwise the proportion plugin's share: the cluster's allocatable (every node, resource
  ``pods`` excluded) is split among the queues that have jobs by weight; each queue is capped at
  its capability and at its request (the requests of all its pods, running or pending) and
  raised to its guarantee; what a capped queue leaves is split again among the others, until
  every queue is met or nothing is left to split.
"""

from __future__ import annotations

import math

from toposolve.core.instance import Instance, Queue

POD_COUNT = "pods"
_ABS = 1e-8  # tolerances of "nothing changed" (the plugin compares with a small minimum)
_REL = 1e-5
_EPS = 1e-6  # milli-units


def resources_of(instance: Instance) -> list[str]:
    names = {r for n in instance.nodes for r in n.allocatable}
    names |= {r for j in instance.jobs for t in j.tasks for r in t.requests}
    return sorted(names - {POD_COUNT})


def _close(a: dict[str, float], b: dict[str, float]) -> bool:
    return all(math.isclose(a[r], b[r], rel_tol=_REL, abs_tol=_ABS) for r in a)


def _water_fill(instance: Instance, queues: dict[str, Queue], names: list[str],
                resources: list[str]):
    total = {r: float(sum(n.allocatable.get(r, 0) for n in instance.nodes)) for r in resources}
    request = {q: dict.fromkeys(resources, 0.0) for q in names}
    for job in instance.jobs:
        for task in job.tasks:
            for r in resources:
                request[job.queue][r] += task.replicas * task.requests.get(r, 0)
    guarantee = {q: {r: float(queues[q].guarantee.get(r, 0)) for r in resources} for q in names}
    cap = {}
    for q in names:
        cap[q] = {}
        for r in resources:
            others = sum(guarantee[o][r] for o in names)
            real = max(total[r] - others, 0.0) + guarantee[q][r]
            cap[q][r] = min(real, float(queues[q].capability.get(r, math.inf)))
    deserved = {q: dict.fromkeys(resources, 0.0) for q in names}
    met: set[str] = set()
    remaining = dict(total)
    while True:
        weight = sum(queues[q].weight for q in names if q not in met)
        if weight == 0:
            break
        before = dict(remaining)
        grown = dict.fromkeys(resources, 0.0)
        shrunk = dict.fromkeys(resources, 0.0)
        for q in names:
            if q in met:
                continue
            old = deserved[q]
            new = {}
            for r in resources:
                value = old[r] + remaining[r] * queues[q].weight / weight
                value = min(value, cap[q][r], request[q][r])
                new[r] = max(value, guarantee[q][r])
            if all(request[q][r] <= new[r] + _EPS for r in resources) or _close(new, old):
                met.add(q)
            for r in resources:
                grown[r] += max(new[r] - old[r], 0.0)
                shrunk[r] += max(old[r] - new[r], 0.0)
            deserved[q] = new
        remaining = {r: max(remaining[r] + shrunk[r] - grown[r], 0.0) for r in resources}
        if all(v <= _EPS for v in remaining.values()) or _close(remaining, before):
            break
    return deserved


def deserved_shares(instance: Instance) -> dict[str, dict[str, float]]:
    """Queue → resource → deserved amount (milli-units); only the resources that count."""
    resources = resources_of(instance)
    declared = {q.name: q for q in instance.queues}
    names = sorted({job.queue for job in instance.jobs})
    queues = {n: declared.get(n, Queue(name=n)) for n in names}
    shares = _water_fill(instance, queues, names, resources)
    out: dict[str, dict[str, float]] = {}
    for name in set(names) | set(declared):
        q = declared.get(name) or queues[name]
        if q.deserved:
            out[name] = {r: float(v) for r, v in q.deserved.items() if r != POD_COUNT}
        else:
            out[name] = shares.get(name, dict.fromkeys(resources, 0.0))
    return out
