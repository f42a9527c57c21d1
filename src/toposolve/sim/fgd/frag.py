"""FGD's fragmentation measure of a node, vectorised over nodes (and candidate placements).

The *target workload* (``utils.GetTypicalPods``, the artifact's settings: CPU-only pods
included, popularity threshold 95 %, step 1, no GPU weight) is the trace's pod shapes
``(cpu, milli, count, models)`` in decreasing popularity (ties: the larger shape first), cut
at the shortest prefix that covers 95 % of the pods, popularity renormalised to 1.

The fragmentation of a node (``utils.NodeGpuShareFragAmountScore``) is the expected number of
its free milli-GPUs that a pod drawn from the target workload cannot use: for a typical pod
``t`` with popularity ``p_t``, if the node can host ``t`` (model allowed, ``count`` devices
with ``milli`` free, enough CPU) only the devices with less than ``milli`` free count, else
all the node's free milli-GPUs do. A CPU-only typical pod counts all of them (the simulator
classifies it as "x_l"/"x_r", both fragment). Memory plays no part.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toposolve.sim.fgd.state import Pods

POPULARITY = 95  # per cent


@dataclass(frozen=True)
class TypicalPods:
    """The target workload: ``T`` pod shapes and their popularity (summing to 1)."""

    cpu: np.ndarray
    milli: np.ndarray
    count: np.ndarray
    access: np.ndarray  # T × models; all False for CPU-only shapes (never "satisfied")
    freq: np.ndarray


def typical_pods(trace: Pods, threshold: int = POPULARITY) -> TypicalPods:
    """The target workload of ``trace`` (the original trace, before tuning); ``threshold`` in %."""
    shapes: dict[tuple, int] = {}
    for i in range(len(trace)):
        key = (int(trace.cpu[i]), int(trace.milli[i]), int(trace.count[i]),
               tuple(bool(a) for a in trace.access[i]))
        shapes[key] = shapes.get(key, 0) + 1
    # decreasing count; ties: the larger shape first (Go's sort.Reverse of Less)
    ordered = sorted(shapes.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    total, cum, cut = len(trace), 0, 0
    while cum < threshold * total / 100.0 and cut < len(ordered):
        cum += ordered[cut][1]
        cut += 1
    kept = ordered[:cut]
    access = np.array([k[3] for k, _ in kept], dtype=bool)
    milli = np.array([k[1] for k, _ in kept], dtype=np.int64)
    access &= (milli > 0)[:, None]
    return TypicalPods(
        cpu=np.array([k[0] for k, _ in kept], dtype=np.int64),
        milli=milli,
        count=np.array([k[2] for k, _ in kept], dtype=np.int64),
        access=access,
        freq=np.array([n for _, n in kept], dtype=np.float64) / cum,
    )


def frag_parts(gpu_left: np.ndarray, tp: TypicalPods) -> tuple[np.ndarray, np.ndarray]:
    """Per node and typical pod: devices with ``milli`` free, and milli free on the others.

    ``gpu_left`` is ``K × D``; both results are ``K × T``.
    """
    fits = gpu_left[:, :, None] >= tp.milli[None, None, :]
    nfit = fits.sum(axis=1)
    small = np.where(fits, 0, gpu_left[:, :, None]).sum(axis=1)
    return nfit, small


def frag_from_parts(nfit: np.ndarray, small: np.ndarray, total: np.ndarray,
                    cpu_left: np.ndarray, access: np.ndarray, tp: TypicalPods) -> np.ndarray:
    """The fragmentation from :func:`frag_parts` (any leading shape ``S``; ``access`` is ``S × T``,
    ``total`` and ``cpu_left`` are ``S``)."""
    satisfied = access & (nfit >= tp.count) & (cpu_left[..., None] >= tp.cpu)
    return np.where(satisfied, small, total[..., None]) @ tp.freq


def node_frag(cpu_left: np.ndarray, gpu_left: np.ndarray, model: np.ndarray,
              tp: TypicalPods) -> np.ndarray:
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
    nfit, small = frag_parts(gpu_left, tp)
    total = gpu_left.sum(axis=1).astype(np.float64)
    return frag_from_parts(nfit, small, total, cpu_left, tp.access.T[model], tp)


def frag_after_share(nfit: np.ndarray, small: np.ndarray, total: np.ndarray,
                     cpu_left: np.ndarray, gpu_left: np.ndarray, access: np.ndarray,
                     cpu: int, milli: int, tp: TypicalPods) -> np.ndarray:
    """Fragmentation of ``K`` nodes after a pod takes ``milli`` of device ``d`` and ``cpu``,
    for every device ``d`` (``K × D``; devices with less than ``milli`` free give garbage).

    Only device ``d`` changes, so the parts of the current state (:func:`frag_parts`) are
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
