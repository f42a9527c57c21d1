"""Kueue's balanced placement (feature gate ``TASBalancedPlacement``, alpha, off by default).

Re-expressed from kueue ``pkg/cache/scheduler/tas_balanced_placement.go``. Only for preferred
requests. For each domain one level above the requested one (or once for the whole top level):

1. evaluate the greedy BestFit take of its children (below the requested level when that is above
   the slice level): how many domains it uses and the last one taken;
2. the *threshold* = slices // domains used, at most the last domains' counts — the largest
   minimum per domain a balanced spread could reach;
3. prune (on a copy) the domains below the threshold (and the leader capacity of those that
   cannot host the leader and still reach it), recount, and keep the candidate if the request
   still fits; with a leader, retry once with the threshold the leader's reservation allows.

The best candidate has the highest threshold, then the fewest domains at the requested level.
Then: choose the smallest set of requested-level domains (dynamic programming over domains in
capacity-then-entropy order, the set overshooting least), go one level down when that is above
the slice level, choose the set again (by label order), and give every chosen domain
``threshold`` slices plus extras in leader-first BestFit order. Any failure falls back to BestFit
(:func:`~toposolve.engines.kueue.placement.find_level`) on the untouched counts.
"""

from __future__ import annotations

import math

from toposolve.engines.kueue.counts import DomainState, PodSetRequest, refill
from toposolve.engines.kueue.fit import Order


def _greedy_take(st: DomainState, order: Order, domains: list[int], slices: int,
                 leaders: int) -> tuple[int, int | None, int | None] | None:
    """``evaluateGreedyAssignment``: (domains used, last leader domain, last worker domain)."""
    used, last_leader, last = 0, None, None
    rest = domains
    if leaders > 0:
        ordered = order.with_leader(st, domains, best_fit=True)
        i = 0
        while leaders > 0 and i < len(ordered) and st.lc[ordered[i]] > 0:
            used, last_leader = used + 1, ordered[i]
            leaders -= int(st.lc[ordered[i]])
            slices -= int(st.scl[ordered[i]])
            i += 1
        rest = ordered[i:]
    if leaders > 0:
        return None
    for d in order.domains(st, rest, best_fit=True):
        if slices <= 0 or st.sc[d] <= 0:
            break
        used, last = used + 1, d
        slices -= int(st.sc[d])
    return None if slices > 0 else (used, last_leader, last)


def _threshold(st: DomainState, slices: int, used: int, last_leader: int | None,
               last: int | None) -> int:
    threshold = slices // used
    if last_leader is not None:
        threshold = min(threshold, int(st.scl[last_leader]))
    if last is not None:
        threshold = min(threshold, int(st.sc[last]))
    return threshold


def _entropy(st: DomainState, kids: list[int]) -> float:
    counts = [int(st.pc[k]) for k in kids if st.pc[k] > 0]
    total = sum(counts)
    return -sum(c / total * math.log2(c / total) for c in counts) if total else 0.0


def _optimal_set(st: DomainState, order: Order, domains: list[int], req: PodSetRequest,
                 by_entropy: bool) -> list[int] | None:
    """``selectOptimalDomainSetToFit``: as few domains as the greedy take uses, overshooting the
    pods least; the first set found in domain order wins ties."""
    slices = req.count // req.slice_size
    greedy = _greedy_take(st, order, domains, slices, req.leaders)
    if greedy is None:
        return None
    most = greedy[0]
    keys = order.tree.keys
    if by_entropy:
        kids = order.tree.children
        key = lambda d: (-int(st.lc[d]), -int(st.scl[d]), -_entropy(st, kids[d]), keys[d])  # noqa: E731
    else:
        key = lambda d: keys[d]  # noqa: E731
    # placements[i][leaders left][pods left] = the first set of i domains reaching that state
    placements: list[dict[int, dict[int, list[int]]]] = [{} for _ in range(most + 1)]
    placements[0][req.leaders] = {slices * req.slice_size: []}
    for d in sorted(domains, key=key):
        for i in range(most, 0, -1):
            for leaders_left in sorted(placements[i - 1]):
                for pods_left in sorted(placements[i - 1][leaders_left]):
                    if leaders_left <= 0 and pods_left <= 0:
                        continue
                    taken = [*placements[i - 1][leaders_left][pods_left], d]
                    if leaders_left > 0 and st.lc[d] > 0:
                        after = placements[i].setdefault(leaders_left - int(st.lc[d]), {})
                        after.setdefault(pods_left - int(st.pcl[d]), taken)
                    if st.sc[d] > 0:
                        placements[i].setdefault(leaders_left,
                                                 {}).setdefault(pods_left - int(st.pc[d]), taken)
    done = [left for left in placements[most].get(0, {}) if left <= 0]
    return placements[most][0][max(done)] if done else None


