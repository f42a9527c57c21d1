"""The plot functions: each draws on a given Axes and on none, saves a PNG, and draws what the
instance and a hand-made plan say (expected shares and scores worked out by hand below)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from builders import example1_tree, gang, hard, instance, nodes  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from toposolve.analysis.compare import Comparison  # noqa: E402
from toposolve.core.plan import Binding, JobPlacement, Plan  # noqa: E402
from toposolve.core.problem import compile_problem  # noqa: E402
from toposolve.engines.volcano import HeuristicEngine  # noqa: E402
from toposolve.policy.metrics import plan_metrics  # noqa: E402
from toposolve.policy.profiles import Profile  # noqa: E402
from toposolve.report.plots import (  # noqa: E402
    _colors,  # noqa: E402
    plot_comparison,
    plot_hypernode_scores,
    plot_progress,
    plot_tier_utilisation,
    plot_topology,
)
from toposolve.report.plots.progress import _split_stages  # noqa: E402
from toposolve.report.plots.side_by_side import instance_title, pending_lines  # noqa: E402
from toposolve.report.plots.topology import STRIP_HEIGHT  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def example1_problem():
    """Seed 000 Example 1 (8 nodes of 8 GPUs / 64 cpu, s0..s3 → s4, s5 → s6) with two jobs:
    ``train`` (4 × 8 GPUs, pending) and ``busy`` (1 pod of 32 cpu running on node2, in s1)."""
    jobs = [
        gang("train", 4, gpus=8, topology=hard(2)),
        gang("busy", 1, gpus=0, cpu=32, running={0: "node2"}),
    ]
    return compile_problem(instance(nodes(8), example1_tree(), jobs))


def train_on_s0_s1() -> Plan:
    """``train``'s four pods on node0, node1 (s0), node3 and node4 (s1, s2): domain s6."""
    spots = ["node0", "node1", "node3", "node4"]
    bindings = [Binding(f"default/train-worker-{i}", n) for i, n in enumerate(spots)]
    return Plan(engine="by-hand", status="FEASIBLE", bindings=bindings)


