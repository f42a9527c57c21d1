"""A two-level stand-in for a deeper gang tree, strict enough that its plans honour every level.

Volcano knows two gang levels (job → SubJob). On a problem with GangNodes (a deeper tree, see
:class:`~toposolve.core.problem.Problem`), an engine that places two levels only can still emit
checked plans when it solves :func:`within_two_levels` instead, which for each job with
GangNodes

* makes the job hard at the lowest hard tier of the job and of its GangNodes: all its pods in one
  domain of that tier, so each GangNode's pods (a subset) are in one domain of its own tier;
* requires every SubJob below a GangNode (its policy's ``minSubGroups`` = all of its SubJobs, the
  job's minimum at least their summed sizes): every GangNode then has all its members satisfied,
  whatever its own minimum.

This is conservative, never a flattening: a plan of the stand-in is a plan of the tree, but a job
whose tree allows less (K of N members, GangNodes in different domains of a high tier) may stay
pending where the tree would fit it. GangNodes' preferred tiers are dropped (soft). Problems
without GangNodes are returned as they are.
"""

from __future__ import annotations

import dataclasses

from toposolve.core.problem import CompiledJob, Limit, Problem


def within_two_levels(problem: Problem) -> Problem:
    """``problem`` with each deeper gang tree replaced by the stricter two-level job above."""
    if not problem.gang_nodes:
        return problem
    jobs = list(problem.jobs)
    for j in sorted({node.job for node in problem.gang_nodes}):
        jobs[j] = _two_level_job(problem, problem.jobs[j])
    return dataclasses.replace(problem, jobs=jobs, gang_nodes=[])


def _two_level_job(problem: Problem, cj: CompiledJob) -> CompiledJob:
    limits = [problem.gang_nodes[n].limit for n in cj.gang_nodes]
    tiers = [lim.tier for lim in (cj.limit, *limits) if lim is not None and lim.hard]
    limit = cj.limit
    if tiers:
        preferred = (
            None
            if cj.limit is None or cj.limit.preferred is None
            else min(cj.limit.preferred, min(tiers))
        )
        limit = Limit(hard=True, tier=min(tiers), preferred=preferred)
    below = [s for s in cj.subjobs if problem.subjobs[s].parent >= 0]
    min_subjobs = dict(cj.min_subjobs)
    for s in below:
        policy = problem.subjobs[s].policy
        min_subjobs[policy] = sum(1 for t in cj.subjobs if problem.subjobs[t].policy == policy)
    minimum = max(cj.min_available, sum(problem.subjobs[s].min_available for s in below))
    return dataclasses.replace(cj, limit=limit, min_subjobs=min_subjobs, min_available=minimum,
                               gang_nodes=[])
