"""One CP-SAT model of a scope of the problem: candidates, variables, constraints."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from ortools.sat.python import cp_model

from toposolve.core.problem import Problem
from toposolve.engines.cpsat.model.candidates import build_candidates
from toposolve.engines.cpsat.model.classes import Candidates, Scope
from toposolve.engines.cpsat.model.constraints import Constraints
from toposolve.engines.cpsat.model.devices import DeviceModel
from toposolve.engines.cpsat.model.eviction import EvictionModel, EvictionSpec
from toposolve.engines.cpsat.model.variables import Variables


class PlacementModel:
    """``check`` (optional) is called between building steps and may raise to stop the build
    (the run's deadline, :meth:`~toposolve.engines.cpsat.solve.budget.Budget.check`)."""

    def __init__(
        self, problem: Problem, scope: Scope | None = None, eviction: EvictionSpec | None = None,
        check: Callable[[str], None] | None = None,
    ) -> None:
        self.problem = problem
        check = check or _never
        if eviction is not None:
            scope = eviction.scope(scope)  # evictable room counts as idle, slot nodes alone
        self.cands: Candidates = build_candidates(problem, scope)
        check("model build (candidates)")
        self.model = cp_model.CpModel()
        self.vars = Variables(self.model, problem, self.cands)
        check("model build (variables)")
        constraints = Constraints(self.model, problem, self.cands, self.vars, check)
        constraints.add_all()
        self.evict: EvictionModel | None = (EvictionModel(self.model, problem, self.cands,
                self.vars, eviction) if eviction is not None else None)
        # per-device sharing: the devices the new pods take (:mod:`.devices`), evicted pods'
        # devices given back
        self.devices = (DeviceModel(self.model, problem, self.cands, self.vars.x,
                                    self.evict.freed_on_devices if self.evict else None)
                        if problem.has_devices else None)
        # after the evictions: a pod the plan evicts no longer counts against its queue
        constraints.add_queue_capability(self.evict.evicted_slots if self.evict else None)

    def size(self) -> dict[str, int]:
        proto = self.model.proto
        out = {
            "variables": len(proto.variables),
            "constraints": len(proto.constraints),
            "count_variables": sum(len(xs) for xs in self.vars.x.values()),
            "node_classes": len(self.cands.classes),
            "modelled_jobs": len(self.cands.jobs),
        }
        if self.evict is not None:
            out["eviction_slots"] = len(self.evict.spec.slots)
            out["victim_jobs"] = len(self.evict.ev)
        return out

    def counts(self, solution: list[int]) -> dict[int, np.ndarray]:
        """Per group, new pods per allowed class, read from a full solution vector."""
        return {
            g: np.array([solution[v.index] for v in xs], dtype=np.int64)
            for g, xs in self.vars.x.items()
        }


def _never(what: str) -> None:
    """The default build check: never stops."""
