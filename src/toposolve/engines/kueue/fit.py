"""Phase 2 building blocks of Kueue's TAS: domain order, BestFit, trimming to the count.

Re-expressed from ``sortedDomains``, ``sortedDomainsWithLeader``, ``findBestFitDomainBy``,
``prioritizeLeaderDomain``, ``consumeWithLeadersGeneric`` and ``updateCountsToMinimumGeneric``
(kueue ``pkg/cache/scheduler/tas_flavor_snapshot.go``). ``best_fit`` is False only for
LeastFreeCapacity (an unconstrained podset in the default "mixed" profile).
"""

from __future__ import annotations

from dataclasses import dataclass

from toposolve.engines.kueue.counts import DomainState
from toposolve.engines.kueue.tree import DomainTree


@dataclass
class Order:
    """How one request orders domains: label paths for ties, BestFit or LeastFreeCapacity."""

    tree: DomainTree
    best_fit: bool

    def domains(self, st: DomainState, domains: list[int],
                best_fit: bool | None = None) -> list[int]:
        """``sortedDomains``: affinity score desc (gate on), sliceCount (desc for BestFit, asc
        otherwise), podCount asc, path."""
        sign = -1 if (self.best_fit if best_fit is None else best_fit) else 1
        keys, sc, pc, aff = self.tree.keys, st.sc, st.pc, _scores(st)
        return sorted(domains, key=lambda d: (-aff[d], sign * int(sc[d]), int(pc[d]), keys[d]))

    def with_leader(self, st: DomainState, domains: list[int],
                    best_fit: bool | None = None) -> list[int]:
        """``sortedDomainsWithLeader``: leaderCount desc, affinity score desc (gate on), then the
        same on the with-leader counts."""
        sign = -1 if (self.best_fit if best_fit is None else best_fit) else 1
        keys, aff = self.tree.keys, _scores(st)
        return sorted(domains,
                key=lambda d: (-int(st.lc[d]), -aff[d], sign * int(st.scl[d]), int(st.pcl[d]),
                               keys[d]))


class _NoScores:
    """Every domain scores 0 (the affinity gate is off)."""

    def __getitem__(self, d: int) -> int:
        return 0


def _scores(st: DomainState):
    return _NoScores() if st.aff is None else st.aff.tolist()


def top_affinity_tier(st: DomainState, domains: list[int]) -> list[int]:
    """``topAffinityTierDomains``: the leading domains sharing the first one's affinity score
    (all of them with the gate off), so BestFit never trades affinity for a tighter fit."""
    if st.aff is None or not domains:
        return domains
    first = st.aff[domains[0]]
    for i, d in enumerate(domains):
        if st.aff[d] != first:
            return domains[:i]
    return domains


def best_fit_domain(st: DomainState, domains: list[int], needed: int, leaders: int,
                    slices: bool) -> int:
    """The first domain with the smallest count ≥ ``needed`` among those hosting ``leaders``
    (with-leader counts when leaders are asked for); ``domains[0]`` when none fits."""
    if slices:
        counts = st.scl if leaders > 0 else st.sc
    else:
        counts = st.pcl if leaders > 0 else st.pc
    domains = top_affinity_tier(st, domains)
    best, best_count = domains[0], None
    for d in domains:
        c = int(counts[d])
        if st.lc[d] >= leaders and c >= needed and (best_count is None or c < best_count):
            best, best_count = d, c
    return best


def prioritize_leader_domain(st: DomainState, domains: list[int], count: int, leaders: int,
                             size: int, slices: bool) -> list[int]:
    """Move to the front the first domain able to host the leader without losing the capacity
    the workers need (the parent's count assumed the smallest leader penalty)."""
    if leaders == 0 or len(domains) < 2:
        return domains
    units, with_leader = (st.sc, st.scl) if slices else (st.pc, st.pcl)
    required = count // size if slices else count
    available = sum(int(units[d]) for d in domains)
    for i, d in enumerate(domains):
        if st.lc[d] < leaders or available - int(units[d] - with_leader[d]) < required:
            continue
        return domains if i == 0 else [d, *domains[:i], *domains[i + 1 :]]
    return domains


@dataclass
class Remaining:
    units: int  # slices (or pods) still to place
    leaders: int


def _consume_with_leader(st: DomainState, domains: list[int], i: int, left: Remaining, size: int,
                         best_fit: bool, slices: bool) -> tuple[int, bool]:
    """``consumeWithLeadersGeneric``: take ``domains[i]`` (or the tightest fitting one) for the
    leader and as many units as it holds beside it; True when everything is placed."""
    d = domains[i]
    units, with_leader = (st.sc, st.scl) if slices else (st.pc, st.pcl)
    if best_fit and with_leader[d] >= left.units and st.lc[d] >= left.leaders:
        d = best_fit_domain(st, domains[i:], left.units, left.leaders, slices)
    if with_leader[d] >= left.units and st.lc[d] >= left.leaders:
        units[d] = left.units
        st.lc[d] = left.leaders
        st.pc[d] = left.units * size
        return d, True
    with_leader[d] = min(with_leader[d], left.units)
    st.lc[d] = min(st.lc[d], left.leaders)
    units[d] = with_leader[d]
    st.pc[d] = with_leader[d] * size
    left.leaders -= int(st.lc[d])
    left.units -= int(with_leader[d])
    return d, False


def update_counts_to_minimum(st: DomainState, domains: list[int], count: int, leaders: int,
                             size: int, best_fit: bool, slices: bool) -> list[int] | None:
    """``updateCountsToMinimumGeneric``: take domains in order (the leader's first) until the
    count is covered, swapping the last one for the tightest that still fits (BestFit); the
    taken domains' counts become what they hold of the request. None if they cannot hold it."""
    domains = prioritize_leader_domain(st, domains, count, leaders, size, slices)
    left = Remaining(count // size if slices else count, leaders)
    units = st.sc if slices else st.pc
    result: list[int] = []
    for i, d in enumerate(domains):
        if left.leaders > 0:
            d, done = _consume_with_leader(st, domains, i, left, size, best_fit, slices)
            result.append(d)
            if done:
                return result
            continue
        if best_fit and units[d] >= left.units:
            d = best_fit_domain(st, domains[i:], left.units, 0, slices)
        st.lc[d] = 0
        result.append(d)
        if units[d] >= left.units:
            st.pc[d] = left.units * (size if slices else 1)
            units[d] = left.units
            return result
        if slices:
            st.pc[d] = units[d] * size
        left.units -= int(units[d])
    return None
