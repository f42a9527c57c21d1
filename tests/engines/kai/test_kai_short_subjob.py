"""A SubJob with fewer pods than its minimum (a Kueue podset's last, incomplete slice): KAI's gang
can never be met, so the KAI engine leaves the job pending rather than place part of it."""

from __future__ import annotations

from scheduler_docs import kueue_docs, podset, workload, write_docs

import toposolve
from toposolve.formats.load import load_instance


def test_a_subjob_short_of_its_minimum_keeps_the_job_pending_with_the_reason(tmp_path):
    request = {"podSetSliceRequiredTopology": "block", "podSetSliceSize": 4}
    docs = kueue_docs(["block", "kubernetes.io/hostname"],
                      workload([podset("main", 6, request)]))
    inst = load_instance(write_docs(tmp_path, docs), warn=lambda _: None)
    plan = toposolve.solve(inst, "kai")
    assert plan.bindings == [] and not plan.jobs[0].placed
    assert plan.jobs[0].reason == ("SubJob default/w/main-1 has 2 pods, fewer than its minimum 4: "
                                   "its gang can never be met")
