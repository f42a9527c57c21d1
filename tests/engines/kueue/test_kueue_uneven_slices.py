"""A podset of 6 pods in block slices of 4 (issue 23): Kueue places one whole slice in one block
and leaves the last 2 pods gated; every engine's plan passes the checker."""

from __future__ import annotations

import pytest
from scheduler_docs import kueue_docs, podset, workload, write_docs

import toposolve
from toposolve.formats.load import load_instance

LEVELS = ["block", "kubernetes.io/hostname"]


@pytest.fixture
def instance(tmp_path):
    """Four 4-CPU nodes, two per block; 6 one-CPU pods in slices of 4 per block."""
    request = {"podSetSliceRequiredTopology": "block", "podSetSliceSize": 4}
    docs = kueue_docs(LEVELS, workload([podset("main", 6, request)]))
    return load_instance(write_docs(tmp_path, docs), warn=lambda _: None)


def _block(node: str) -> int:
    return int(node[1:]) // 2


def test_kueue_places_the_whole_slice_in_one_block_and_not_the_rest(instance):
    plan = toposolve.solve(instance, "kueue")  # checked
    placed = {int(b.pod.rsplit("-", 1)[1]): _block(b.node) for b in plan.bindings}
    assert sorted(placed) == [0, 1, 2, 3]
    assert len(set(placed.values())) == 1
    assert plan.jobs[0].placed


@pytest.mark.parametrize("engine", ["volcano", "cpsat", "kai", "kube"])
def test_no_engine_places_the_incomplete_slice(instance, engine):
    plan = toposolve.solve(instance, engine)  # every plan is checked
    pods = {int(b.pod.rsplit("-", 1)[1]) for b in plan.bindings}
    assert not pods & {4, 5}
    assert pods in (set(), {0, 1, 2, 3})
