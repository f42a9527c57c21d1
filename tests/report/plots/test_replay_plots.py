"""Replay plots: one line per engine on a given Axes, and the whole figure as a PNG."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from toposolve.generate import generate  # noqa: E402
from toposolve.report.plots import (  # noqa: E402
    plot_allocation_curve,
    plot_delay_cdf,
    plot_replay,
    plot_replay_timeline,
)
from toposolve.sim.replay import replay  # noqa: E402
from toposolve.sim.replay.synthetic import synthetic_trace  # noqa: E402


@pytest.fixture(scope="module")
def records():
    cluster = generate("superpod", nodes=32, load=0.0, leaf_size=8, fanout=(2,))
    trace = synthetic_trace(cluster, jobs=25, load=1.2, duration="20m", seed=5)
    return [
        replay(cluster, trace, "volcano", cycle=30),
        replay(cluster, trace, "volcano", cycle=120).to_dict(),
    ]


@pytest.mark.parametrize("plot", [plot_replay_timeline, plot_delay_cdf, plot_allocation_curve])
def test_one_line_per_engine_on_the_given_axes(records, plot):
    fig, ax = plt.subplots()
    assert plot(records, ax) is ax
    assert len([line for line in ax.get_lines() if line.get_label() in ("volcano",)]) == 2
    plt.close(fig)


def test_timeline_of_another_metric_and_reference_ticks(records):
    ax = plot_replay_timeline(records, metric="pending_jobs")
    assert ax.get_ylabel() == "pending jobs"
    ax = plot_allocation_curve(records, reference={"FGD": 0.954})
    assert any("FGD 95.4%" in t.get_text() for t in ax.texts)
    plt.close("all")


def test_whole_figure_png(records, tmp_path):
    path = tmp_path / "replay.png"
    fig = plot_replay(records, path)
    assert len(fig.axes) == 4 and path.stat().st_size > 10_000
    plt.close(fig)
