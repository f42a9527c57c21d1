"""FGD's fragmentation measure, written once for the per-device harness and the pooled model.

The *target workload* is the popular pod shapes (FGD's ``GetTypicalPods``); the fragmentation
of a node is the expected free milli-GPU a pod drawn from it cannot use: for a shape the node
can host (GPU model allowed, ``count`` devices with ``milli`` free, CPU and, where given,
memory) the free milli on devices with less than ``milli`` free, otherwise every free milli.
:mod:`toposolve.sim.fgd.frag` feeds it per-device states, :mod:`.gpu_fragmentation` pooled ones.
Definition and sources: ``docs/fgd.md``.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

POPULARITY = 95  # per cent of the pods the kept shapes cover
MILLI = 1000  # milli-units of one device


@dataclass(frozen=True)
class TargetWorkload:
    """``T`` typical pod shapes and their weights (pod counts, or popularity summing to 1).

    ``access`` (``T × models``, all False for a shape without GPU) says on which GPU models a
    shape may run; None: every GPU shape on every node (one model). ``memory`` None: memory
    plays no part (FGD's own measure).
    """

    cpu: np.ndarray  # milli-CPU
    milli: np.ndarray  # milli asked on each device (0: no GPU)
    count: np.ndarray  # devices asked
    weight: np.ndarray
    access: np.ndarray | None = None
    memory: np.ndarray | None = None

    @property
    def model_access(self) -> np.ndarray:
        """``T × models`` access, the one-model default when ``access`` is None."""
        if self.access is not None:
            return self.access
        return (self.count > 0)[:, None]


def popular_shapes(counts: dict[Hashable, int],
                   threshold: int = POPULARITY) -> list[tuple[Hashable, int]]:
    """``(shape, pods)`` in decreasing pod count (ties: the larger shape first, Go's reversed
    ``Less``), cut at the shortest prefix covering ``threshold`` % of the pods."""
    ordered = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    total, covered, kept = sum(counts.values()), 0, []
    for shape, pods in ordered:
        if covered * 100 >= threshold * total:
            break
        kept.append((shape, pods))
        covered += pods
    return kept


def device_parts(gpu_left: np.ndarray, milli: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per node state and shape: devices with ``milli`` free, and milli free on the others
    (``gpu_left`` is ``K × D``; both results ``K × T``)."""
    fits = gpu_left[:, :, None] >= milli[None, None, :]
    return fits.sum(axis=1), np.where(fits, 0, gpu_left[:, :, None]).sum(axis=1)


def pooled_parts(free: np.ndarray, milli: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`device_parts` of pooled free milli ``F`` read as ``F // 1000`` whole free devices
    and one of ``F % 1000`` (``free`` is ``K``; shapes ask at most 1000 per device)."""
    free = np.asarray(free, dtype=np.int64)[:, None]
    whole, part = free // MILLI, free % MILLI
    fits = part >= milli[None, :]
    return whole + fits, np.where(fits, 0, part)


def frag_from_parts(nfit: np.ndarray, small: np.ndarray, total: np.ndarray,
                    cpu_left: np.ndarray, access: np.ndarray, target: TargetWorkload,
                    memory_left: np.ndarray | None = None) -> np.ndarray:
    """The weighted fragmentation from :func:`device_parts` or :func:`pooled_parts` (any leading
    shape ``S``; ``access`` is ``S × T``, ``total``, ``cpu_left`` and ``memory_left`` are
    ``S``): ``Σ_t weight_t · (small_t if the node hosts t else total)``."""
    hosts = access & (nfit >= target.count) & (cpu_left[..., None] >= target.cpu)
    if target.memory is not None and memory_left is not None:
        hosts &= memory_left[..., None] >= target.memory
    return np.where(hosts, small, total[..., None]) @ target.weight
