"""A workload whose flavor's Topology holds no domain (no node carries every level, issue 23)
stays pending in every engine; the kueue engine gives Kueue's reason (kueue@ff69552
``tas_flavor_snapshot.go:1342``, the ported case "only nodes with matching levels are
considered; no host label on node; BestFit" of ``TestFindTopologyAssignments``)."""

from __future__ import annotations

import pytest
from scheduler_docs import kueue_docs, podset, workload, write_docs

import toposolve
from toposolve.check.checker import check_plan
from toposolve.engines.common.missing_level import never_placed_reason
from toposolve.engines.registry import engine_names
from toposolve.formats.load import load_instance

WHY = "no topology domains at level: rack"


def _load(tmp_path, levels=("zone", "rack"), required="rack"):
    docs = kueue_docs(list(levels), workload([podset("main", 4, {"required": required})]))
    return load_instance(write_docs(tmp_path, docs, f"{required}.yaml"), warn=lambda _: None)


@pytest.mark.parametrize("engine", engine_names(aliases=False))
def test_every_engine_leaves_the_workload_pending(tmp_path, engine):
    job = toposolve.solve(_load(tmp_path), engine).job("default/w")
    assert not job.placed and job.reason == never_placed_reason(WHY)


def test_kueue_words_it_as_kueue(tmp_path):
    job = toposolve.solve(_load(tmp_path), "kueue").job("default/w")
    assert job.scheduler_reason == f"couldn't assign flavors to pod set main: {WHY}"


def test_the_checker_refuses_a_pod_placed_for_it(tmp_path):
    placed = toposolve.solve(_load(tmp_path, ("block", "kubernetes.io/hostname"), "block"),
                             "kueue")
    assert placed.job("default/w").placed
    found = {str(v) for v in check_plan(_load(tmp_path), placed)}
    assert {f"tier: Pod/default/w-main-{i}: its constraint is never placed: {WHY}"
            for i in range(4)} <= found
