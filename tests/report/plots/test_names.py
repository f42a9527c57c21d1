"""Real-shaped names in the pictures (issue 21 §4): shortened, capped, never overlapping."""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import toposolve  # noqa: E402
from toposolve.report.plots import plot_comparison  # noqa: E402
from toposolve.report.plots._names import MAX_LABEL, short_names  # noqa: E402

INSTANCES = Path(__file__).resolve().parents[3] / "instances"


def test_shared_prefixes_and_suffixes_are_cut_at_separators():
    assert short_names(["top/spine-00/su-00", "top/spine-01/su-04"]) == ["spine-00/su-00",
                                                                          "spine-01/su-04"]
    assert short_names(["gpu-pool-node-0001.us-central1-a.c.proj.internal",
                        "gpu-pool-node-0002.us-central1-a.c.proj.internal"]) == ["0001", "0002"]
    assert short_names(["a", "b"]) == ["a", "b"]  # nothing shared
    long = short_names(["x" * 30 + "-left", "y" * 30 + "-right"])
    assert all(len(n) == MAX_LABEL and "…" in n for n in long)


def _overlaps(boxes) -> list:
    return [(a, b) for a, b in itertools.combinations(boxes, 2) if a.overlaps(b)]


@pytest.mark.parametrize("dump", ["kai-eks.yaml", "kueue-gke.yaml", "h100-dump.yaml",
                                  "default.yaml"])
def test_the_comparison_figure_of_a_bundled_dump_has_no_overlapping_tick_labels(dump, tmp_path):
    inst = toposolve.load_instance(INSTANCES / dump, warn=lambda _: None)
    result = toposolve.compare(inst, ("volcano",))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "constrained_layout not applied"
        fig = plot_comparison(result, tmp_path / "cmp.png")
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        labels = [t for t in ax.get_xticklabels() if t.get_text()]
        assert all(len(t.get_text()) <= MAX_LABEL for t in labels), dump
        assert _overlaps([t.get_window_extent(renderer) for t in labels]) == [], dump
