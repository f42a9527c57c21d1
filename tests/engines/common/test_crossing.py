"""Engines that do not mirror crossing Topologies leave the jobs constrained in one pending, in
one line, and place the others as before."""

from __future__ import annotations

import pytest
from builders import crossing_instance, example1_tree, gang, hard, in_cross, instance, nodes

import toposolve
from toposolve.core.assignment import Assignment
from toposolve.core.problem import compile_problem
from toposolve.engines.common.crossing import hold_back_crossing, without_crossing


def test_without_crossing_empties_only_the_crossing_jobs_pending_pods():
    problem = compile_problem(crossing_instance([gang("x", 2, topology=in_cross(1)),
                                                 gang("y", 2, topology=hard(1))]))
    held = without_crossing(problem)
    assert held is not problem and held.pending_jobs == [1]
    assert problem.pending_jobs == [0, 1]  # the problem itself is left as it was
    plain = compile_problem(instance(nodes(8), example1_tree(), [gang("y", 2)]))
    assert without_crossing(plain) is plain


def test_hold_back_gives_the_crossing_job_its_reason_and_runs_the_rest():
    problem = compile_problem(crossing_instance([gang("x", 2, topology=in_cross(1)),
                                                 gang("y", 2, topology=hard(1))]))
    seen = []

    def run(p):
        seen.append(p.pending_jobs)
        out = Assignment()
        out.reasons[0] = "the engine's own word"
        return out

    out = hold_back_crossing(problem, "volcano", run)
    assert seen == [[1]]
    assert out.reasons[0] == (
        "constrained in Topology 'cross', which crosses the cluster's main tree over the same "
        "nodes: the volcano engine does not mirror crossing Topologies (kai and kueue do)")


@pytest.mark.parametrize("engine", ["volcano", "kube"])
def test_engines_leave_the_crossing_job_pending_and_place_the_other(engine):
    inst = crossing_instance([gang("x", 2, topology=in_cross(1)), gang("y", 2, topology=hard(1))])
    plan = toposolve.solve(inst, engine, time_limit=5, workers=1)  # checked inside solve()
    by_job = {j.job: j for j in plan.jobs}
    assert not by_job["default/x"].placed and by_job["default/y"].placed
    assert "crosses the cluster's main tree" in by_job["default/x"].reason
