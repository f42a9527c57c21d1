"""Slice layers Kueue's TAS never places on a Workload object (issue 23): the kueue engine leaves
it pending in Kueue's words (``buildSliceSizeAtLevel``, kueue@ff69552
``tas_flavor_snapshot.go:1150-1156``), before quota, like the request errors it words itself."""

from __future__ import annotations

import pytest
from scheduler_docs import kueue_docs, podset, workload, write_docs

import toposolve
from toposolve.core.problem import compile_problem
from toposolve.engines.common.missing_level import missing_level_reason, never_placed_reason
from toposolve.engines.kueue import run_kueue
from toposolve.formats.load import load_instance

LEVELS = ["block", "kubernetes.io/hostname"]


def _load(tmp_path, layers, count=8):
    request = {"podsetSliceRequiredTopologyConstraints": [{"topology": t, "size": s}
                                                          for t, s in layers]}
    docs = kueue_docs(LEVELS, workload([podset("first", 2), podset("main", count, request)]))
    return load_instance(write_docs(tmp_path, docs), warn=lambda _: None)


@pytest.mark.parametrize(("layers", "why"), [
    ([("block", 4), ("kubernetes.io/hostname", 3)],
     "additional slice layer size 3 must evenly divide parent layer size 4"),
    ([("kubernetes.io/hostname", 4), ("block", 2)],
     "additional slice layer topology block must be at a lower level than "
     "kubernetes.io/hostname"),
])
def test_the_workload_stays_pending_naming_the_podset_in_kueues_words(tmp_path, layers, why):
    plan = toposolve.solve(_load(tmp_path, layers), "kueue")
    (job,) = plan.jobs
    assert plan.bindings == [] and not job.placed
    assert job.reason == never_placed_reason(why)
    assert job.scheduler_reason == f"couldn't assign flavors to pod set main: {why}"


def test_a_missing_level_in_another_podset_wins_in_both_reasons(tmp_path):
    layers = {"podsetSliceRequiredTopologyConstraints": [
        {"topology": "block", "size": 4}, {"topology": "kubernetes.io/hostname", "size": 3}]}
    docs = kueue_docs(LEVELS, workload([podset("first", 2, {"required": "rack"}),
                                        podset("main", 8, layers)]))
    problem = compile_problem(load_instance(write_docs(tmp_path, docs), warn=lambda _: None))
    assignment = run_kueue(problem)  # the engine alone gives toposolve's reason too
    assert assignment.reasons[0] == missing_level_reason("rack")
    assert assignment.scheduler_reasons[0] == (
        "couldn't assign flavors to pod set first: Flavor \"f\" does not contain the requested "
        "level")
