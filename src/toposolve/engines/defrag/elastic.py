"""Which pods make an elastic target's gang minimum, as CP-SAT constraints (searched, not fixed).

A target whose minimum (:func:`~toposolve.engines.defrag.common.minimum_counts`) is below its
pending pods, outside gang trees, may be admitted with **any** set of pods that makes its gang
ready, as :func:`toposolve.core.gang.gang_ready` judges it: the job total, each task minimum,
each ``minSubGroups`` of SubJobs at their ``subGroupSize``, and each SubJob it touches at its
size (placing part of a SubJob could break its gang). Rationale: ``docs/defrag.md``
("Elastic targets").
"""

from __future__ import annotations

from collections.abc import Mapping

from ortools.sat.python import cp_model

from toposolve.core.gang import task_minimums
from toposolve.core.problem import Problem


def add_gang_minimum(m: cp_model.CpModel, problem: Problem, job: int,
                     placed: Mapping[int, cp_model.LinearExprT], upto: Mapping[int, int],
                     on: cp_model.IntVar) -> None:
    """Constrain ``placed`` (group -> pods placed, at most ``upto[g]``) to a ready gang of
    ``job`` when ``on``, and to nothing otherwise."""
    cj = problem.jobs[job]

    def count(groups) -> cp_model.LinearExprT:
        return sum(placed[g] for g in groups if g in placed)

    for g, most in upto.items():
        m.add(placed[g] <= most * on)
    m.add(count(cj.groups) >= cj.min_available * on)
    for task, minimum in task_minimums(cj).items():
        m.add(count([g for g in cj.groups if problem.group_role[g] == task]) >= minimum * on)
    ready: dict[int, list[cp_model.IntVar]] = {}
    for s in cj.subjobs:
        sj = problem.subjobs[s]
        if sj.policy < 0:
            continue
        full = m.new_bool_var(f"subjob_{job}_{s}")
        total = sum(upto.get(g, 0) for g in sj.groups)
        m.add(count(sj.groups) >= sj.min_available * full)
        m.add(count(sj.groups) <= total * full)
        ready.setdefault(sj.policy, []).append(full)
    for policy, minimum in cj.min_subjobs.items():
        m.add(sum(ready.get(policy, [])) >= minimum * on)
