"""What a writer does with constraints no node satisfies when its form cannot hold them: one
warning line, and the job written without them (formats/k8s/levels.py)."""

from __future__ import annotations

from builders import gang

from toposolve.core.instance import LabelSelector, NetworkTopology, SubGroupPolicy
from toposolve.formats.k8s.levels import drop_refused, warn_refused

HARD = NetworkTopology(mode="hard", highest_tier_allowed=2)
NEVER = NetworkTopology(mode="hard", never_placed="layers refused")
MISSING = NetworkTopology(mode="hard", missing_level="rack")


def job_with(spec, policy_spec):
    job = gang("j", 2, topology=spec)
    job.subgroup_policies = [SubGroupPolicy(name="p", network_topology=policy_spec,
                                            label_selector=LabelSelector(match_labels={"u": "a"}))]
    return job


def test_a_job_without_refusals_is_written_as_it_is_and_silently():
    job = job_with(HARD, HARD)
    lines: list[str] = []
    assert drop_refused(job, lines.append) is job and lines == []


def test_each_refused_constraint_is_unset_and_the_first_named():
    job = job_with(HARD, NEVER)
    lines: list[str] = []
    kept = drop_refused(job, lines.append)
    assert kept.network_topology == HARD
    assert [p.network_topology for p in kept.subgroup_policies] == [None]
    assert [p.name for p in kept.subgroup_policies] == ["p"]
    assert job.subgroup_policies[0].network_topology == NEVER  # the input is not changed
    assert lines == ["Job/default/j: the request its scheduler never places (layers refused) is "
                     "left out (the written objects cannot hold it): the written job is "
                     "unconstrained"]


def test_the_warning_names_the_jobs_first_refusal():
    lines: list[str] = []
    warn_refused(job_with(MISSING, NEVER), lines.append)
    assert len(lines) == 1 and "level 'rack'" in lines[0]
