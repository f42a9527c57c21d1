"""Volcano's network-topology scores (engines/volcano/scores.py) on hand-computed inputs."""

from __future__ import annotations

import numpy as np
import pytest

from toposolve.engines.volcano.scores import (
    add_task_num_tie_break,
    binpack_score,
    lca_node_scores,
    lca_tier_score,
    task_num_share,
    tier_weights,
)


def test_binpack_is_the_weighted_fill_ratio_and_zero_on_overflow():
    used = np.array([[0, 4], [0, 6], [0, 0]])
    alloc = np.array([[8, 8], [8, 8], [8, 0]])
    request = np.array([0, 2])  # asks for resource 1 only: resource 0 does not count
    score = binpack_score(used, alloc, request, np.array([1.0, 1.0]))
    assert score.tolist() == pytest.approx([6 / 8, 1.0, 0.0])  # row 2 overflows (alloc 0)
    assert binpack_score(used, alloc, request, np.array([1.0, 0.0])).tolist() == [
        0,
        0,
        0,
    ]  # no weight applies


def test_tier_weights_fade_from_tier_one():
    assert tier_weights(0, 4, 0.8).tolist() == pytest.approx([1.25, 1, 0.8, 0.64, 0.512])
    assert tier_weights(1, 3, 0.0).tolist() == [1, 0, 0]  # 0^0 = 1
    assert tier_weights(0, 2, 0.0).tolist() == [1, 0, 0]  # the limit instead of 0^-1


def test_lca_tier_score_falls_towards_the_root():
    assert lca_tier_score(np.array([1, 2, 3, 4]), 1, 4).tolist() == pytest.approx(
        [1, 2 / 3, 1 / 3, 0]
    )
    assert lca_tier_score(np.array([2]), 2, 2).tolist() == [1]  # a single tier


def test_task_share_breaks_ties_only_among_the_top_scores():
    share = task_num_share(np.array([1, 3, 0]), 4)
    assert share.tolist() == [0.25, 0.75, 0]
    assert task_num_share(np.array([1]), 0).tolist() == [0]
    assert add_task_num_tie_break(np.array([0.5, 0.5, 0.2]), share).tolist() == [0.75, 1.25, 0.2]
    assert add_task_num_tie_break(np.array([0.9, 0.5, 0.2]), share).tolist() == [
        0.9,
        0.5,
        0.2,
    ]  # no tie


def test_lca_node_scores_anchor_scores_one_and_no_hypernode_zero():
    scores = lca_node_scores(
        lca_tier=np.array([1.0, 2.0, np.nan, 3.0]),
        at_anchor=np.array([True, False, False, False]),
        min_tier=1,
        max_tier=3,
        share=np.zeros(4),
    )
    assert scores.tolist() == pytest.approx([1, 0.5, 0, 0])
