"""Sequencing a defragmentation plan's moves in waves that each keep every budget.

A wave's evictions are posted together; the next wave starts once its replacements are Ready,
so the disruption controller then counts them healthy and renews ``disruptionsAllowed``
(:class:`~toposolve.core.disruption.WaveLedger`). Waves are filled in plan order: a wave takes
every remaining move its budgets allow (charged pods up to each budget's allowance then), then,
while a node would be over its allocatable once the wave is done (its room freed only by a
later move), drops the last move onto such a node and fills again. Rationale and the procedure
to apply them: ``docs/defrag.md`` ("Waves").
"""

from __future__ import annotations

import numpy as np

from toposolve.core.disruption import READY
from toposolve.engines.defrag.common import DefragInput, DefragResult, plan_changes

MoveRow = tuple[str, int, int]  # (pod, from node, to node)


class _Sequencer:
    def __init__(self, di: DefragInput, moves: list[MoveRow]) -> None:
        p = di.problem
        self.di, self.moves = di, moves
        self.dead = {pod.name for pod in p.running
                     if di.failed is not None and di.failed[pod.node]}
        self.budgets = p.budgets
        self.ledgers = [b.ledger(self.dead) for b in p.budgets]
        self.covering: dict[str, list[int]] = {}
        for k, budget in enumerate(p.budgets):
            for name in budget.running:
                self.covering.setdefault(name, []).append(k)
        self.request = [p.group_request[p.pod_group[pod]] for pod, _, _ in moves]
        self.free = di.current_free()

    def _charged(self, i: int) -> list[int]:
        """The budgets evicting move ``i``'s pod now takes an allowed disruption of."""
        name = self.moves[i][0]
        if name in self.dead:  # gone already: no eviction
            return []
        return [k for k in self.covering.get(name, [])
                if self.ledgers[k].charged(self.budgets[k].health(name))]

    def _fill(self, left: list[int], banned: set[int]) -> list[int]:
        used = [0] * len(self.ledgers)
        chosen = []
        for i in left:
            ks = [] if i in banned else self._charged(i)
            if i in banned or any(used[k] >= self.ledgers[k].allowed() for k in ks):
                continue
            for k in ks:
                used[k] += 1
            chosen.append(i)
        return chosen

    def _after(self, chosen: list[int]) -> tuple[np.ndarray, list[int]]:
        """Free room once ``chosen`` is done, and the nodes it puts over their allocatable."""
        after = self.free.copy()
        for i in chosen:
            _, source, to = self.moves[i]
            after[source] += self.request[i]
            after[to] -= self.request[i]
        over = sorted({self.moves[i][2] for i in chosen
                       if ((after[self.moves[i][2]] < 0) & (self.request[i] > 0)).any()})
        return after, over

    def wave(self, left: list[int]) -> list[int]:
        """The next wave's moves (indices into ``moves``), applied; empty when none can go."""
        banned: set[int] = set()
        while True:
            chosen = self._fill(left, banned)
            after, over = self._after(chosen)
            if not over:
                break
            banned.add(max(i for i in chosen if self.moves[i][2] in over))
        self.free = after
        for k, ledger in enumerate(self.ledgers):
            ledger.wave_done(sum(1 for i in chosen if k in self.covering.get(self.moves[i][0], [])
                                 and (self.moves[i][0] in self.dead
                                      or self.budgets[k].health(self.moves[i][0]) != READY)))
        return chosen


def assign_waves(di: DefragInput, moves: list[MoveRow], max_waves: int) -> list[int] | None:
    """The wave (1, 2, …) of each of ``moves``, at most ``max_waves`` waves; None when they
    cannot be sequenced so (a wave that can take no move, or more waves needed)."""
    seq, waves = _Sequencer(di, moves), [0] * len(moves)
    left = list(range(len(moves)))
    for wave in range(1, max_waves + 1):
        if not left:
            break
        chosen = seq.wave(left)
        if not chosen:
            return None
        for i in chosen:
            waves[i] = wave
        taken = set(chosen)
        left = [i for i in left if i not in taken]
    return None if left else waves


def model_waves(di: DefragInput, result: DefragResult
                ) -> tuple[list[MoveRow], list[int]] | None:
    """The plan's moves and their waves as CP-SAT's wave model chose them
    (``result.waved``): per group and wave, the pods leaving each node (its charged pods
    first, up to the wave's charged count there, then the others, in the plan's order) go to
    the nodes gaining pods that wave, in node order; empty waves are dropped. None when the
    counts do not match the plan's moves (then the sequencer decides)."""
    p, waved = di.problem, result.waved or {}
    failed = di.failed if di.failed is not None else np.zeros(p.n_nodes, dtype=bool)
    leaving: dict[tuple[int, int], list[str]] = {}  # (group, node) -> pods, in plan order
    for pod, source, _ in plan_changes(di, result)[0]:
        leaving.setdefault((p.pod_group[pod], source), []).append(pod)
    rows: list[MoveRow] = []
    waves: list[int] = []
    for g in sorted({g for g, _ in leaving} | set(waved)):
        sources = sorted(n for h, n in leaving if h == g)
        for w, counts in sorted(waved.get(g, {}).items()):
            pods: list[tuple[str, int]] = []
            lost = counts["failed"]
            for n in sources:
                take = lost if failed[n] else counts["out"].get(n, 0)
                chosen = _split(leaving[g, n], take, counts["charged"].get(n, take),
                                di.budgets.charged_pods)
                if chosen is None:
                    return None
                if failed[n]:
                    lost -= len(chosen)
                pods += [(pod, n) for pod in chosen]
            slots = [n for n, c in sorted(counts["in"].items()) for _ in range(c)]
            if len(slots) != len(pods) or lost:
                return None
            rows += [(pod, n, to) for (pod, n), to in zip(pods, slots, strict=True)]
            waves += [w] * len(slots)
    if any(leaving.values()):
        return None
    rank = {w: k for k, w in enumerate(sorted(set(waves)), start=1)}
    return rows, [rank[w] for w in waves]


def _split(pods: list[str], take: int, charged_cap: int, charged: frozenset[str]
           ) -> list[str] | None:
    """Take ``take`` of ``pods`` (at most as many as there are; removed in place): charged
    ones first, at most ``charged_cap``, then the others; None if that cannot make ``take``
    while some are left."""
    picked = [pod for pod in pods if pod in charged][:min(charged_cap, take)]
    picked += [pod for pod in pods if pod not in charged][:take - len(picked)]
    if len(picked) < min(take, len(pods)):
        return None
    for pod in picked:
        pods.remove(pod)
    return picked
