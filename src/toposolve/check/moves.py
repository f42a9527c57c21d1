"""Rule ``move`` beyond the moves' own validity (:func:`toposolve.check.context.apply_moves`):
defragmentation moves a job only where it is no worse placed.

* A job the plan moves pods of must not end with its pods spanning a HyperNode of a higher tier
  than before the plan (its lowest common HyperNode over the pods on nodes the instance has).
* A job marked ``toposolve.io/movable: "false"`` (``Job.movable``) must not be moved.
* A defragmentation plan never evicts: a plan with moves and evictions is reported once.

Predicates and capacity of the nodes moved onto are the ``predicate`` and ``capacity`` rules
(:mod:`.resources`, over every pod the plan puts on a node); the hard tiers of moved jobs, their
SubJobs and GangGroups are the ``tier`` rule (:mod:`.tiers`, :mod:`.gang_tree`).
"""

from __future__ import annotations

from toposolve.check.context import Context
from toposolve.check.violation import Violation


def check_moves(ctx: Context) -> list[Violation]:
    """Tiers made worse by moves, and evictions beside moves."""
    out: list[Violation] = []
    tree = ctx.tree
    for key in ctx.jobs_with_moves:
        if not ctx.jobs[key].movable:
            out.append(Violation("move", f"Job/{key}", "the job is marked not movable "
                                 "(toposolve.io/movable: \"false\")"))
        pods = ctx.pods_of_job[key]
        before = [p.running_on for p in pods if p.running_on in tree.home]
        after = [n for n in ctx.placed(pods) if n in tree.home]
        was, now = tree.lca(before), tree.lca(after)
        if tree.tier[now] > tree.tier[was]:
            out.append(Violation(
                "tier", f"Job/{key}",
                f"moves make its pods span {now!r} of tier {tree.tier[now]}, worse than {was!r} "
                f"of tier {tree.tier[was]} before",
            ))
    if ctx.plan.moves and ctx.plan.evictions:
        out.append(Violation("move", "Plan", f"{len(ctx.plan.evictions)} evictions beside "
                             f"{len(ctx.plan.moves)} moves: defragmentation never evicts"))
    return out
