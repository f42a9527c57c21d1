"""The comparison of engines as a text table (``toposolve compare``)."""

from __future__ import annotations

from typing import Any

from toposolve.analysis.compare import Comparison, JobDiff
from toposolve.report.tables import format_table


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict):  # per priority value, highest first: "256@1000 / 64@10"
        return " / ".join(f"{n}@{p}" for p, n in value.items()) or "-"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:.1f}"
    return str(value)


ROWS: tuple[tuple[str, str], ...] = (
    ("status", "status"),
    ("jobs placed", "jobs_placed"),
    ("jobs pending", "jobs_pending"),
    ("pods bound", "pods_bound"),
    ("accelerators placed", "accelerators_placed"),
    ("accelerators by priority", "accelerators_placed_by_priority"),
    ("accelerator utilisation", "utilisation"),
    ("mean job domain tier", "mean_domain_tier"),
    ("mean pod-pair LCA tier", "mean_pair_lca_tier"),
    ("free whole leaf domains", "free_leaves"),
    ("free whole domains a tier up", "free_tier2"),
    ("largest free domain (nodes)", "largest_free_domain_nodes"),
    ("evictions", "evictions"),
    ("broken gangs", "broken_gangs"),
    ("gap", "gap"),
    ("wall time (s)", "wall_time_s"),
)


COMM_ROWS: tuple[tuple[str, str], ...] = (
    ("cross-leaf ring edges", "cross_leaf_ring_edges"),
    ("largest DP span tier", "largest_dp_span_tier"),
    ("comm cost", "comm_cost"),
)
"""Communication rows (docs/ranks.md): ``index order → Volcano's rule → ranked`` per engine."""


def _comm_cell(result: Comparison, engine: str, key: str) -> str:
    totals = result.comm.get(engine)
    if totals is None:
        return "-"
    sides = [s for s in ("index", "volcano", "ranked") if s in totals]
    return " → ".join(_fmt(totals[s][key]) for s in sides)


def format_comparison(result: Comparison, *, max_diffs: int = 30) -> str:
    """The human table: one column per engine, then the per-job differences.

    Parameters
    ----------
    result
        What :func:`toposolve.compare` returned.
    max_diffs
        The most jobs listed per section of differences.

    Returns
    -------
    str
        The table, without a trailing newline.
    """
    metrics = result.metrics
    table = [["metric", *(m.engine for m in metrics)]]
    unit = metrics[0].accelerator_label if metrics else "accelerators"  # one problem
    table += [[label.replace("accelerators", unit), *(_fmt(getattr(m, attr)) for m in metrics)]
              for label, attr in ROWS]
    if result.comm:
        table += [[f"{label} (index → Volcano → ranked)", *(_comm_cell(result, m.engine, key)
                                                  for m in metrics)]
                  for label, key in COMM_ROWS]
    stage_names = list(metrics[0].objective_stages) if metrics else []
    table += [
        [f"objective: {stage}", *(_fmt(m.objective_stages.get(stage)) for m in metrics)]
        for stage in stage_names
    ]
    width = max(len(row[0]) for row in table) + 2
    col = max(14, *(len(cell) + 2 for row in table[:len(ROWS) + 1 + len(COMM_ROWS)]
                    for cell in row[1:]))
    lines = [f"instance: {result.instance}"]
    lines += [f"{e}: refused: {why}" for e, why in result.refused.items()]
    lines += format_table(table, widths=[width] + [col] * len(metrics), left={0},
                          sep="").splitlines()
    sections = (("jobs placed differently", ("placement", "tier")),
                ("jobs pending in every engine, for different reasons", ("reason",)))
    for title, kinds in sections:
        lines.extend(_diff_section(title, [d for d in result.diffs if d.kind in kinds], max_diffs))
    same_tier = sum(d.kind == "domain" for d in result.diffs)
    if same_tier:
        jobs = "job sits" if same_tier == 1 else "jobs sit"
        lines.append(f"{same_tier} more {jobs} in another HyperNode of the same tier (--json "
                     f"lists them)")
    return "\n".join(lines)


def _diff_section(title: str, diffs: list[JobDiff], max_diffs: int) -> list[str]:
    if not diffs:
        return []
    lines = ["", f"{title} ({len(diffs)}):"]
    for d in diffs[:max_diffs]:
        lines.append(f"  {d.job}")
        lines.extend(f"    {engine:>10}: {text}" for engine, text in d.per_engine.items())
    if len(diffs) > max_diffs:
        lines.append(f"  … {len(diffs) - max_diffs} more (use --json for all)")
    return lines
