"""``plot_progress``: CP-SAT's objective and bound over time, stage by stage."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toposolve.report.plots._figure import axes_or_new, compact

OBJECTIVE = "#1f77b4"
BOUND = "#d62728"


@dataclass
class _Stage:
    events: list[tuple[float, float, float]] = field(default_factory=list)
    label: str | None = None
    final: Mapping[str, Any] | None = None  # the stage's entry of plan.stats["stages"]


def _starts_new_stage(previous: tuple[float, float], objective: float, bound: float) -> bool:
    """What cannot happen inside one CP-SAT solve: the sense flips (bound ≥ objective when
    maximising, ≤ when minimising), the objective gets worse or the bound gets looser."""
    p_obj, p_bound = previous
    was_max, is_max = p_bound >= p_obj, bound >= objective
    if was_max != is_max and p_bound != p_obj and bound != objective:
        return True
    if is_max:
        return objective < p_obj or bound > p_bound
    return objective > p_obj or bound < p_bound


def _split_stages(events: Sequence[Sequence[Any]],
                  stages: Sequence[Mapping[str, Any]] | None = None) -> list[_Stage]:
    """Group progress events into solver stages (one CP-SAT solve each).

    Events are ``(objective, bound, seconds)``, optionally with a 4th item, a stage label
    (consecutive events of one label form a stage). Otherwise a stage ends after the event
    that reaches its final objective (unless the next event repeats that value) (``stages``:
    ``plan.stats["stages"]``, whose entries have
    ``stage`` and ``objective``; CP-SAT reports only improving solutions, so that is the
    stage's last event), or where :func:`_starts_new_stage` says a new solve began. When
    ``stages`` describes the segments found one to one, they get its labels and final values.
    """
    finals = [s for s in (stages or []) if s.get("objective") is not None]
    out: list[_Stage] = []
    previous: tuple[float, float, Any] | None = None
    reached = False  # the current stage has reached its final objective
    for event in events:
        if getattr(event, "kind", "solution") != "solution":
            continue  # heartbeats and stage ends repeat what the solutions show
        objective, bound, seconds = (float(v) for v in event[:3])
        label = event[3] if len(event) > 3 else None
        if previous is None:
            new = True
        elif label is not None or previous[2] is not None:
            new = label != previous[2]
        else:
            # a repeated objective is the same solve even after reaching the final value
            new = (reached and objective != previous[0]) or _starts_new_stage(previous[:2],
                                                                              objective, bound)
        if new:
            out.append(_Stage(label=None if label is None else str(label)))
        out[-1].events.append((objective, bound, seconds))
        k = len(out) - 1
        reached = k < len(finals) and objective == float(finals[k]["objective"])
        previous = (objective, bound, label)
    if finals and len(finals) == len(out):
        for stage, final in zip(out, finals, strict=True):
            stage.label = stage.label or str(final.get("stage", ""))
            stage.final = final
    return out


def _tick(value: float) -> str:
    """Axis tick: ``133.4M`` for large values, plain ``%g`` otherwise (no milli prefixes)."""
    return compact(value) if abs(value) >= 1e6 else f"{value:g}"


def _stage_title(k: int, stage: _Stage) -> str:
    objective, bound, _ = stage.events[-1]
    status = ""
    if stage.final is not None:
        objective = float(stage.final["objective"])
        status = f" ({stage.final.get('status', '')})" if stage.final.get("status") else ""
    elif objective == bound:
        status = " (proved)"
    name = stage.label or f"stage {k + 1}"
    return f"{name}{status}: {compact(objective)}"


def _draw_stage(ax: Any, stage: _Stage, end: float, *, ylabel: bool) -> None:
    from matplotlib.ticker import FuncFormatter

    times = [t for _, _, t in stage.events]
    objective = [o for o, _, _ in stage.events]
    bound = [b for _, b, _ in stage.events]
    ax.plot(times, objective, "o", color=OBJECTIVE, markersize=3)
    ax.plot(times, bound, "x", color=BOUND, markersize=4)
    if stage.final is not None and stage.final.get("bound") is not None:
        # the solve's last word: its final bound (proved optimal when equal) at the stage's end
        times, objective = times + [end], objective + [float(stage.final["objective"])]
        bound = bound + [float(stage.final["bound"])]
        ax.plot([end], [bound[-1]], "s", color=BOUND, markersize=4, fillstyle="none")
    else:
        times, objective, bound = times + [end], objective + objective[-1:], bound + bound[-1:]
    ax.step(times, objective, where="post", color=OBJECTIVE, label="objective")
    ax.step(times, bound, where="post", color=BOUND, linestyle="--", label="bound")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _tick(v)))
    ax.tick_params(labelsize=7)
    ax.set_xlabel("seconds since the solve started", fontsize=7)
    if ylabel:
        ax.set_ylabel("objective / bound", fontsize=8)
    ax.grid(alpha=0.3)


def plot_progress(events: Sequence[Sequence[Any]], ax: Any = None, *,
        stages: Sequence[Mapping[str, Any]] | None = None, end: float | None = None) -> Any:
    """Objective (solid) and bound (dashed) of each improving solution over time; returns the Axes.

    ``events`` are what ``toposolve.solve(..., progress=events.append)`` collects
    (:class:`~toposolve.engines.contract.ProgressEvent`, whose first items are ``(objective,
    bound, seconds, stage)``), or plain ``(objective, bound, seconds)`` tuples. toposolve solves
    its objective stage by stage (placed, then
    spread, …), each stage a new CP-SAT solve on its own scale, so each stage gets its own
    panel inside ``ax``, side by side in time order. Pass ``stages=plan.stats["stages"]`` to
    name the stages, cut them exactly and draw each one's final bound (a square at the stage's
    end: CP-SAT reports the bound only with solutions, so a proof comes after the last event).
    A stage is drawn until the next one starts (the last until ``end``, or its last event).
    """
    ax = axes_or_new(ax, (8, 3.2))
    split = _split_stages(events, stages)
    ax.set_title("CP-SAT progress", fontsize=9)
    if not split:
        ax.text(0.5, 0.5, "no progress events", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
        return ax
    last = split[-1].events[-1][2]
    ends = [s.events[0][2] for s in split[1:]] + [max(last, end if end is not None else last)]
    if len(split) == 1:
        _draw_stage(ax, split[0], ends[0], ylabel=True)
        ax.set_title(f"CP-SAT progress — {_stage_title(0, split[0])}", fontsize=9)
        ax.legend(fontsize=7, loc="best")
        return ax
    ax.set_axis_off()  # the panels live inside ax, so the caller's layout is unchanged
    count = len(split)
    for k, (stage, stage_end) in enumerate(zip(split, ends, strict=True)):
        panel = ax.inset_axes([k / count + 0.09 / count + 0.02, 0.14, 0.86 / count - 0.02, 0.74])
        _draw_stage(panel, stage, stage_end, ylabel=k == 0)
        panel.set_title(_stage_title(k, stage), fontsize=8)
        if k == 0:
            panel.legend(fontsize=7, loc="best")
    return ax
