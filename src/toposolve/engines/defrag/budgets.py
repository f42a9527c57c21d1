"""PodDisruptionBudgets as the defragmentation engines count them: per pod actually moved.

A budget's **charged** pods are the covered running pods whose eviction takes one of its
allowed disruptions (:meth:`toposolve.core.budgets.CompiledBudget.charged`). A moved job uses,
of each budget, its charged pods that leave their node. Which pods of a group on a node stay
is settled by :func:`toposolve.engines.defrag.common.pod_changes`: charged pods first, so a
group that keeps ``k`` pods on a node where ``c`` of its pods are charged moves
``max(0, c - k)`` of them; where charged pods of two budgets share a group and node, each
budget counts all of its pods there as moved (no order keeps both). A pod two budgets cover
(the eviction API refuses it) keeps its node in every plan: it is charged to no budget, and
stays before the charged pods of its group and node. Rationale: ``docs/defrag.md``
("PodDisruptionBudgets").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from toposolve.core.problem import Problem

Cell = tuple[int, int]  # (group, node)


@dataclass(frozen=True)
class BudgetUse:
    """One budget: the disruptions it allows the plan (its allowance times the waves), per
    job its charged running pods by (group, node), and the disruptions it allows one wave
    (``per_wave``; None: ``allowed``)."""

    allowed: int
    charged: dict[int, dict[Cell, int]] = field(default_factory=dict)
    per_wave: int | None = None

    def leaving(self, job: int, final: Mapping[int, Mapping[int, int]] | None,
                shared: frozenset[Cell] = frozenset(),
                ahead: Mapping[Cell, int] | None = None) -> int:
        """Charged pods of ``job`` that leave their node when it ends at ``final`` (group ->
        node -> pods; None: the job stays); ``ahead``: per (group, node), the job's pods that
        keep their node before any charged one (those two budgets cover)."""
        if final is None:
            return 0
        ahead = ahead or {}
        return sum(c if (g, n) in shared
                   else max(0, c + ahead.get((g, n), 0) - final.get(g, {}).get(n, 0))
                   for (g, n), c in self.charged.get(job, {}).items())


@dataclass(frozen=True)
class Budgets:
    """Every budget of a defragmentation, the cells charged pods of two budgets share, the
    charged pods' names, and the pods the eviction API refuses to evict (two budgets cover
    them): by name, and per job by (group, node)."""

    uses: list[BudgetUse]
    shared: frozenset[Cell]
    charged_pods: frozenset[str]
    refused_pods: frozenset[str] = frozenset()
    refused: dict[int, dict[Cell, int]] = field(default_factory=dict)

    def use(self, placements: Mapping[int, Mapping[int, Mapping[int, int]]]) -> list[int]:
        """Per budget, charged pods the jobs of ``placements`` (job -> final placement) move."""
        return [sum(b.leaving(j, final, self.shared, self.refused.get(j))
                    for j, final in placements.items())
                for b in self.uses]

    def fits(self, used: Iterable[int]) -> bool:
        """Whether ``used`` (per budget) is within every budget."""
        return all(u <= b.allowed for u, b in zip(used, self.uses, strict=True))


def compile_uses(problem: Problem, failed: np.ndarray | None, waves: int = 1) -> Budgets:
    """The budgets of ``problem`` for the engines; pods on ``failed`` nodes are gone (not
    healthy, not charged); ``waves``: how many waves the plan may take (each renews the
    allowance, so the plan may use ``waves`` times it)."""
    dead = {p.name for p in problem.running if failed is not None and failed[p.node]}
    by_name = {p.name: p for p in problem.running}
    seen: set[str] = set()
    twice: set[str] = set()
    for budget in problem.budgets:
        for name in sorted(budget.refusing(dead)):
            (twice if name in seen else seen).add(name)
    uses, charged_pods = [], set()
    for budget in problem.budgets:
        charged = budget.charged(dead) - twice  # a refused pod never leaves: nothing charged
        now = budget.allowed(dead)
        uses.append(BudgetUse(now * waves, _cells(by_name, charged), now))
        charged_pods |= charged
    owners: dict[Cell, int] = {}
    shared = set()
    for k, use in enumerate(uses):
        for cells in use.charged.values():
            for cell in cells:
                if owners.setdefault(cell, k) != k:
                    shared.add(cell)
    return Budgets(uses, frozenset(shared), frozenset(charged_pods), frozenset(twice),
                   _cells(by_name, twice))


def _cells(by_name: Mapping, names: Iterable[str]) -> dict[int, dict[Cell, int]]:
    """Pods ``names`` counted per job by (group, node)."""
    per: dict[int, dict[Cell, int]] = {}
    for name in sorted(names):
        pod = by_name[name]
        cell = per.setdefault(pod.job, {})
        cell[pod.group, pod.node] = cell.get((pod.group, pod.node), 0) + 1
    return per