def _prune(st: DomainState, order: Order, candidates: list[int], threshold: int,
           req: PodSetRequest) -> None:
    """``pruneDomainsBelowThreshold``: clear the candidates' children (then, recounted, the
    candidates themselves) below the threshold, and the leader capacity of those that reach it
    only without the leader. Each candidate touches its own subtree only, so all go at once."""
    tree = order.tree

    def prune(domains: list[int]) -> None:
        low = [d for d in domains if st.sc[d] < threshold]
        no_leader = [d for d in domains if req.leaders and st.sc[d] >= threshold and st.lc[d] > 0
                     and st.scl[d] < threshold]
        if low:
            st.clear(tree.subtree(low))
        if no_leader:
            st.clear_leader(tree.subtree(no_leader))

    prune([k for d in candidates for k in tree.children[d]])
    refill(tree, st, req, tree.subtree(candidates))
    prune(candidates)


def _candidate(st0: DomainState, order: Order, siblings: list[int], req: PodSetRequest,
               best: int) -> tuple[int, int, DomainState] | None:
    """(threshold, domains used at the requested level, pruned counts) of one sibling set."""
    tree, slices = order.tree, req.count // req.slice_size
    st = st0.copy()
    lower = [k for d in siblings
             for k in tree.children[d]] if req.level > req.slice_level else siblings
    greedy = _greedy_take(st, order, lower, slices, req.leaders)
    if greedy is None:
        return None
    threshold = _threshold(st, slices, *greedy)
    if threshold < best:
        return None
    reserved = threshold
    if req.leaders and greedy[2] is not None:
        reserved = min(threshold, int(st.scl[greedy[2]]))
    _prune(st, order, siblings, threshold, req)
    after = _greedy_take(st, order, siblings, slices, req.leaders)
    if after is None and reserved < threshold:
        if reserved <= 0 or reserved < best:
            return None
        threshold, st = reserved, st0.copy()
        _prune(st, order, siblings, threshold, req)
        after = _greedy_take(st, order, siblings, slices, req.leaders)
    return None if after is None else (threshold, after[0], st)


def _spread(st: DomainState, order: Order, domains: list[int], req: PodSetRequest,
            threshold: int) -> list[int] | None:
    """``placeSlicesOnDomainsBalanced``: ``threshold`` slices on each chosen domain, extras in
    leader-first BestFit order."""
    chosen = _optimal_set(st, order, domains, req, by_entropy=False)
    slices = req.count // req.slice_size
    if chosen is None or slices < len(chosen) * threshold:
        return None
    extra, leaders = slices - len(chosen) * threshold, req.leaders
    chosen = order.with_leader(st, chosen, best_fit=True)
    for d in chosen:
        if leaders > 0:
            take, st.lc[d] = min(int(st.scl[d]) - threshold, extra), 1
            leaders -= 1
        else:
            take = min(int(st.sc[d]) - threshold, extra) if extra > 0 else 0
            st.lc[d] = 0
        st.sc[d] = st.scl[d] = threshold + take
        st.pc[d] = st.sc[d] * req.slice_size
        st.pcl[d] = st.pc[d] - st.lc[d]
        extra -= take
    return None if extra > 0 or leaders > 0 else chosen


def balanced_domains(st0: DomainState, order: Order, req: PodSetRequest) -> tuple[DomainState,
                                                                                  list[int]] | None:
    """The counts and domains balanced placement starts the descent from, or None (BestFit)."""
    tree = order.tree
    above = next((t for t in range(req.level + 1, tree.top + 1) if tree.levels.get(t)), None)
    if above is None:
        sibling_sets = [list(tree.levels.get(req.level, []))]
    else:
        sibling_sets = [tree.children[d] for d in sorted(tree.levels[above],
                                                         key=lambda d: tree.keys[d])]
    best, best_used, best_state, best_set = 0, 0, None, []
    for siblings in sibling_sets:
        got = _candidate(st0, order, list(siblings), req, best)
        if got is None:
            continue
        threshold, used, st = got
        if threshold > best or (threshold == best and used < best_used):
            best, best_used, best_state, best_set = threshold, used, st, list(siblings)
    if best <= 0 or best_state is None:
        return None
    st = best_state
    domains = best_set
    if req.level > req.slice_level:
        chosen = _optimal_set(st, order, domains, req, by_entropy=True)
        if chosen is None:
            return None
        domains = [k for d in chosen for k in tree.children[d]]
    spread = _spread(st, order, domains, req, best)
    return None if spread is None else (st, spread)

