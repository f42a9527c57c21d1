"""Bundle ROI: how much of the preemptor's need a bundle frees, per unit of gang it destroys.

Seed 002 §3.4.3, as Volcano's ``actions/utils/bundle.go`` computes it::

    gain = Σ_r min(local_r, need_r) / need_r        over resources with need_r > 0
    cost = Σ_r global_r / need_r                    over the same resources
    ROI  = gain / cost,   +∞ when cost = 0

Resources the preemptor does not request are ignored on both sides (seed Example 4: a victim's
GPU does not count against a CPU-only preemptor; the seed's suggested penalty for it is not
implemented, nor is it in Volcano). The ``pods`` count is not a resource here.

DOC vs CODE: the seed gives a SAFE bundle a global cost equal to its own tasks; Volcano's code
gives it an empty global cost, so its ROI is +∞ and SAFE bundles are ordered by victim order
only. We follow the code (``global_`` of a SAFE bundle is all zeros).

Threshold: the seed's sort ignores ROI differences of at most ``ROI_THRESHOLD`` (0.05, absolute)
so that a negligible efficiency gain does not override the next criterion; Volcano's code has no
threshold (any difference decides). We follow the seed. Two +∞ ROIs are equal.
"""

from __future__ import annotations

import math

import numpy as np

ROI_THRESHOLD = 0.05


def requested(need: np.ndarray, resources: tuple[str, ...] | None = None) -> np.ndarray:
    """Mask of the resources that count: requested by the preemptor, ``pods`` excluded."""
    mask = np.asarray(need) > 0
    if resources is not None:
        mask &= np.array([r != "pods" for r in resources], dtype=bool)
    return mask


def local_gain(local: np.ndarray, need: np.ndarray, mask: np.ndarray | None = None) -> float:
    """``Σ min(local_r, need_r) / need_r`` over the requested resources."""
    mask = requested(need) if mask is None else mask
    n = np.asarray(need, dtype=float)[mask]
    return float((np.minimum(np.asarray(local, dtype=float)[mask], n) / n).sum())


def global_cost(global_: np.ndarray, need: np.ndarray, mask: np.ndarray | None = None) -> float:
    """``Σ global_r / need_r`` over the requested resources."""
    mask = requested(need) if mask is None else mask
    n = np.asarray(need, dtype=float)[mask]
    return float((np.asarray(global_, dtype=float)[mask] / n).sum())


def roi(local: np.ndarray, global_: np.ndarray, need: np.ndarray,
        mask: np.ndarray | None = None) -> float:
    """Local gain ÷ global cost; +∞ when nothing requested is destroyed globally."""
    cost = global_cost(global_, need, mask)
    if cost == 0:
        return math.inf
    return local_gain(local, need, mask) / cost


def compare_roi(a: float, b: float, threshold: float = ROI_THRESHOLD) -> int:
    """-1 if ``a`` is clearly better (higher by more than ``threshold``), 1 if ``b`` is, else 0."""
    if a == b or (math.isinf(a) and math.isinf(b)):
        return 0
    if abs(a - b) > threshold:
        return -1 if a > b else 1
    return 0
