"""Rule ``wave``: a defragmentation plan carried out in waves is feasible between its waves.

When any move names a wave (``Move.wave``), every move must; each wave's evictions are posted
together and its replacements placed before the next wave starts, so once each wave but the
last is done, every node a pod moved onto in that wave holds no more than its allocatable, for
the resources those pods request (the ``capacity`` rule's measure; the last wave, with the
plan's bindings, is the final state that rule checks). The budgets wave by wave are the ``pdb``
rule (:mod:`.disruption`). Procedure and rationale: ``docs/defrag.md`` ("Waves").
"""

from __future__ import annotations

from toposolve.check.context import Context
from toposolve.check.resources import POD_COUNT, pod_usage
from toposolve.check.violation import Violation


def check_waves(ctx: Context) -> list[Violation]:
    """Moves without a wave beside moves with one, and nodes over capacity between waves."""
    moves = ctx.plan.moves
    if not any(m.wave is not None for m in moves):
        return []
    missing = [Violation("wave", f"Pod/{m.pod}", "moved without a wave, while other moves "
                         "have one") for m in moves if m.wave is None]
    if missing:
        return missing
    where = {name: p.running_on for name, p in ctx.pods.items()
             if p.running_on in ctx.nodes and name not in ctx.evicted}
    waves = sorted({m.wave for m in moves})
    out: list[Violation] = []
    for wave in waves[:-1]:
        arrived: dict[str, set[str]] = {}
        for m in moves:
            if m.wave == wave and m.pod in ctx.moved:
                where[m.pod] = m.to
                arrived.setdefault(m.to, set()).update(
                    r for r, amount in ctx.pods[m.pod].task.requests.items() if amount > 0)
        on_node: dict[str, list[str]] = {name: [] for name in arrived}
        for pod, name in where.items():
            if name in on_node:
                on_node[name].append(pod)
        for name in sorted(arrived):
            node = ctx.nodes[name]
            for resource, used in sorted(pod_usage(ctx, on_node[name], node.allocatable).items()):
                have = node.allocatable.get(resource, 0)
                if resource in arrived[name] | {POD_COUNT} and used > have:
                    out.append(Violation("wave", f"Node/{name}", f"after wave {wave}: {resource}: "
                                         f"pods request {used}m, allocatable is {have}m"))
    return out
