"""``plot_defrag_moves``: before and after rows of the touched domains, one arrow per move,
names that do not overlap, no matplotlib warning, and ``toposolve defrag --plot``."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from toposolve.cli.main import main  # noqa: E402
from toposolve.core.plan import Plan  # noqa: E402
from toposolve.core.problem import compile_problem  # noqa: E402
from toposolve.defrag import defrag  # noqa: E402
from toposolve.formats.native.writer import write_native  # noqa: E402
from toposolve.generate.defrag import TARGET, defrag_family  # noqa: E402
from toposolve.report.plots import plot_defrag_moves  # noqa: E402
from toposolve.report.plots.defrag_moves import AFTER, BEFORE  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def case():
    fam = defrag_family(6, seed=3, k=6, lo=3, hi=4)
    plan = defrag(fam.instance, [TARGET])
    assert plan.moves and plan.bindings
    return fam.instance, compile_problem(fam.instance), plan


def bars(ax, colour, bottom_from, bottom_to):
    """(x centre, height) of the bars drawn in ``colour`` whose bottom lies in the range."""
    out = []
    for patch in ax.patches:
        if np.allclose(patch.get_facecolor(), to_rgba(colour)) and (
                bottom_from <= patch.get_y() < bottom_to) and patch.get_height() > 0:
            out.append((round(patch.get_x() + patch.get_width() / 2, 6), patch.get_height()))
    return sorted(out)


def test_draws_on_a_given_axes_and_on_none_without_warnings(case, tmp_path):
    _, problem, plan = case
    fig, ax = plt.subplots()
    assert plot_defrag_moves(problem, plan, ax) is ax
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        own = plot_defrag_moves(problem, plan)
        own.figure.savefig(tmp_path / "moves.png")
    assert own is not ax and (tmp_path / "moves.png").read_bytes()[:8] == PNG_MAGIC


def test_rows_show_the_target_only_after_and_one_arrow_per_move(case):
    _, problem, plan = case
    ax = plot_defrag_moves(problem, plan)
    handles = ax.get_legend().legend_handles
    colour = {h.get_label().split(" (")[0]: h.get_facecolor() for h in handles}
    target = colour[TARGET]
    after = [x for x, _ in bars(ax, target, AFTER, AFTER + 1)]
    assert len(after) == len({b.node for b in plan.bindings})  # one bar per node it lands on
    assert bars(ax, target, BEFORE, BEFORE + 1) == []  # it was pending before
    pairs = {(problem.pod_group[m.pod], m.source, m.to) for m in plan.moves}
    arrows = [c for c in ax.texts if getattr(c, "arrow_patch", None) is not None]
    assert len(arrows) == len(pairs)
    moved = plan.stats["defrag"]["moved_jobs"]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert all(f"{key} (moved)" in labels for key in moved) and f"{TARGET} (admitted)" in labels


def test_domain_names_do_not_overlap(case):
    _, problem, plan = case
    ax = plot_defrag_moves(problem, plan)
    renderer = ax.figure.canvas.get_renderer()
    labels = [t for t in ax.get_xticklabels() if t.get_text()]
    assert labels and all(t.get_text().startswith("rack") for t in labels)
    boxes = [t.get_window_extent(renderer) for t in labels]
    assert [(a, b) for a, b in itertools.combinations(boxes, 2) if a.overlaps(b)] == []


def test_a_plan_that_changes_nothing_says_so(case):
    _, problem, _ = case
    ax = plot_defrag_moves(problem, Plan("defrag-cpsat", "OPTIMAL"))
    assert any("moves and binds nothing" in t.get_text() for t in ax.texts)


def test_cli_defrag_writes_the_plot_and_says_where(case, tmp_path, capsys):
    instance, _, _ = case
    path = tmp_path / "cluster.yaml"
    write_native(instance, path)
    out = tmp_path / "moves.png"
    assert main(["defrag", str(path), "--admit", TARGET, "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG_MAGIC
    assert f"plot written to {out}" in capsys.readouterr().err
