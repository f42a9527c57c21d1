"""A constraint naming a level its tree lacks (``NetworkTopology.missing_level``): the compiled
problem gives the job's groups no candidate node, every engine leaves it pending and
:func:`explain_unplaceable` words why, the same for all."""

from __future__ import annotations

import pytest
from builders import example1_tree, gang, instance, nodes

import toposolve
from toposolve.core.assignment import Assignment
from toposolve.core.instance import LabelSelector, NetworkTopology, SubGroupPolicy
from toposolve.core.problem import compile_problem
from toposolve.core.refusal import MISSING_LEVEL, Refusal
from toposolve.engines.common.missing_level import (
    explain_unplaceable,
    missing_level_reason,
    never_placed_reason,
)
from toposolve.engines.registry import engine_names

MISSING = NetworkTopology(mode="hard", missing_level="rack")


def two_jobs():
    return instance(nodes(8), example1_tree(), [gang("lost", 2, topology=MISSING),
                                                gang("fine", 2)])


def test_the_jobs_groups_have_no_candidate_node_and_the_others_keep_theirs():
    problem = compile_problem(two_jobs())
    assert problem.unplaceable_jobs == {0: "rack"}
    lost, fine = (problem.jobs[j].groups for j in (0, 1))
    assert all(not problem.group_feasible[g].any() for g in lost)
    assert all(problem.group_feasible[g].all() for g in fine)


def test_a_subgroup_policy_naming_a_missing_level_empties_the_groups_it_selects():
    job = gang("part", 2)
    job.tasks[0].labels = {"unit": "u"}
    job.subgroup_policies = [SubGroupPolicy(
        name="p", network_topology=MISSING,
        label_selector=LabelSelector(match_labels={"unit": "u"}), match_label_keys=["unit"])]
    problem = compile_problem(instance(nodes(8), example1_tree(), [job]))
    assert problem.unplaceable_jobs == {0: "rack"}
    assert not any(problem.group_feasible[g].any() for g in problem.jobs[0].groups)


def test_a_policy_selecting_no_pod_constrains_nothing():
    job = gang("part", 2)
    job.subgroup_policies = [SubGroupPolicy(name="p", network_topology=MISSING,
                                            match_label_keys=["unit"])]
    problem = compile_problem(instance(nodes(8), example1_tree(), [job]))
    assert problem.unplaceable_jobs == {}
    assert all(problem.group_feasible[g].all() for g in problem.jobs[0].groups)


@pytest.mark.parametrize("engine", engine_names(aliases=False))
def test_every_engine_leaves_it_pending_and_places_the_others(engine):
    plan = toposolve.solve(two_jobs(), engine)  # checked inside
    by_job = {j.job: j for j in plan.jobs}
    assert not by_job["default/lost"].placed and by_job["default/fine"].placed
    assert by_job["default/lost"].reason == missing_level_reason("rack")
    assert {b.pod.rsplit("-", 2)[0] for b in plan.bindings} == {"default/fine"}


def test_the_scheduler_wording_is_kept_only_when_the_engine_words_it():
    problem = compile_problem(two_jobs())
    theirs = Assignment(reasons={0: "x"}, scheduler_reasons={0: "Kueue's words"})
    explain_unplaceable(problem, theirs, scheduler_words=True)
    assert theirs.reasons[0] == missing_level_reason("rack")
    assert theirs.scheduler_reasons[0] == "Kueue's words"
    other = Assignment(scheduler_reasons={0: "0/8 nodes are unavailable"})
    explain_unplaceable(problem, other)
    assert 0 not in other.scheduler_reasons


def test_a_missing_level_sets_no_tier():
    with pytest.raises(ValueError, match="sets no tier"):
        NetworkTopology(mode="hard", highest_tier_allowed=2, missing_level="rack")
    with pytest.raises(ValueError, match="sets no tier"):
        NetworkTopology(mode="hard", highest_tier_allowed=2, never_placed="why")


NEVER = NetworkTopology(mode="hard", never_placed="additional slice layer size 3 must evenly "
                                                  "divide parent layer size 4")


@pytest.mark.parametrize("engine", engine_names(aliases=False))
def test_a_request_its_scheduler_never_places_stays_pending_in_every_engine(engine):
    inst = instance(nodes(8), example1_tree(), [gang("never", 2, topology=NEVER),
                                                gang("fine", 2)])
    problem = compile_problem(inst)
    assert problem.never_placed_jobs == {0: NEVER.never_placed}
    assert problem.unplaceable_jobs == {}
    plan = toposolve.solve(inst, engine)  # checked inside
    by_job = {j.job: j for j in plan.jobs}
    assert not by_job["default/never"].placed and by_job["default/fine"].placed
    assert by_job["default/never"].reason == never_placed_reason(NEVER.never_placed)
    assert {b.pod.rsplit("-", 2)[0] for b in plan.bindings} == {"default/fine"}


def both_refusals():
    """A job with a podset under a never-placed request and one under a missing level."""
    job = gang("both", 2)
    job.tasks[0].replicas = 1
    job.tasks.append(job.tasks[0].model_copy(update={"name": "other"}))
    job.tasks[0].labels, job.tasks[1].labels = {"unit": "a"}, {"unit": "b"}
    job.subgroup_policies = [
        SubGroupPolicy(name=unit, network_topology=spec, match_label_keys=["unit"],
                       label_selector=LabelSelector(match_labels={"unit": unit}))
        for unit, spec in (("a", NEVER), ("b", MISSING))]
    return instance(nodes(8), example1_tree(), [job, gang("fine", 2)])


def test_a_job_has_one_refusal_and_a_missing_level_wins():
    problem = compile_problem(both_refusals())
    assert problem.refused_jobs == {0: Refusal(MISSING_LEVEL, "rack")}
    assert problem.unplaceable_jobs == {0: "rack"}
    assert problem.never_placed_jobs == {}


@pytest.mark.parametrize("engine", engine_names(aliases=False))
def test_every_engine_gives_the_winning_refusals_reason(engine):
    plan = toposolve.solve(both_refusals(), engine)  # checked inside
    by_job = {j.job: j for j in plan.jobs}
    assert not by_job["default/both"].placed and by_job["default/fine"].placed
    assert by_job["default/both"].reason == missing_level_reason("rack")
