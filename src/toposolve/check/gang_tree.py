"""Gang-tree rules for hierarchies deeper than job → SubJob (``Job.gang_groups``).

Re-derived from the instance model alone: a GangGroup's direct members are its child GangGroups
and the SubJobs of the policies naming it as ``parent``; its pods are those of every SubJob below
it. For each job that receives bindings or whose pods move:

* ``subgroup-gang``: a GangGroup is *satisfied* when at least ``min_members`` of its direct
  members are (None: all of them), a SubJob being satisfied at its ``subGroupSize`` (KAI's
  ``IsMinRequirementSatisfied``, level by level). The job's top GangGroups are required, and so
  is every member of a required GangGroup that needs all its members; a required GangGroup, or
  one below which the plan binds pods, must be satisfied.
* ``tier``: a GangGroup with a hard topology below which the plan binds or moves pods has all
  its placed pods under one HyperNode of tier ≤ its limit. Its pods are pods of its parent, so
  a parent's domain holds every child's pods: nesting needs no rule of its own.
"""

from __future__ import annotations

from toposolve.check.context import Context
from toposolve.check.pods import PodInfo
from toposolve.check.tiers import check_span, in_tree, is_hard
from toposolve.check.violation import Violation
from toposolve.core.instance import Job


class _Tree:
    """One job's GangGroups: direct members, pods below each, and which are satisfied."""

    def __init__(self, ctx: Context, job: Job) -> None:
        self.ctx = ctx
        self.groups = {g.name: g for g in job.gang_groups}
        self.children: dict[str, list[str]] = {name: [] for name in self.groups}
        for g in job.gang_groups:
            if g.parent is not None:
                self.children[g.parent].append(g.name)
        self.subjobs: dict[str, set[str]] = {name: set() for name in self.groups}
        self.pods: dict[str, list[PodInfo]] = {name: [] for name in self.groups}
        for pod in ctx.pods_of_job[job.key]:
            cur = job.subgroup_policies[pod.policy].parent if pod.policy >= 0 else None
            if cur is not None:
                self.subjobs[cur].add(pod.subjob)
            while cur is not None:
                self.pods[cur].append(pod)
                cur = self.groups[cur].parent
        self._satisfied: dict[str, bool] = {}

    def minimum(self, name: str) -> int:
        given = self.groups[name].min_members
        return len(self.children[name]) + len(self.subjobs[name]) if given is None else given

    def ready_members(self, name: str) -> int:
        ready = sum(self.satisfied(c) for c in self.children[name])
        for sid in self.subjobs[name]:
            pods = self.ctx.pods_of_subjob[sid]
            size = pods[0].job.subgroup_policies[pods[0].policy].sub_group_size or 1
            ready += len(self.ctx.placed(pods)) >= size
        return ready

    def satisfied(self, name: str) -> bool:
        if name not in self._satisfied:
            self._satisfied[name] = self.ready_members(name) >= self.minimum(name)
        return self._satisfied[name]

    def required(self) -> list[str]:
        """Top GangGroups, and every member of a required GangGroup that needs all of them."""
        out = [name for name, g in self.groups.items() if g.parent is None]
        for name in out:
            if self.groups[name].min_members is None:
                out += self.children[name]
        return out


def check_gang_tree(ctx: Context) -> list[Violation]:
    out: list[Violation] = []
    for key in ctx.jobs_changed:
        job = ctx.jobs[key]
        if not job.gang_groups:
            continue
        tree = _Tree(ctx, job)
        required = set(tree.required())
        for name, group in tree.groups.items():
            obj = f"GangGroup/{key}/{name}"
            bound = any(p.name in ctx.arrivals for p in tree.pods[name])
            if (bound or name in required) and not tree.satisfied(name):
                out.append(Violation(
                    "subgroup-gang", obj,
                    f"{tree.ready_members(name)} members satisfied, the minimum is "
                    f"{tree.minimum(name)}",
                ))
            if bound and is_hard(group.network_topology):
                out += check_span(ctx, obj, group.network_topology, in_tree(ctx, tree.pods[name]))
    return out
