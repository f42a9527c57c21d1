"""The greedy's candidate minimums of an elastic target (engines/defrag/minimums.py)."""

from __future__ import annotations

from tests.builders import nodes
from tests.engines.defrag.test_elastic import _subgroup_job, _two_tasks
from toposolve.core.instance import Instance
from toposolve.core.problem import compile_problem
from toposolve.engines.defrag import minimums
from toposolve.engines.defrag.common import build_input
from toposolve.engines.defrag.minimums import minimum_candidates


def test_the_candidate_minimums_are_inclusion_minimal_and_cheapest_first():
    p = compile_problem(_two_tasks())
    unit = build_input(p, [4]).targets[0]
    tasks = [{p.group_task[g]: c for g, c in counts.items()}
             for counts in minimum_candidates(p, unit)]
    # b's pods request half of a's: two b first; then one of each; then two a (the fixed rule's)
    assert tasks == [{"b": 2}, {"a": 1, "b": 1}, {"a": 2}]


def test_the_candidate_minimums_keep_subjobs_whole():
    p = compile_problem(Instance(nodes=nodes(2), hypernodes=[], jobs=[_subgroup_job(4)]))
    unit = build_input(p, [0]).targets[0]
    sizes = []
    for counts in minimum_candidates(p, unit):
        per: dict[int, int] = {}
        for g, c in counts.items():
            per[p.group_subjob[g]] = per.get(p.group_subjob[g], 0) + c
        sizes.append(sorted(per.values()))
    assert sizes == [[2, 2]] * 3  # any two of the three SubJobs, whole


def test_too_many_compositions_try_the_fixed_rule_only(monkeypatch):
    p = compile_problem(_two_tasks())
    unit = build_input(p, [4]).targets[0]
    monkeypatch.setattr(minimums, "MAX_COMPOSITIONS", 8)  # 3 x 3 count vectors
    assert minimum_candidates(p, unit) == [unit.counts]
