"""Small hand-made clusters for the per-device FGD harness."""

from __future__ import annotations

import numpy as np

from toposolve.sim.fgd import Nodes, Pods


def make_nodes(gpus: list[int], cpu: list[int], mem: int = 1_000_000) -> Nodes:
    """Nodes of one GPU model ``A`` (a second model ``B`` exists, on no node)."""
    n = len(gpus)
    return Nodes(tuple(f"n{k}" for k in range(n)), np.array(cpu, dtype=np.int64),
                 np.full(n, mem, dtype=np.int64), np.array(gpus, dtype=np.int64),
                 np.zeros(n, dtype=np.int64), ("A", "B"))


def make_pods(rows: list[tuple], models: int = 2) -> Pods:
    """Pods from ``(cpu, mem, count, milli)`` rows, or with a fifth item: allowed models."""
    access = np.ones((len(rows), models), dtype=bool)
    for k, row in enumerate(rows):
        if len(row) > 4:
            access[k] = [m in row[4] for m in range(models)]
    col = [np.array([r[j] for r in rows], dtype=np.int64) for j in range(4)]
    return Pods(tuple(f"p{k}" for k in range(len(rows))), col[0], col[1], col[2], col[3], access)
