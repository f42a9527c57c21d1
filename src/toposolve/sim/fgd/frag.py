"""FGD's fragmentation measure of a node, per device, vectorised over nodes (and candidates).

The measure itself (target workload cut, hosted shapes, unusable milli) is
:mod:`toposolve.policy.fgd_measure`, shared with the pooled model; this module builds the
target workload from the trace (``utils.GetTargetWorkload``, the artifact's settings: CPU-only
pods included, popularity threshold 95 %, step 1, no GPU weight; shapes ``(cpu, milli, count,
models)``, popularity renormalised to 1; memory plays no part, as in FGD) and updates a node's
parts when a shared pod takes part of one device.
"""

from __future__ import annotations

import numpy as np

from toposolve.policy.fgd_measure import (
    POPULARITY,
    TargetWorkload,
    device_parts,
    frag_from_parts,
    popular_shapes,
)
from toposolve.sim.fgd.state import Pods


def typical_pods(trace: Pods, threshold: int = POPULARITY) -> TargetWorkload:
    """The target workload of ``trace`` (the original trace, before tuning); ``threshold`` in %."""
    shapes: dict[tuple, int] = {}
    for i in range(len(trace)):
        key = (int(trace.cpu[i]), int(trace.milli[i]), int(trace.count[i]),
               tuple(bool(a) for a in trace.access[i]))
        shapes[key] = shapes.get(key, 0) + 1
    kept = popular_shapes(shapes, threshold)
    access = np.array([k[3] for k, _ in kept], dtype=bool)
    milli = np.array([k[1] for k, _ in kept], dtype=np.int64)
    access &= (milli > 0)[:, None]
    return TargetWorkload(
        cpu=np.array([k[0] for k, _ in kept], dtype=np.int64),
        milli=milli,
        count=np.array([k[2] for k, _ in kept], dtype=np.int64),
        access=access,
        weight=np.array([n for _, n in kept], dtype=np.float64) / sum(n for _, n in kept),
    )


def node_frag(cpu_left: np.ndarray, gpu_left: np.ndarray, model: np.ndarray,
              tp: TargetWorkload) -> np.ndarray:
    """FGD's fragmentation (milli-GPUs) of ``K`` node states.

    Parameters
    ----------
    cpu_left
        Free milli-CPU per node (``K``).
    gpu_left
        Free milli-GPU per node and device (``K × D``).
    model
        The nodes' GPU model indices (``K``).
    tp
        The target workload.
    """
    nfit, small = device_parts(gpu_left, tp.milli)
    total = gpu_left.sum(axis=1).astype(np.float64)
    return frag_from_parts(nfit, small, total, cpu_left, tp.model_access.T[model], tp)


def frag_after_share(nfit: np.ndarray, small: np.ndarray, total: np.ndarray,
                     cpu_left: np.ndarray, gpu_left: np.ndarray, access: np.ndarray,
                     cpu: int, milli: int, tp: TargetWorkload) -> np.ndarray:
    """Fragmentation of ``K`` nodes after a pod takes ``milli`` of device ``d`` and ``cpu``,
    for every device ``d`` (``K × D``; devices with less than ``milli`` free give garbage).

    Only device ``d`` changes, so the parts of the current state (:func:`device_parts`) are
    updated in place of a recount.
    """
    before = gpu_left[:, :, None]  # K × D × 1
    after = before - milli
    fit_b, fit_a = before >= tp.milli, after >= tp.milli
    nfit2 = nfit[:, None, :] + fit_a.astype(np.int64) - fit_b
    small2 = small[:, None, :] + np.where(fit_a, 0, after) - np.where(fit_b, 0, before)
    total2 = np.broadcast_to((total - milli)[:, None], gpu_left.shape)
    cpu2 = np.broadcast_to((cpu_left - cpu)[:, None], gpu_left.shape)
    return frag_from_parts(nfit2, small2, total2, cpu2, access[:, None, :], tp)
