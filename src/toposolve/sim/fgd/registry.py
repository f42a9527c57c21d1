"""The experiment's policies by name: FGD's four baselines, then toposolve's own."""

from __future__ import annotations

import numpy as np

from toposolve.policy.fgd_measure import TargetWorkload
from toposolve.sim.fgd.balanced import BalancedFGDPolicy
from toposolve.sim.fgd.policies import (
    BestFitPolicy,
    FGDPolicy,
    GpuPackingPolicy,
    Policy,
    RandomPolicy,
)

CLASSES = {"Random": RandomPolicy, "BestFit": BestFitPolicy, "GpuPacking": GpuPackingPolicy,
           "FGD": FGDPolicy, "BalancedFGD": BalancedFGDPolicy}
POLICIES = tuple(CLASSES)
NEEDS_WORKLOAD = ("FGD", "BalancedFGD")


def make_policy(name: str, rank: np.ndarray, seed: int, tp: TargetWorkload) -> Policy:
    """One of :data:`POLICIES` for one experiment (``seed`` drives Random's draws)."""
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; expected one of {', '.join(POLICIES)}")
    rng = np.random.default_rng([seed, POLICIES.index(name)])
    if name in NEEDS_WORKLOAD:
        return CLASSES[name](rank, rng, tp)
    return CLASSES[name](rank, rng)
