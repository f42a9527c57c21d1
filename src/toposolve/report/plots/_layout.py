"""Private: the icicle layout of a HyperNode tree.

Nodes are laid out left to right in depth-first order (children in HyperNode index order, i.e.
by (tier, name), then the HyperNode's own nodes), so every HyperNode covers one contiguous run
of ``node_count`` unit-width slots. The **strip tier** is the lowest tier whose HyperNodes are
few enough to draw one cell each (``max_cells``); tiers below it are folded into it, so a
6,144-node cluster with per-node HyperNodes is drawn at the tier where cells stay visible.
A node with no HyperNode at the strip tier belongs to the cell of its lowest HyperNode above
that tier (the virtual root for nodes no HyperNode holds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toposolve.core.topology import Topology


@dataclass
class Cell:
    hypernode: int
    x0: int
    width: int
    nodes: np.ndarray  # node indices in the cell's run


@dataclass
class Icicle:
    node_order: np.ndarray  # [N] node indices, left to right
    start: np.ndarray  # [H] x of each HyperNode's first slot
    strip_tier: int
    cells: list[Cell]  # runs of the strip row, left to right
    rows: list[int]  # tiers drawn above the strip, lowest first


def _dfs_order(topo: Topology) -> tuple[np.ndarray, np.ndarray]:
    by_home: dict[int, list[int]] = {}
    for n, h in enumerate(topo.node_home.tolist()):
        by_home.setdefault(h, []).append(n)
    order: list[int] = []
    start = np.zeros(len(topo.names), dtype=np.int64)
    stack: list[tuple[int, bool]] = [(topo.root, False)]
    while stack:
        h, done = stack.pop()
        if done:
            order.extend(by_home.get(h, ()))
            continue
        start[h] = len(order)
        stack.append((h, True))
        stack.extend((c, False) for c in reversed(topo.children[h]))
    return np.array(order, dtype=np.int64), start


def _cell_of_hypernode(topo: Topology, tier: int) -> np.ndarray:
    """Lowest HyperNode at or above each HyperNode whose tier is ≥ ``tier``."""
    cell = np.arange(len(topo.names))
    for h in np.argsort(-topo.tier, kind="stable").tolist():  # parents before children
        if topo.tier[h] < tier:
            cell[h] = cell[topo.parent[h]]
    return cell


def icicle_layout(topo: Topology, max_cells: int) -> Icicle:
    order, start = _dfs_order(topo)
    tiers = sorted(set(topo.tier[topo.node_count > 0].tolist()) | {topo.max_tier})
    strip, node_cell = tiers[-1], np.full(len(order), topo.root)
    for t in tiers:
        candidate = _cell_of_hypernode(topo, t)[topo.node_home]
        if len(np.unique(candidate)) <= max_cells:
            strip, node_cell = t, candidate
            break
    cells: list[Cell] = []
    if order.size:
        in_order = node_cell[order]
        cuts = np.flatnonzero(np.diff(in_order)) + 1
        for run in np.split(np.arange(order.size), cuts):
            cells.append(Cell(int(in_order[run[0]]), int(run[0]), int(run.size), order[run]))
    rows = [t for t in tiers if t > strip]
    return Icicle(order, start, strip, cells, rows)