def saved_png(figure, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    figure.savefig(path)
    assert path.read_bytes()[:8] == PNG_MAGIC
    return path


def rects_of(ax, colour) -> list[tuple[float, float, float, float]]:
    """(x0, y0, width, height) of every filled rectangle drawn in ``colour``."""
    out = []
    for coll in ax.collections:
        if not isinstance(coll, PolyCollection):
            continue
        faces = coll.get_facecolors()
        for k, path in enumerate(coll.get_paths()):
            face = faces[k % len(faces)] if len(faces) else None
            if face is None or not np.allclose(face, to_rgba(colour)):
                continue
            v = path.vertices[:4]
            x0, y0 = v[:, 0].min(), v[:, 1].min()
            out.append((x0, y0, v[:, 0].max() - x0, v[:, 1].max() - y0))
    return sorted(out)


# ---- plot_topology -------------------------------------------------------------------------
def test_topology_draws_on_a_given_axes_and_on_none(tmp_path):
    problem = example1_problem()
    fig, ax = plt.subplots()
    assert plot_topology(problem, train_on_s0_s1(), ax) is ax
    own = plot_topology(problem, train_on_s0_s1())
    assert own is not ax and own.figure is not fig
    saved_png(own.figure, tmp_path, "topology.png")
    assert ax.collections
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["s0", "s1", "s2", "s3"]  # the tier-1 cells, left to right
    rows = " ".join(t.get_text() for t in ax.get_yticklabels())
    assert "tier 1" in rows and "tier 2" in rows and "tier 3" in rows and "cluster" in rows
    assert {"s4", "s5", "s6"} <= {t.get_text() for t in ax.texts}


def test_topology_shares_per_tier1_cell():
    """Cells are 2 nodes (x 0-2 s0, 2-4 s1, 4-6 s2, 6-8 s3). train takes all 8 GPUs of node0,
    node1, node3, node4: s0 is full (share 1), s1 and s2 half (one node of two); busy's 32 of
    64 cpu on node2 is half a node, a quarter of s1."""
    problem = example1_problem()
    ax = plot_topology(problem, train_on_s0_s1())
    train = ax.get_legend().get_patches()[0].get_facecolor()
    strip = [r for r in rects_of(ax, train) if r[1] < STRIP_HEIGHT]
    assert [(x, round(h / STRIP_HEIGHT, 3)) for x, _, _, h in strip] == [
        (0, 1.0),
        (2, 0.5),
        (4, 0.5),
    ]
    running = rects_of(ax, _colors.RUNNING)
    assert [(x, round(h / STRIP_HEIGHT, 3)) for x, _, _, h in running] == [(2, 0.25)]
    # train spans s0..s2, so its domain is s6 (x 0-8): one band in s6's box
    bands = [r for r in rects_of(ax, train) if r[1] > STRIP_HEIGHT]
    assert len(bands) == 1 and bands[0][0] < 0.2 and bands[0][2] > 7.8
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["default/train", "running before the plan", "idle"]


def test_topology_hatches_capacity_freed_by_evictions():
    """busy (32 of node2's 64 cpu) is evicted and train takes node2 and node3: s1 ends with no
    running pod, train at share 1, and half of node2 — a quarter of s1 — freed by evictions."""
    problem = example1_problem()
    plan = Plan(
        "by-hand",
        "FEASIBLE",
        bindings=[
            Binding(f"default/train-worker-{i}", f"node{2 + i}", nominated=True) for i in range(2)
        ],
        evictions=[Binding("default/busy-worker-0", "node2")],
    )
    ax = plot_topology(problem, plan)
    assert rects_of(ax, _colors.RUNNING) == []
    hatched = [c for c in ax.collections if c.get_hatch()]
    assert len(hatched) == 1
    (path,) = hatched[0].get_paths()
    x0, y0 = path.vertices[:4].min(axis=0)
    x1, y1 = path.vertices[:4].max(axis=0)
    assert (x0, x1, y0) == (2, 4, 0) and round((y1 - y0) / STRIP_HEIGHT, 3) == 0.25
    assert "freed by evictions" in [t.get_text() for t in ax.get_legend().get_texts()]


def hatched_heights(ax, face) -> list[tuple[float, float]]:
    """(x0, height as a share of the strip) of the hatched rectangles filled with ``face``."""
    return [(x, round(h / STRIP_HEIGHT, 3)) for x, _, _, h in rects_of(ax, face)]


def test_topology_hatches_idle_capacity_no_new_pod_may_take():
    """node3 is cordoned (half of s1 idle and unusable); node6 and node7 carry a NoSchedule
    taint nobody tolerates, and busy runs 4 of node6's 8 GPUs: (0.5 + 1) / 2 of s3 is unusable."""
    from toposolve.core.instance import Taint

    node_list = nodes(8)
    node_list[3].unschedulable = True
    for i in (6, 7):
        node_list[i].taints = [Taint(key="gpu", value="bad", effect="NoSchedule")]
    jobs = [gang("busy", 1, gpus=4, running={0: "node6"}), gang("train", 2)]
    ax = plot_topology(compile_problem(instance(node_list, example1_tree(), jobs)))
    assert hatched_heights(ax, _colors.UNSCHEDULABLE[0]) == [(2, 0.5)]
    assert hatched_heights(ax, _colors.TAINTED[0]) == [(6, 0.75)]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert list(_colors.UNAVAILABLE_LABELS) == legend[-3:-1]


def test_a_taint_some_pending_pod_tolerates_is_not_hatched():
    from toposolve.core.instance import PodConstraints, Taint, Toleration

    node_list = nodes(8)
    node_list[7].taints = [Taint(key="gpu", value="bad", effect="NoSchedule")]
    tolerant = gang("tolerant", 1)
    tolerant.tasks[0].constraints = PodConstraints(
        tolerations=[Toleration(key="gpu", operator="Exists")]
    )
    ax = plot_topology(compile_problem(instance(node_list, example1_tree(), [tolerant])))
    assert hatched_heights(ax, _colors.TAINTED[0]) == []
    assert not set(_colors.UNAVAILABLE_LABELS) & {t.get_text() for t in ax.get_legend().get_texts()}


def test_topology_without_a_plan_shows_only_running_pods():
    problem = example1_problem()
    ax = plot_topology(problem)
    assert "before planning" in ax.get_title()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "running before the plan",
        "idle",
    ]


def test_topology_folds_tiers_with_too_many_cells():
    """With at most 2 cells allowed, the strip is tier 2 (s4, s5): the tier-1 row is folded."""
    problem = example1_problem()
    ax = plot_topology(problem, train_on_s0_s1(), max_cells=2)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["s4", "s5"]
    train = ax.get_legend().get_patches()[0].get_facecolor()
    strip = [r for r in rects_of(ax, train) if r[1] < STRIP_HEIGHT]
    # s4: node0, node1, node3 full of 4 nodes = 0.75; s5: node4 of 4 = 0.25
    assert [(x, round(h / STRIP_HEIGHT, 3)) for x, _, _, h in strip] == [(0, 0.75), (4, 0.25)]


