"""Slice layers Kueue's TAS never places on a Workload object (issue 23): the kueue engine leaves
it pending in Kueue's words (``buildSliceSizeAtLevel``, kueue@ff69552
``tas_flavor_snapshot.go:1150-1156``), before quota, like the request errors it words itself."""

from __future__ import annotations

import pytest
from scheduler_docs import kueue_docs, podset, workload, write_docs

import toposolve
from toposolve.engines.common.missing_level import never_placed_reason
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
