"""``plot_hypernode_scores``: why the heuristic picked one HyperNode for a SubJob."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from toposolve.report.plots._figure import axes_or_new

MAX_BARS = 40
TIE_BREAK = "#7f7f7f"


def _subjob_index(problem: Any, subjob: int | str) -> int:
    if isinstance(subjob, str):
        for s, sj in enumerate(problem.subjobs):
            if sj.id == subjob:
                return s
        raise ValueError(f"no SubJob {subjob!r} (ids look like 'ns/job' or 'ns/job/policy-0')")
    return int(subjob)


def _candidate_indices(problem: Any, candidates: Sequence[int | str]) -> np.ndarray:
    index = problem.topology.index
    out = []
    for c in candidates:
        if isinstance(c, str):
            if c not in index:
                raise ValueError(f"no HyperNode {c!r}")
            out.append(index[c])
        else:
            out.append(int(c))
    return np.array(out, dtype=np.int64)


def _binpack_terms(engine: Any, s: int, candidates: np.ndarray) -> tuple[np.ndarray, list[str],
                                                                         np.ndarray]:
    """Per candidate and weighted resource: ``w_r·(used_r + request_r)/alloc_r / Σw``, and
    which candidates overflow (score 0). Same request as ``HeuristicEngine.hypernode_scores``:
    every pod of the SubJob, running ones included."""
    problem = engine.problem
    request = np.zeros(len(problem.resources))
    for g in problem.subjobs[s].groups:
        pods = problem.group_size(g)
        request += pods * problem.group_request[g].astype(float)
    active = np.flatnonzero((request > 0) & (engine.weights > 0))
    used = engine.state.hn_used[np.ix_(candidates, active)] + request[active]
    alloc = engine.state.hn_alloc[np.ix_(candidates, active)]
    weights = engine.weights[active]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(alloc > 0, used / np.where(alloc > 0, alloc, 1), 0.0)
    overflow = (used > alloc).any(axis=1) if active.size else np.zeros(candidates.size, dtype=bool)
    terms = ratio * weights / weights.sum() if active.size else np.zeros((candidates.size, 0))
    terms[overflow] = 0.0
    return terms, [problem.resources[r] for r in active], overflow


def plot_hypernode_scores(engine: Any, subjob: int | str, candidates: Sequence[int | str],
                          ax: Any = None) -> Any:
    """Bar chart of ``engine.hypernode_scores(subjob, candidates)``, split into its parts.

    ``engine`` is a :class:`~toposolve.engines.volcano.HeuristicEngine` (in whatever state it
    is: freshly built, or after placing some jobs); ``subjob`` a SubJob index or id;
    ``candidates`` HyperNode indices or names, e.g. one gradient from
    ``engine.subjob_gradients``. Each bar stacks the weighted bin-packing term of every
    resource (how full the HyperNode would be with the SubJob in it; 0 if anything overflows)
    and, for the candidates tied at the top only, Volcano's task-count tie-break. The winner —
    the highest score, ties to the first candidate as the engine takes them — is outlined and
    starred. With more than 40 candidates the 40 best are shown. Returns the Axes.
    """
    from matplotlib import colormaps
    from matplotlib.patches import Patch

    problem = engine.problem
    s = _subjob_index(problem, subjob)
    cand = _candidate_indices(problem, candidates)
    ax = axes_or_new(ax, (max(6.0, 0.55 * min(cand.size, MAX_BARS) + 2.5), 3.6))
    if cand.size == 0:
        ax.text(0.5, 0.5, "no candidates", ha="center", va="center", transform=ax.transAxes)
        return ax
    total = np.asarray(engine.hypernode_scores(s, cand), dtype=float)
    terms, resources, overflow = _binpack_terms(engine, s, cand)
    tie = np.clip(total - terms.sum(axis=1), 0.0, None)
    winner = int(np.argmax(total))
    shown = np.arange(cand.size)
    if cand.size > MAX_BARS:
        shown = np.sort(np.argsort(-total, kind="stable")[:MAX_BARS])
    x = np.arange(shown.size)
    bottom = np.zeros(shown.size)
    palette = colormaps["tab10"].colors
    handles = []
    for r, name in enumerate(resources):
        colour = palette[r % len(palette)]
        ax.bar(x, terms[shown, r], bottom=bottom, color=colour, width=0.7)
        bottom += terms[shown, r]
        handles.append(Patch(facecolor=colour, label=f"bin-packing: {name}"))
    if tie.any():
        ax.bar(x, tie[shown], bottom=bottom, color="white", edgecolor=TIE_BREAK, hatch="///",
               width=0.7)
        handles.append(Patch(facecolor="white", edgecolor=TIE_BREAK, hatch="///",
                             label="task-count tie-break"))
    topo = problem.topology
    for i, c in enumerate(shown.tolist()):
        if overflow[c]:
            ax.text(x[i], 0.02, "does not fit", rotation=90, ha="center", va="bottom", fontsize=7,
                    color="#555555")
        else:
            ax.text(x[i], total[c] + 0.02, f"{total[c]:.3f}", ha="center", va="bottom", fontsize=7)
        if c == winner:
            ax.bar(x[i], total[c], width=0.7, fill=False, edgecolor="black", linewidth=2)
            ax.text(x[i], total[c] + 0.1, "★ winner", ha="center", va="bottom", fontsize=8,
                    fontweight="bold")
    labels = [f"{topo.names[cand[c]]}\ntier {int(topo.tier[cand[c]])}" for c in shown.tolist()]
    ax.set_xticks(x, labels, fontsize=7, rotation=0 if shown.size <= 8 else 90)
    ax.set_ylim(0, max(1.0, float(total.max())) + 0.25)
    ax.set_ylabel("HyperNode score (0..1)", fontsize=8)
    more = f" (best {shown.size} of {cand.size})" if shown.size < cand.size else ""
    ax.set_title(
        f"why {topo.names[cand[winner]]} won for SubJob {problem.subjobs[s].id}{more}", fontsize=9
    )
    if handles:
        ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  frameon=False)
    ax.grid(axis="y", alpha=0.3)
    return ax