def test_topology_names_at_most_the_distinct_jobs_in_the_legend():
    jobs = [gang(f"j{k:02d}", 1, gpus=1) for k in range(25)]
    problem = compile_problem(instance(nodes(8), example1_tree(), jobs))
    plan = Plan(
        "by-hand",
        "FEASIBLE",
        bindings=[Binding(f"default/j{k:02d}-worker-0", f"node{k % 8}") for k in range(25)],
    )
    ax = plot_topology(problem, plan)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len([t for t in texts if t.startswith("default/")]) == _colors.DISTINCT
    assert f"{25 - _colors.DISTINCT} other jobs (tan tones)" in texts


def test_topology_and_utilisation_without_hypernodes():
    """No HyperNodes: the virtual root is the only cell. a's 2 pods × 4 of 8 GPUs on 2 of the
    4 nodes fill a quarter of it."""
    problem = compile_problem(instance(nodes(4), [], [gang("a", 2, gpus=4)]))
    plan = Plan(
        "by-hand",
        "FEASIBLE",
        bindings=[Binding(f"default/a-worker-{i}", f"node{i}") for i in range(2)],
    )
    ax = plot_topology(problem, plan)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["(cluster)"]
    a = ax.get_legend().get_patches()[0].get_facecolor()
    assert [round(h / STRIP_HEIGHT, 3) for *_, h in rects_of(ax, a)] == [0.25]
    ax = plot_tier_utilisation(problem, plan)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["cluster\n(no HyperNodes)"]


# ---- plot_tier_utilisation -----------------------------------------------------------------
def test_tier_utilisation_points_are_the_hypernodes_gpu_use(tmp_path):
    """After the plan (GPUs only): s0 1, s1 ½, s2 ½, s3 0; s4 ¾, s5 ¼; s6 (the whole cluster) ½."""
    problem = example1_problem()
    fig, ax = plt.subplots()
    assert plot_tier_utilisation(problem, train_on_s0_s1(), ax) is ax
    saved_png(plot_tier_utilisation(problem, train_on_s0_s1()).figure, tmp_path, "util.png")
    scatters = [c for c in ax.collections if c.get_offsets().shape[0]]
    after = [sorted(np.round(c.get_offsets()[:, 1], 3)) for c in scatters[1::2]]
    before = [sorted(np.round(c.get_offsets()[:, 1], 3)) for c in scatters[0::2]]
    assert after == [[0, 0.5, 0.5, 1.0], [0.25, 0.75], [0.5]]
    assert before == [[0, 0, 0, 0], [0, 0], [0]]  # busy asks for no GPU
    assert [t.get_text().split("\n")[0] for t in ax.get_xticklabels()] == [
        "tier 1",
        "tier 2",
        "tier 3",
    ]
    assert "nvidia.com/gpu" in ax.get_ylabel()
    assert any("cluster 50%" in t.get_text() for t in ax.texts)


def test_tier_utilisation_without_a_plan_shows_one_series():
    ax = plot_tier_utilisation(example1_problem(), None)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["now"]


# ---- plot_progress -------------------------------------------------------------------------
def test_progress_single_stage(tmp_path):
    events = [(10, 40, 0.1), (20, 35, 0.5), (30, 30, 1.2)]
    fig, ax = plt.subplots()
    assert plot_progress(events, ax) is ax
    saved_png(plot_progress(events).figure, tmp_path, "progress.png")
    objective, bound = (
        line for line in ax.get_lines() if line.get_label() in ("objective", "bound")
    )
    assert list(objective.get_ydata()) == [10, 20, 30, 30]
    assert list(bound.get_ydata()) == [40, 35, 30, 30]
    assert ax.get_ylabel() == "objective / bound"
    assert "(proved): 30" in ax.get_title()


