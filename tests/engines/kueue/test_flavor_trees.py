"""Which tree a workload is placed in (its flavor's Topology) and the problem views per tree."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import crossing_instance, gang, hard, in_cross, partitioned

import toposolve
from toposolve.core.problem import compile_problem
from toposolve.engines.kueue.flavor_trees import TreeViews, job_tree
from toposolve.formats.load import load_instance

INSTANCES = Path(__file__).resolve().parents[3] / "instances"


def test_a_job_limited_in_a_constraint_tree_is_placed_in_it_and_the_others_in_the_main_tree():
    problem = compile_problem(crossing_instance([
        gang("x", 2, topology=in_cross(1)), gang("y", 2, topology=hard(1)), gang("z", 2)]))
    assert [job_tree(problem, j) for j in range(3)] == ["cross", None, None]
    views = TreeViews(problem)
    assert views.of(None) is problem
    assert views.of("cross").topology is problem.trees["cross"]
    assert views.of("cross") is views.of("cross")


def test_an_unconstrained_workload_takes_its_flavors_tree():
    problem = compile_problem(load_instance(INSTANCES / "kueue-crossing-topologies.yaml",
                                            warn=lambda _: None))
    by_name = {job.name: j for j, job in enumerate(problem.instance.jobs)}
    assert job_tree(problem, by_name["zone-batch"]) == "zone-topology"
    assert job_tree(problem, by_name["batch"]) is None


def test_limits_in_two_trees_are_refused_and_the_job_stays_pending():
    # the job in the main tree, its partitions in the constraint tree (KAI allows this)
    job = partitioned("x", partitions=2, size=2, job_topology=hard(3),
                      partition_topology=in_cross(1), min_available=4)
    problem = compile_problem(crossing_instance([job]))
    with pytest.raises(ValueError, match="several Topologies"):
        job_tree(problem, 0)
    plan = toposolve.solve(crossing_instance([job]), "kueue")
    assert not plan.jobs[0].placed and "one flavor's Topology" in plan.jobs[0].reason
