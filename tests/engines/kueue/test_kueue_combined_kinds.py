"""A Workload podset setting ``unconstrained`` beside its level (issue 23): Kueue's TAS keeps the
level (``levelKey``: required, else preferred) and runs its unconstrained algorithm
(``isUnconstrained``, LeastFreeCapacity under ``TASProfileMixed``; kueue@ff69552
``tas_flavor_snapshot.go:1222-1246``)."""

from __future__ import annotations

import pytest
from scheduler_docs import kueue_docs, podset, workload, write_docs

import toposolve
from toposolve.core.problem import compile_problem
from toposolve.engines.kueue.requests import job_requests
from toposolve.engines.kueue.tree import build_tree
from toposolve.formats.load import load_instance

LEVELS = ["block", "kubernetes.io/hostname"]


def _spec(tmp_path, request):
    docs = kueue_docs(LEVELS, workload([podset("main", 3, request)]))
    inst = load_instance(write_docs(tmp_path, docs), warn=lambda _: None)
    problem = compile_problem(inst)
    (req,) = job_requests(problem, build_tree(problem), 0)
    return inst, req.spec


@pytest.mark.parametrize(("request_", "required", "unconstrained"), [
    ({"required": "block", "unconstrained": True}, True, True),
    ({"preferred": "block", "unconstrained": True}, False, True),
    ({"required": "block", "preferred": "kubernetes.io/hostname"}, True, False),
    ({"required": "block"}, True, False),
])
def test_the_level_kueue_takes_and_its_algorithm(tmp_path, request_, required, unconstrained):
    inst, spec = _spec(tmp_path, request_)
    assert (spec.level, spec.required) == (2, required)  # block is tier 2
    assert (spec.unconstrained, spec.least_free) == (unconstrained, unconstrained)
    plan = toposolve.solve(inst, "kueue")  # checked: the pods stay in one block when required
    assert len(plan.bindings) == 3