def test_progress_stages_get_one_panel_each():
    events = [(100, 900, 0.2), (100, 100, 0.5), (35, -62, 0.8), (3, 0, 1.2)]
    stages = [
        {"stage": "placed", "status": "OPTIMAL", "objective": 100, "bound": 100.0},
        {"stage": "spread", "status": "OPTIMAL", "objective": 35, "bound": 35.0},
        {"stage": "fragmentation", "status": "FEASIBLE", "objective": 3, "bound": 0.0},
    ]
    ax = plot_progress(events, stages=stages, end=2.0)
    panels = ax.child_axes
    assert [p.get_title() for p in panels] == [
        "placed (OPTIMAL): 100",
        "spread (OPTIMAL): 35",
        "fragmentation (FEASIBLE): 3",
    ]
    # spread: one event with bound -62, then the final bound 35 at the next stage's start
    spread_bound = next(line for line in panels[1].get_lines() if line.get_label() == "bound")
    assert list(spread_bound.get_xdata()) == [0.8, 1.2] and list(spread_bound.get_ydata()) == [
        -62,
        35,
    ]


def test_split_stages_without_labels_uses_what_one_solve_cannot_do():
    # maximise 10 → 20 (bound 50 → 40), then a minimisation starts (bound below objective)
    events = [(10, 50, 0.1), (20, 40, 0.2), (7, 1, 0.3), (5, 2, 0.4)]
    assert [len(s.events) for s in _split_stages(events)] == [2, 2]
    # explicit labels win
    labelled = [(1, 9, 0.1, "a"), (2, 8, 0.2, "b"), (3, 7, 0.3, "b")]
    assert [s.label for s in _split_stages(labelled)] == ["a", "b"]


def test_progress_without_events_says_so():
    ax = plot_progress([])
    assert any(t.get_text() == "no progress events" for t in ax.texts)


# ---- plot_hypernode_scores -----------------------------------------------------------------
def cpu_problem():
    """Example 1 with cpu-only jobs: ``two`` asks 2 × 16 cpu; ``busy`` holds 32 cpu on node2."""
    jobs = [
        gang("two", 2, gpus=0, cpu=16, topology=hard(1)),
        gang("busy", 1, gpus=0, cpu=32, running={0: "node2"}),
    ]
    return compile_problem(instance(nodes(8), example1_tree(), jobs))


def test_hypernode_scores_explain_the_winner(tmp_path):
    """Bin-packing (cpu weight 1, memory not requested): (used + 32) / 128 cpu per tier-1
    HyperNode: s0 0.25, s1 (32 used) 0.5, s2 0.25, s3 0.25 — s1 wins."""
    problem = cpu_problem()
    engine = HeuristicEngine(problem, Profile())
    fig, ax = plt.subplots()
    assert plot_hypernode_scores(engine, "default/two", ["s0", "s1", "s2", "s3"], ax) is ax
    saved_png(plot_hypernode_scores(engine, 0, [0, 1, 2, 3]).figure, tmp_path, "scores.png")
    heights = [round(p.get_height(), 3) for p in ax.patches[:4]]
    assert heights == [0.25, 0.5, 0.25, 0.25]
    assert "why s1 won" in ax.get_title()
    winner = next(t for t in ax.texts if "winner" in t.get_text())
    assert winner.get_position()[0] == 1
    assert [t.get_text().split("\n")[0] for t in ax.get_xticklabels()] == ["s0", "s1", "s2", "s3"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["bin-packing: cpu"]


def test_hypernode_scores_mark_what_does_not_fit():
    """4 × 40 cpu = 160 > 128 in a tier-1 HyperNode but fits a tier-2 one (256)."""
    jobs = [gang("big", 4, gpus=0, cpu=40, topology=hard(2))]
    problem = compile_problem(instance(nodes(8), example1_tree(), jobs))
    engine = HeuristicEngine(problem, Profile())
    ax = plot_hypernode_scores(engine, "default/big", ["s0", "s4"])
    assert sum(t.get_text() == "does not fit" for t in ax.texts) == 1
    assert "why s4 won" in ax.get_title()


def test_hypernode_scores_reject_unknown_names():
    engine = HeuristicEngine(cpu_problem(), Profile())
    with pytest.raises(ValueError, match="no HyperNode"):
        plot_hypernode_scores(engine, 0, ["nope"])
    with pytest.raises(ValueError, match="no SubJob"):
        plot_hypernode_scores(engine, "default/nope", ["s0"])


# ---- plot_comparison -----------------------------------------------------------------------
def two_plan_comparison(problem, source="<test>"):
    plans = {"by-hand": train_on_s0_s1(), "nothing": Plan("nothing", "FEASIBLE")}
    metrics = [plan_metrics(problem, plan) for plan in plans.values()]
    return Comparison(instance=source, metrics=metrics, plans=plans)


def test_comparison_figure(tmp_path):
    problem = example1_problem()
    path = tmp_path / "cmp.png"
    fig = plot_comparison(two_plan_comparison(problem), path, problem=problem)
    assert path.read_bytes()[:8] == PNG_MAGIC
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0].startswith("by-hand: FEASIBLE") and titles[1].startswith("nothing: FEASIBLE")
    jobs_panel = next(ax for ax in fig.axes if ax.get_title() == "jobs placed ↑")
    assert [t.get_text() for t in jobs_panel.texts] == ["1", "0"]
    accel_panel = next(ax for ax in fig.axes if ax.get_title().startswith("accelerators placed ↑"))
    assert [t.get_text() for t in accel_panel.texts] == ["32", "0"]  # 4 pods × 8 GPUs, one priority
    assert [t.get_text() for t in jobs_panel.get_xticklabels()] == ["by-hand", "nothing"]


