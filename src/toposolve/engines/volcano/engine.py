"""The allocate action: queues → jobs → (two-level) HyperNode search → fill.

Mirrors Volcano's ``allocate`` with the gang, priority and network-topology-aware plugins (seeds
000, 003, 004; details from Volcano's code in ``docs/volcano-fidelity.md``). Rules chosen where
Volcano leaves things open or random:

* Ties (nodes, HyperNodes, jobs' HyperNodes) go to the lowest tie rank: node order of the
  instance and HyperNode order (tier, name) in deterministic mode, a seeded permutation in random
  mode.
* A job is tried once per queue pop. A job that cannot be made ready is not retried (Volcano).
  A ready job with pods left is pushed back behind the not-ready jobs and gets the rest of its
  pods in its next pop (Volcano gives one pod per pop; the batch gives the same nodes because the
  search root is pinned to the job's AllocatedHyperNode).
* Soft mode follows Volcano's current code by default (soft = hard up to the root tier); the
  documents' score-only behaviour is ``heuristic.soft_mode: score-only``.
* Pods of a SubJob are taken task by task in declaration order, each task's pods by index; per-
  task minimums are met first.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from toposolve.core.assignment import Assignment
from toposolve.core.footprint import occupied_domain
from toposolve.core.problem import Problem
from toposolve.engines.volcano.fill import fill, place_normal_pods, proximity_order
from toposolve.engines.volcano.flat_loop import (
    FlatAttempt,
    allocate_flat_tasks,
    attempt_condition,
)
from toposolve.engines.volcano.gradients import hypernode_gradients, search_root
from toposolve.engines.volcano.readiness import Gang
from toposolve.engines.volcano.reasons import (
    flat_condition,
    hypernode_condition,
    pending_reason,
)
from toposolve.engines.volcano.scores import (
    add_task_num_tie_break,
    binpack_score,
    resource_weights,
    task_num_share,
)
from toposolve.engines.volcano.state import ClusterState
from toposolve.policy.profiles import Profile
from toposolve.policy.rules import job_minimum_request


class HeuristicEngine:
    def __init__(self, problem: Problem, profile: Profile) -> None:
        self.problem = problem
        self.profile = profile
        self.args = profile.plugin
        topo = problem.topology
        n_nodes, n_hn = problem.n_nodes, len(topo.names)
        if profile.heuristic.tie_break == "random":
            rng = np.random.default_rng(profile.heuristic.seed)
            node_rank, hn_rank = rng.permutation(n_nodes), rng.permutation(n_hn)
        else:
            node_rank, hn_rank = np.arange(n_nodes), np.arange(n_hn)
        self.state = ClusterState(problem, node_rank, hn_rank)
        self.gang = Gang(problem, self.state)
        self.weights = resource_weights(problem, self.args)
        self.job_limit = [self._effective_job_limit(j) for j in range(len(problem.jobs))]
        self.subjob_limit = [self._effective_subjob_limit(s) for s in range(len(problem.subjobs))]
        self.subjob_alloc: dict[int, int] = {}
        self.job_alloc: dict[int, int] = {}
        self._recover_allocated_hypernodes()
        self.assignment = Assignment()
        # where every job's HyperNode search starts: the cluster root, except while the
        # eviction pass simulates a job inside one cleared domain (allocate_within)
        self._search_start = topo.root
        # the last flat loop run per job of several tasks (its words, once the gang failed)
        self._flat_attempts: dict[int, FlatAttempt | None] = {}

    # ---- limits and recovery ---------------------------------------------------------------
    def _effective_job_limit(self, j: int) -> int | None:
        limit = self.problem.jobs[j].limit
        if limit is None:
            return None
        if limit.hard:
            return limit.tier
        return (
            self.problem.topology.max_tier
            if self.profile.heuristic.soft_mode == "gradient"
            else None
        )

    def _effective_subjob_limit(self, s: int) -> int | None:
        sj = self.problem.subjobs[s]
        if sj.policy < 0:
            return self.job_limit[sj.job]
        if sj.limit is None:
            return None
        if sj.limit.hard:
            return sj.limit.tier
        if self.profile.heuristic.soft_mode != "gradient":
            return None
        job_tier = self.job_limit[sj.job]
        return job_tier if job_tier is not None else self.problem.topology.max_tier

    def _recover_allocated_hypernodes(self) -> None:
        """SubJob: LCA of its running pods' nodes; job: LCA of its SubJobs' values (seed 000).

        A job with a tier limit whose running pods sit only in SubJobs without topology gets the
        LCA of all its running pods: Volcano keeps the job's value in its cache across sessions,
        and without it the job's new pods could leave the domain its running pods pin.
        """
        topo = self.problem.topology
        for s, sj in enumerate(self.problem.subjobs):
            h = (occupied_domain(self.problem,
                    self.state.nodes_of(sj.groups)) if self.subjob_limit[s] is not None else None)
            if h is not None:
                self.subjob_alloc[s] = h
        for j, cj in enumerate(self.problem.jobs):
            values = [self.subjob_alloc[s] for s in cj.subjobs if s in self.subjob_alloc]
            h = (occupied_domain(self.problem,
                    self.state.nodes_of(cj.groups)) if self.job_limit[j] is not None else None)
            if h is not None:
                values.append(h)
            if values:
                h = values[0]
                for other in values[1:]:
                    h = topo.lca(h, other)
                self.job_alloc[j] = h

    # ---- main loop -------------------------------------------------------------------------
    def run(self) -> Assignment:
        problem = self.problem
        queues: dict[str, list[int]] = {}
        for j in problem.pending_jobs:
            cj = problem.jobs[j]
            invalid = self.gang.job_valid(j)
            if invalid:
                self.assignment.reasons[j] = invalid
                continue
            queues.setdefault(cj.queue, []).append(j)
        tried: set[int] = set()
        while any(queues.values()):
            q = min((name for name, jobs in queues.items() if jobs), key=self.queue_order_key)
            jobs = queues[q]
            jobs.sort(key=self.job_order_key)
            j = jobs.pop(0)
            first_try = j not in tried
            tried.add(j)
            mark = self.state.mark()
            ok = self._try_job(j)
            progressed = self.state.mark() > mark
            if ok and progressed and self.gang.job_ready(j):
                if self._pending_left(j):
                    jobs.append(j)
                continue
            if first_try and not self._two_level(j):
                condition = flat_condition(self, j, self.task_order(problem.jobs[j].groups))
                if condition is not None:
                    self.assignment.scheduler_reasons[j] = condition
            self.state.undo_to(mark)
            if first_try and not self._two_level(j) and len(problem.jobs[j].groups) > 1:
                condition = attempt_condition(self, j, self._flat_attempts.pop(j, None))
                if condition is not None:
                    self.assignment.scheduler_reasons[j] = condition
            if first_try and self._two_level(j):
                condition = hypernode_condition(self, j)
                if condition is not None:
                    self.assignment.scheduler_reasons[j] = condition
            if first_try:
                self.assignment.reasons[j] = pending_reason(self, j)
        for group, nodes, counts in self.state.log:
            for node, count in zip(nodes.tolist(), counts.tolist(), strict=True):
                self.assignment.add(group, node, count)
        for group, node, picks in self.state.placed_devices():
            self.assignment.add_devices(group, node, picks)
        placed = self.assignment.placed_jobs(problem)
        for j in placed:
            self.assignment.reasons.pop(j, None)
        self.report_domains(placed)
        return self.assignment

    def report_domains(self, jobs: Iterable[int]) -> None:
        """Report the mirror's AllocatedHyperNodes of ``jobs`` as their domains in the plan.

        A job's when it has a tier limit, a SubJob's when it has new pods; the plan shows the
        domain the pods occupy (:mod:`toposolve.core.footprint`) for the others.

        Parameters
        ----------
        jobs
            Indices of jobs in ``problem.jobs`` that the assignment places.
        """
        placed_groups = set(self.assignment.counts)
        for j in jobs:
            if j in self.job_alloc and self.job_limit[j] is not None:
                self.assignment.job_domain[j] = self.job_alloc[j]
            for s in self.problem.jobs[j].subjobs:
                if s in self.subjob_alloc and any(
                    g in placed_groups for g in self.problem.subjobs[s].groups
                ):
                    self.assignment.subjob_domain[s] = self.subjob_alloc[s]

    # ---- public surface for the eviction pass ----------------------------------------------
    def queue_order_key(self, name: str) -> tuple:
        """Sort key of queue ``name`` in Volcano's queue order (smallest first).

        Parameters
        ----------
        name
            The queue's name.

        Returns
        -------
        tuple
            ``(-priority, share, name)``: higher queue priority first, then the smaller dominant
            share of the deserved resources the queue uses now (proportion's ``QueueOrderFn``),
            then the name. A queue the instance does not list has priority 0 and share 0.
        """
        queue = self.state.queues.get(name)
        share = 0.0
        if queue is not None and queue.deserved:
            used = self.state.queue_used.get(name)
            for r, amount in queue.deserved.items():
                i = self.problem.resource_index.get(r)
                if i is not None and amount > 0 and used is not None:
                    share = max(share, float(used[i]) / amount)
        return (-(queue.priority if queue else 0), share, name)

    def allocate_within(self, j: int, h: int) -> bool:
        """Run the allocate logic for job ``j`` with its HyperNode search confined to ``h``.

        The eviction pass's hook (seed 002 §3.3.2: nominate by re-running allocate on the
        cleared domain only): every search that starts at the cluster root starts at ``h``.

        Parameters
        ----------
        j
            Index of the job in ``problem.jobs``.
        h
            Index of the HyperNode the search is confined to.

        Returns
        -------
        bool
            True if the job is ready afterwards; its placements then stay in the state. On
            False, its placements and HyperNode choices made here are rolled back (state
            changes made before the call, such as evictions, stay).
        """
        mark = self.state.mark()
        saved_alloc = (dict(self.job_alloc), dict(self.subjob_alloc))
        saved, self._search_start = self._search_start, h
        try:
            ok = self._try_job(j) and self.gang.job_ready(j)
        finally:
            self._search_start = saved
        if not ok:
            self.state.undo_to(mark)
            self.job_alloc, self.subjob_alloc = saved_alloc
        return ok

    def job_order_key(self, j: int) -> tuple:
        """Sort key of job ``j`` in Volcano's job order inside its queue (smallest first).

        Parameters
        ----------
        j
            Index of the job in ``problem.jobs``.

        Returns
        -------
        tuple
            ``(-priority, ready, creation_index, key)``: higher priority first (priority
            plugin), then jobs not yet ready before ready ones (gang plugin), then the older
            job, then the job key so the order is total.
        """
        cj = self.problem.jobs[j]
        return (-cj.priority, self.gang.job_ready(j), cj.creation_index, cj.key)

    def minimum_request(self, j: int) -> np.ndarray:
        """What job ``j`` still needs to become ready, against the live state.

        :func:`toposolve.policy.rules.job_minimum_request` (the one rule every engine uses) with the
        pods the job holds now and its groups' pods still pending; PodGroup
        ``spec.minResources`` counts only until the job has an allocated HyperNode (Volcano
        stops consulting it then).

        Parameters
        ----------
        j
            Index of the job in ``problem.jobs``.

        Returns
        -------
        numpy.ndarray
            ``[R]`` amounts per resource of ``problem.resources``.
        """
        return job_minimum_request(self.problem, j, held=self.gang.job_count(j),
                pending_of=self.gang.pending_of_group, use_min_resources=j not in self.job_alloc)

    def _pending_left(self, j: int) -> bool:
        return any(self.gang.pending_of_group(g) > 0 for g in self.problem.jobs[j].groups)

    def _two_level(self, j: int) -> bool:
        """Whether job ``j`` takes the HyperNode search (else the flat path over all nodes)."""
        cj = self.problem.jobs[j]
        return (
            self.job_limit[j] is not None
            or cj.has_subgroup_policies
            or any(self.subjob_limit[s] is not None for s in cj.subjobs)
        )

    def _try_job(self, j: int) -> bool:
        if self._two_level(j):
            return self._allocate_for_job(j)
        return self._allocate_flat(j)

    # ---- flat path (no topology anywhere) --------------------------------------------------
    def _allocate_flat(self, j: int) -> bool:
        cj = self.problem.jobs[j]
        start = self._search_start
        if start == self.problem.topology.root:
            all_nodes = np.arange(self.problem.n_nodes)
        else:
            all_nodes = self.state.nodes_in(start)
        was_ready, mark = self.gang.job_ready(j), self.state.mark()
        for g, count in self._pods_to_place(cj.subjobs[0] if len(cj.subjobs) == 1 else None,
                                            self.task_order(cj.groups)):
            place_normal_pods(self.state, self.problem, self.args, g, count, all_nodes)
        if self.gang.job_ready(j) or was_ready or len(cj.groups) == 1:
            return self.gang.job_ready(j)
        # the planned pods leave the gang short: Volcano's loop goes on past a failed pod to the
        # next task (one group: its later pods fail alike, so nothing changes)
        self.state.undo_to(mark)
        attempt = allocate_flat_tasks(self, j, all_nodes)
        self._flat_attempts[j] = attempt
        return attempt is not None and attempt.ready

    def task_order(self, groups: list[int]) -> list[int]:
        """Groups in Volcano's task order: higher pod priority first, then declaration order
        (pods of a group go by index)."""
        return sorted(groups, key=lambda g: -self.problem.group_priority[g])

    def _pods_to_place(self, s: int | None, groups: list[int]) -> list[tuple[int, int]]:
        """(group, count) to place so the SubJob (or job) just becomes ready, per-task mins first.

        Volcano stops a SubJob's task loop right after it becomes ready, and places at least one
        task per attempt, so a ready SubJob with pods left gets one more.
        """
        problem = self.problem
        j = int(problem.group_job[groups[0]])
        cj = problem.jobs[j]
        left = {g: self.gang.pending_of_group(g) for g in groups}
        plan: dict[int, int] = {}
        job_mode = s is None or (problem.subjobs[s].policy < 0 and not cj.has_subgroup_policies)
        if job_mode:
            counts = self.gang.task_counts(j)
            for g in groups:
                task = problem.group_role[g]
                want = max(0, cj.min_per_task.get(task, 0) - counts.get(task, 0) - plan.get(g, 0))
                take = min(want, left[g])
                if take:
                    plan[g] = plan.get(g, 0) + take
                    counts[task] = counts.get(task, 0) + take
            missing = max(1, cj.min_available - self.gang.job_count(j) - sum(plan.values()))
        else:
            missing = max(1, problem.subjobs[s].min_available - self.gang.subjob_count(s))
        for g in groups:
            if missing <= 0:
                break
            take = min(missing, left[g] - plan.get(g, 0))
            if take > 0:
                plan[g] = plan.get(g, 0) + take
                missing -= take
        return [(g, plan[g]) for g in groups if plan.get(g)]

    # ---- two-level path --------------------------------------------------------------------
    def job_gradients(self, j: int) -> list[list[int]]:
        """``HyperNodeGradientForJobFn`` for job ``j`` against the live state."""
        return self._gradients(self._search_start, self.job_limit[j], self.job_alloc.get(j),
                               lambda: self.minimum_request(j))

    def _gradients(self, start: int, limit: int | None, allocated: int | None,
                   demand) -> list[list[int]]:
        """Gradients below ``start`` (or below the allowed ancestor of ``allocated``); the
        resource prefilter (``demand()`` fits the HyperNode's idle total) is skipped once a
        HyperNode is allocated, as in Volcano."""
        if limit is None:
            return [[start]]
        topo = self.problem.topology
        root = search_root(topo, self.state.hn_ancestors, start, allocated, limit)
        if root is None:
            return []
        subtree = self.state.subtree(root)
        if allocated is not None:
            eligible = np.ones(subtree.size, dtype=bool)
        else:
            eligible = self._fits_min_resources(demand(), subtree)
        return hypernode_gradients(topo, subtree, limit, eligible, self.state.hypernode_rank)

    def _fits_min_resources(self, demand: np.ndarray, hypernodes: np.ndarray) -> np.ndarray:
        idle = self.state.hn_alloc[hypernodes] - self.state.hn_used[hypernodes]
        return (idle >= demand).all(axis=1)

    def _single_group(self, s: int) -> int | None:
        """The only group of SubJob ``s`` with pending pods, if there is exactly one."""
        groups = [g for g in self.problem.subjobs[s].groups if self.gang.pending_of_group(g) > 0]
        return groups[0] if len(groups) == 1 else None

    def _feasible_in(self, s: int, g: int, candidates: np.ndarray, scope: int) -> np.ndarray:
        """Which candidate HyperNodes a one-group SubJob's dry run would succeed in: the pods
        it must place fit node by node (exactly what the fill achieves), and its whole pending
        demand fits the HyperNode's idle total (Volcano's SubJob prefilter)."""
        (count,) = [c for _, c in self._pods_to_place(s, [g])] or [0]
        if count <= 0 or self.state.queue_room(g) < count:
            return np.zeros(candidates.size, dtype=bool)
        fit = self.state.fit_counts(g, self.state.nodes_in(scope))
        capacity = self.state.per_hypernode(fit, candidates)
        ok = capacity >= count
        if s not in self.subjob_alloc:
            demand = self.gang.pending_of_group(g) * self.problem.group_request[g].astype(float)
            idle = self.state.hn_alloc[candidates] - self.state.hn_used[candidates]
            ok &= (idle >= demand).all(axis=1)
        return ok

    def _allocate_for_job(self, j: int) -> bool:
        cj = self.problem.jobs[j]
        if len(cj.subjobs) == 1 and j not in self.job_alloc:
            g = self._single_group(cj.subjobs[0])
            if g is not None:
                return self._allocate_single_group_job(j, cj.subjobs[0], g)
        return self._allocate_for_job_by_dry_runs(j)

    def _allocate_single_group_job(self, j: int, s: int, g: int) -> bool:
        """Fast path with the same outcome as dry-running every HyperNode of each gradient.

        With one SubJob of one group and nothing running, the first gradient with a HyperNode
        that can hold the gang is the first where the dry run succeeds; inside such an H no lower
        tier can hold it (else an earlier gradient would have), so the SubJob lands on H itself
        and the job score of H is H's bin-packing score.
        """
        for gradient in self.job_gradients(j):
            candidates = np.array(gradient)
            ok = self._feasible_in(s, g, candidates, self._search_start)
            if self.subjob_limit[s] is not None:
                ok &= self.problem.topology.tier[candidates] <= self.subjob_limit[s]
            if not ok.any():
                continue
            winners = candidates[ok]
            H = int(winners[int(np.argmax(self.hypernode_scores(s, winners)))])
            mark = self.state.mark()
            if not self._fill_subjob(s, H):
                # the pods fit but the SubJob still is not ready (it has fewer pods than its
                # gang needs): that holds in every HyperNode, so the job fails here
                self.state.undo_to(mark)
                return False
            self.subjob_alloc[s] = H
            self.job_alloc[j] = H
            return True
        return False

    def _dry_run_signature(self, j: int, H: int) -> bytes | None:
        """A key equal for two HyperNodes whose dry runs must give the same score.

        Two subtrees with the same shape (tiers and parent links in index order), the same
        nodes' allocatable, idle and predicates for the job, and the same pods of the job give the
        same dry-run outcome when ties follow index order, so only the first (which also wins a
        tie) needs the dry run. Random tie ranks break that, so there is no key then.
        """
        if self.profile.heuristic.tie_break != "deterministic":
            return None
        state = self.state
        subtree = state.subtree(H)
        nodes = state.nodes_in(H)
        topo = self.problem.topology
        local = {int(h): i for i, h in enumerate(subtree.tolist())}
        shape = [(int(topo.tier[h]), local.get(int(topo.parent[h]), -1)) for h in subtree.tolist()]
        homes = [local.get(int(h), -1) for h in topo.node_home[nodes].tolist()]
        groups = self.problem.jobs[j].groups
        parts = [
            repr((shape, homes)).encode(),
            self.problem.allocatable[nodes].tobytes(),
            state.idle[nodes].tobytes(),
            self.problem.group_feasible[np.ix_(groups, nodes)].tobytes(),
            state.tasks_in(groups)[nodes].tobytes(),
        ]
        if state.devices is not None:  # per-device room decides fits too
            parts.append(state.devices.free[nodes].tobytes())
        return b"|".join(parts)

    def _allocate_for_job_by_dry_runs(self, j: int) -> bool:
        topo = self.problem.topology
        for gradient in self.job_gradients(j):
            best: tuple[float, int, list, dict] | None = None
            seen: set[bytes] = set()
            for H in gradient:
                key = self._dry_run_signature(j, H)
                if key is not None:
                    if key in seen:
                        continue  # same score as an earlier HyperNode, which wins the tie
                    seen.add(key)
                mark = self.state.mark()
                saved = dict(self.subjob_alloc)
                ready, score, choices = self._dry_run_job(j, H)
                placements = self.state.undo_to(mark)
                self.subjob_alloc = saved
                if ready and placements and (best is None or score > best[0] + 1e-12):
                    best = (score, H, placements, choices)
            if best is not None:
                _, H, placements, choices = best
                self.state.replay(placements)
                for s, h in choices.items():
                    old = self.subjob_alloc.get(s)
                    self.subjob_alloc[s] = h if old is None else topo.lca(old, h)
                old = self.job_alloc.get(j)
                self.job_alloc[j] = H if old is None else topo.lca(old, H)
                return True
        return False

    def _dry_run_job(self, j: int, H: int) -> tuple[bool, float, dict[int, int]]:
        score = 0.0
        choices: dict[int, int] = {}
        failed: set[int] = set()
        while True:
            order = [s for s in self.gang.subjob_order(j) if s not in failed]
            if not order:
                break
            s = order[0]
            result = self._allocate_for_subjob(s, H)
            if result is None:
                failed.add(s)
                continue
            h, sj_score = result
            score += sj_score
            choices[s] = h
            if self.gang.job_ready(j):
                break
        return self.gang.job_ready(j), score, choices

    def subjob_gradients(self, s: int, H: int) -> list[list[int]]:
        """``HyperNodeGradientForSubJobFn`` for SubJob ``s`` inside the job's HyperNode ``H``;
        the prefilter demand is the SubJob's whole pending request (Volcano's code)."""

        def pending_demand() -> np.ndarray:
            demand = np.zeros(len(self.problem.resources))
            for g in self.problem.subjobs[s].groups:
                demand += self.gang.pending_of_group(g) * self.problem.group_request[g].astype(
                    float
                )
            return demand

        return self._gradients(H, self.subjob_limit[s], self.subjob_alloc.get(s), pending_demand)

    def _allocate_for_subjob(self, s: int, H: int) -> tuple[int, float] | None:
        topo = self.problem.topology
        single = self._single_group(s)
        for gradient in self.subjob_gradients(s, H):
            if single is not None:
                # One group: a dry run in h succeeds exactly when the pods fit node by node
                # (_feasible_in), and h's score does not depend on where they land inside it,
                # so score the feasible candidates and fill only the winner.
                candidates = np.array(gradient)
                candidates = candidates[self._feasible_in(s, single, candidates, H)]
                if candidates.size == 0:
                    continue
                scores = self.hypernode_scores(s, candidates)
                pick = int(np.argmax(scores))
                h = int(candidates[pick])
                mark = self.state.mark()
                if not self._fill_subjob(s, h):  # too few pods to be ready: fails everywhere
                    self.state.undo_to(mark)
                    return None
                old = self.subjob_alloc.get(s)
                self.subjob_alloc[s] = h if old is None else topo.lca(old, h)
                return h, float(scores[pick])
            succeeded: list[tuple[int, list]] = []
            for h in gradient:
                mark = self.state.mark()
                ok = self._fill_subjob(s, h)
                placements = self.state.undo_to(mark)
                if ok and placements:
                    succeeded.append((h, placements))
            if succeeded:
                candidates = np.array([h for h, _ in succeeded])
                scores = self.hypernode_scores(s, candidates)
                pick = int(np.argmax(scores))  # first of the tied maxima = lowest tie rank
                h, placements = succeeded[pick]
                self.state.replay(placements)
                old = self.subjob_alloc.get(s)
                self.subjob_alloc[s] = h if old is None else topo.lca(old, h)
                return h, float(scores[pick])
        return None

    def hypernode_scores(self, s: int, candidates: np.ndarray) -> np.ndarray:
        """``HyperNodeOrderFn`` for SubJob ``s`` over ``candidates`` (bin-packing + task share).

        As in Volcano's code, the request is the sum over *all* the SubJob's pods (running
        included) and the task-count share is added only to the candidates tied at the top.
        """
        problem = self.problem
        sj = problem.subjobs[s]
        request = np.zeros(len(problem.resources))
        total = 0
        for g in sj.groups:
            pods = problem.group_size(g)
            request += pods * problem.group_request[g].astype(float)
            total += pods
        scores = binpack_score(self.state.hn_used[candidates], self.state.hn_alloc[candidates],
                               request, self.weights)
        inside = self.state.per_hypernode(self.state.tasks_in(sj.groups), candidates)
        return add_task_num_tie_break(scores, task_num_share(inside, total))

    def _fill_subjob(self, s: int, h: int) -> bool:
        """Dry-run a SubJob's pods inside HyperNode ``h``; True if it becomes ready."""
        problem = self.problem
        state = self.state
        sj = problem.subjobs[s]
        pending_groups = self.task_order(
            [g for g in sj.groups if self.gang.pending_of_group(g) > 0]
        )
        if not pending_groups:
            return False
        inside = state.nodes_in(h)
        topology_pods = self.subjob_limit[s] is not None or problem.jobs[sj.job].limit is not None
        for g, count in self._pods_to_place(s, pending_groups):
            count = min(count, state.queue_room(g))
            fit = state.fit_counts(g, inside)
            nodes = inside[fit[inside] > 0]
            if topology_pods:
                running = state.nodes_of(sj.groups)
                anchor = problem.topology.lca_of_nodes(running) if running else None
                ordered = proximity_order(state, nodes, anchor, sj.groups)
                fill(state, g, ordered, fit, count)
            else:
                place_normal_pods(state, problem, self.args, g, count, nodes)
        return self.gang.subjob_ready(s)
