"""CP-SAT engine: the whole pending queue placed at once, exactly.

Entry point: :func:`solve_cpsat` (``problem, profile, options, hint``) → :class:`CpsatResult`. The objective is
:mod:`toposolve.policy.objective`'s; the result's ``objective`` is :func:`toposolve.policy.objective.evaluate`
of the returned assignment, so it is comparable with any other engine's.

Model (all jobs with pending pods in one model):

* **Counts, not pods.** ``x[g, c]`` = new pods of pod group ``g`` on node class ``c`` (identical
  nodes of one home HyperNode, see :mod:`.candidates`), created only where ``g``'s predicates
  pass, a pod fits, and the job's / SubJob's hard limit allows. After the solve, counts are
  split over the class's nodes deterministically (:mod:`.disaggregate`); a class whose counts
  cannot be packed node by node is split into single nodes and the model solved again
  (identical split nodes get a symmetry-breaking order: pod counts non-increasing).
* **Gang.** ``y[j]`` ⇔ job ``j`` gets new pods; placed ⇒ running + new ≥ minAvailable, and per
  task ≥ max(summed task minAvailable, minTaskMember); new ≤ pending (replicas bound). A policy
  SubJob that gets new pods ends with ≥ subGroupSize pods (``v[s]``), and a placed job has
  ≥ minSubGroups SubJobs of each policy at subGroupSize (``ready[s]``).
* **Capacity** per class and resource: new requests ≤ the class's idle (running pods already
  use theirs). **Queue capability** per queue and listed resource: running + new ≤ capability.
* **Hard tiers.** A job (policy SubJob) with a hard limit has its pods in exactly one candidate
  HyperNode of tier ≤ the limit (``hard_domain``), which must hold its running pods; a SubJob's
  domain lies inside its job's because its pods are job pods. Redundant cut: what the job adds
  inside its chosen domain fits in that domain's idle capacity, per resource. Soft limits and
  jobs without topology are unconstrained (the spread objective prefers low tiers).
* **Spread** per job and policy SubJob: ``within[l]`` (all its pods under one HyperNode of
  tier ≤ ``T_l``) per level below the one its hard limit guarantees; the LCA tier is
  ``T_0 + Σ_l (T_{l+1} − T_l)·(1 − within[l])``. **Fragmentation**: ``touched[h]`` for each
  initially idle leaf HyperNode that gets new pods.

* **Evictions** (``evict="preempt" | "reclaim" | "both"``, :mod:`.eviction`): per victim pod
  group and node, how many running pods are evicted; capacity after eviction; a victim that was
  ready either stays ready or counts as broken; evictions only of allowed candidates (the
  heuristic's rules) and only for a preemptor that receives bindings; the freed room goes only
  to jobs allowed to evict its victim (``docs/eviction.md``; the preemptors' bindings are
  nominated). With evictions every profile ranks disruption right after placement
  (:func:`toposolve.policy.profiles.for_eviction`). Warm start and fallback: the heuristic's plan with
  the same evictions; ``stats["eviction"]`` reports the disruption saved.
* **Scale.** Above ``coarse.COUNT_BUDGET`` count variables (e.g. 6,144 nodes with per-node
  tier-1 HyperNodes) the *lifted* model is tried first: still exact, it counts whole-node pods
  per class of identical nodes of the lowest domain their job's limits and spread need
  (:mod:`.lift`); when even that is too large for the time limit, the classes are taken per
  HyperNode of a higher tier and everything below is relaxed: the coarse model bounds the
  optimum and decides how many pods each group gets; :mod:`.repack` (tier-first, best fit)
  turns that into a plan that respects the real limits.

Solving: :mod:`.solver` (entry, final status, fallback, time limit) runs :mod:`.exact` or
:mod:`.coarse`, whose stages :mod:`.runner` solves (time split, bound); solutions become plans
in :mod:`.plans`. Deterministic mode and raw parameters: :mod:`.parameters`. Warm start:
:mod:`.warmstart` and :mod:`.hint`. Reasons for pending jobs: :mod:`.explain`.
"""

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem
from toposolve.engines.contract import EngineResult, SolveOptions
from toposolve.engines.cpsat.parameters import sat_overrides
from toposolve.engines.cpsat.solver import CpsatResult, solve_cpsat
from toposolve.policy.profiles import Profile


def solve(
    problem: Problem, profile: Profile, options: SolveOptions, hint: Assignment | None = None
) -> EngineResult:
    """The engine contract (:mod:`toposolve.engines.contract`): :func:`solve_cpsat` with
    ``hint`` as warm start."""
    return solve_cpsat(problem, profile, options, hint)


__all__ = ["CpsatResult", "sat_overrides", "solve", "solve_cpsat"]