def test_comparison_lists_pending_jobs_and_is_titled_by_the_instance_name():
    problem = example1_problem()
    cmp = two_plan_comparison(problem, source="/very/long/path/to/cluster-dump.yaml")
    cmp.plans["nothing"].jobs = [
        JobPlacement(job="default/train", placed=False, reason="no room " * 20)
    ]
    fig = plot_comparison(cmp, problem=problem)
    assert fig._suptitle.get_text() == "cluster-dump: by-hand vs nothing"
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert "no job pending" in texts
    (listed,) = [t for t in texts if t.startswith("pending (1):")]
    lines = listed.splitlines()
    assert (
        lines[1].startswith("• default/train: no room no room") and len(lines) == 3
    )  # wrapped once
    assert all(len(line) <= 95 for line in lines)


def test_pending_lines_count_what_they_leave_out():
    plan = Plan(
        "x",
        "FEASIBLE",
        jobs=[JobPlacement(job=f"default/j{i}", placed=False, reason="r") for i in range(9)],
    )
    lines = pending_lines(plan, shown=2)
    assert lines == [
        "pending (9):",
        "• default/j0: r",
        "• default/j1: r",
        "… 7 more (toposolve compare --json lists them)",
    ]
    assert instance_title("a/b/x.yaml, c/dump") == "x + dump"


def test_comparison_stacks_accelerators_by_priority(tmp_path):
    """hi (priority 100) places 2 × 8 GPUs, lo (priority 1) 1 × 4: the bar is 16 + 4 = 20."""
    from toposolve.core.instance import PriorityClass

    jobs = [gang("hi", 2, priority_class="high"), gang("lo", 1, gpus=4, priority_class="low")]
    classes = [PriorityClass(name="high", value=100), PriorityClass(name="low", value=1)]
    problem = compile_problem(instance(nodes(8), example1_tree(), jobs, classes))
    bindings = [
        Binding("default/hi-worker-0", "node0"),
        Binding("default/hi-worker-1", "node1"),
        Binding("default/lo-worker-0", "node2"),
    ]
    plan = Plan("by-hand", "FEASIBLE", bindings=bindings)
    cmp = Comparison(
        instance="<test>", metrics=[plan_metrics(problem, plan)], plans={"by-hand": plan}
    )
    fig = plot_comparison(cmp, problem=problem)
    panel = next(ax for ax in fig.axes if ax.get_title().startswith("accelerators placed ↑"))
    assert [round(p.get_height()) for p in panel.patches] == [16, 4]
    assert [t.get_text() for t in panel.texts] == ["prio 100", "prio 1", "20"]


def test_comparison_reloads_the_instance_from_its_source(tmp_path):
    source = str(REPO / "instances" / "seed004-tree.yaml")
    import toposolve

    problem = compile_problem(toposolve.load_instance(source))
    plan = Plan("empty", "FEASIBLE")
    cmp = Comparison(instance=source, metrics=[plan_metrics(problem, plan)], plans={"empty": plan})
    fig = plot_comparison(cmp, tmp_path / "x.png")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == [
        "rack-0",
        "rack-1",
        "rack-2",
        "rack-3",
    ]
    cmp.instance = "<generate superpod seed=0>"
    with pytest.raises(ValueError, match="pass problem="):
        plot_comparison(cmp)


def test_cli_compare_writes_the_plot(tmp_path, capsys):
    from toposolve.cli.main import main

    out = tmp_path / "out.png"
    code = main(
        [
            "compare",
            str(REPO / "instances" / "seed004-tree.yaml"),
            "--engines",
            "heuristic",
            "--plot",
            str(out),
        ]
    )
    assert code == 0
    assert out.read_bytes()[:8] == PNG_MAGIC
    assert "heuristic" in capsys.readouterr().out
