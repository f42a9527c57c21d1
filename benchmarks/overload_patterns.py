"""Packing-pattern rows for probing a dumped stage model (docs/cpsat-formulation.md, section 8).

Units of whole-node pods (no two share a node), all-or-nothing (minimum = pending pods, nothing
running), that put all their pods in one leaf when they choose it — their own hard limit at the
leaf level (``hard_*``) or placed ``within`` the leaf (``use_*_l0`` and ``has``) — are counted
per size and leaf. ``per="leaf"``: a one-hot pattern per leaf picks a multiset of sizes fitting
its free nodes, linked to those counts, so the LP is the convex hull of the leaf's packings (the
configuration LP of bin packing, Gilmore-Gomory) instead of the knapsack row. ``per="domain"``:
one per level-1 domain over the leaves' summed counts (each sum packs leaf by leaf) and the
units spread over its leaves (no leaf candidate), which fit the nodes the leaf units leave.
Sizes below ``min_size`` are left out (their pods are only not counted: still valid).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from ortools.sat.python import cp_model

from toposolve.core.problem import Problem
from toposolve.engines.cpsat.model.classes import Candidates


def whole_node_groups(problem: Problem, cands: Candidates) -> set[int]:
    """Groups whose pod takes over half of some resource of every allowed node: two such
    pods, of any of these groups, never share a node."""
    idle = cands.classes.idle
    out = set()
    for g, allowed in cands.allowed.items():
        req = problem.group_request[g]
        if all(bool(np.any(2 * req > idle[c])) for c in allowed.tolist()):
            out.add(g)
    return out


def whole_node_free(cands: Candidates, groups: set[int]) -> dict[int, int]:
    """Leaf -> its nodes some whole-node group may use."""
    leaf_of = cands.class_domain[0]
    classes = sorted({c for g in groups for c in cands.allowed[g].tolist()})
    free: dict[int, int] = defaultdict(int)
    for c in classes:
        free[int(leaf_of[c])] += int(cands.classes.size[c])
    return dict(free)


def leaf_units(problem: Problem, cands: Candidates, whole: set[int],
               level: int = 0) -> dict[int, list[tuple[int, str, str]]]:
    """Leaf -> (size, choice literal name, has literal name or '') of the fixed-size units of
    whole-node pods; ``level`` 1: those choosing a level-1 domain that cannot be within a
    leaf (no leaf candidates: all their pods in the domain, spread over its leaves)."""
    out: dict[int, list[tuple[int, str, str]]] = defaultdict(list)
    for kind, units in (("j", cands.job_units), ("s", cands.subjob_units)):
        for i, unit in sorted(units.items()):
            size = sum(problem.group_pending_count(g) for g in unit.groups)
            if (unit.running or unit.trivial or unit.minimum != size or unit.crossing
                    or not set(unit.groups) <= whole):
                continue
            has = f"y_{i}" if kind == "j" else f"v_{i}"
            if (unit.hard_level == level and len(unit.hard_domains) > 1
                    and not (level and unit.spread_domains.get(0))):  # a leaf item instead
                for h in unit.hard_domains:
                    out[h].append((size, f"hard_{kind}{i}_{h}", ""))
            elif level == 0 and len(unit.spread_domains.get(0, ())) > 1:
                for h in unit.spread_domains[0]:
                    out[h].append((size, f"use_{kind}{i}_l0_{h}", has))
            elif (level == 1 and not unit.spread_domains.get(0)
                  and unit.hard_level is None and len(unit.spread_domains.get(1, ())) > 1):
                for h in unit.spread_domains[1]:  # cannot be within a leaf: a level-1 item
                    out[h].append((size, f"use_{kind}{i}_l1_{h}", has))
    return out


def patterns(free: int, avail: dict[int, int]) -> list[dict[int, int]]:
    """Every multiset of sizes (at most ``avail[s]`` of size ``s``) of total ≤ ``free``."""
    sizes = sorted(avail, reverse=True)
    out: list[dict[int, int]] = []

    def extend(k: int, left: int, chosen: dict[int, int]) -> None:
        if k == len(sizes):
            out.append(dict(chosen))
            return
        s = sizes[k]
        for n in range(min(avail[s], left // s) + 1):
            chosen[s] = n
            extend(k + 1, left - n * s, chosen)
        del chosen[s]

    extend(0, free, {})
    return out


class _Rows:
    """The model, its variables by name and its hint."""

    def __init__(self, model: cp_model.CpModel) -> None:
        self.model = model
        self.index = {v.name: i for i, v in enumerate(model.proto.variables)}
        self.hint = dict(zip(model.proto.solution_hint.vars, model.proto.solution_hint.values,
                             strict=True))

    def counts(self, units) -> tuple[dict[int, list], dict[int, int]]:
        """Per size, the literals 'this unit is placed with all its pods in the domain', and
        the warm start's count."""
        model, index, var = self.model, self.index, self.model.get_int_var_from_proto_index
        counts: dict[int, list] = defaultdict(list)
        hinted: dict[int, int] = defaultdict(int)
        for size, choice, has in units:
            if choice not in index:
                continue
            lit = var(index[choice])
            on = bool(self.hint.get(index[choice], 0)
                      and (not has or self.hint.get(index[has], 0)))
            hinted[size] += on
            if has:  # within the domain and placed: all its pods there
                both = model.new_bool_var(f"pat_{choice}")
                model.add_bool_and([lit, var(index[has])]).only_enforce_if(both)
                model.add_bool_or([lit.Not(), var(index[has]).Not()]).only_enforce_if(both.Not())
                model.add_hint(both, on)
                lit = both
            counts[size].append(lit)
        return counts, hinted

    def one_hot(self, name: str, pats: list[dict], counts: dict, hinted: dict) -> int:
        """A one-hot choice among ``pats`` linked to ``counts``; the hint's pattern hinted."""
        model = self.model
        z = [model.new_bool_var(f"pat_{name}_{k}") for k in range(len(pats))]
        model.add_exactly_one(z)
        for p, zk in zip(pats, z, strict=True):  # the warm start stays a full hint
            model.add_hint(zk, all(p.get(key, 0) == hinted[key] for key in counts))
        for key, lits in counts.items():
            model.add(sum(p.get(key, 0) * zk for p, zk in zip(pats, z, strict=True))
                      == sum(lits))
        return len(z)


def add_pattern_rows(model: cp_model.CpModel, problem: Problem, cands: Candidates,
                     cap: int = 20000, per: str = "leaf", min_size: int = 1) -> tuple[int, int]:
    """Add the pattern rows (variables found by name) per leaf or per level-1 domain (leaves'
    counts summed, plus units spread over its leaves); return (domains, pattern variables)."""
    rows = _Rows(model)
    whole = whole_node_groups(problem, cands)
    free = whole_node_free(cands, whole)
    by_leaf = {h: [u for u in us if u[0] >= min_size]
               for h, us in leaf_units(problem, cands, whole).items() if h in free}
    domains = nvars = 0
    if per == "leaf":
        for h, units in sorted(by_leaf.items()):
            counts, hinted = rows.counts(units)
            pats = patterns(free[h], {s: len(ls) for s, ls in counts.items()})
            if len(counts) >= 2 and len(pats) <= cap:  # one size: the rounded knapsack
                nvars += rows.one_hot(str(h), pats, counts, hinted)
                domains += 1
        return domains, nvars
    parent = {int(h): int(d) for h, d in zip(cands.class_domain[0], cands.class_domain[1],
                                             strict=True)}
    spread = leaf_units(problem, cands, whole, level=1)
    for d in sorted(set(parent.values())):
        leaves = [h for h in sorted(free) if parent.get(h) == d]
        counts, hinted = defaultdict(list), defaultdict(int)
        sets = []
        for h in leaves:
            c, n = rows.counts(by_leaf.get(h, []))
            for s in c:
                counts[("l", s)] += c[s]
                hinted[("l", s)] += n[s]
            sets.append(patterns(free[h], {s: len(ls) for s, ls in c.items()}))
        c, n = rows.counts([u for u in spread.get(d, []) if u[0] >= min_size])
        for s in c:
            counts[("d", s)] += c[s]
            hinted[("d", s)] += n[s]
        pats = domain_patterns(sets, sum(free[h] for h in leaves),
                               {s: len(ls) for s, ls in c.items()}, cap)
        if pats is not None and len(counts) >= 2:
            nvars += rows.one_hot(f"d{d}", pats, counts, hinted)
            domains += 1
    return domains, nvars


def domain_patterns(leaf_sets: list[list[dict[int, int]]], free: int, avail: dict[int, int],
                    cap: int) -> list[dict] | None:
    """Sums of one pattern per leaf (keys ``("l", size)``), each with every multiset of the
    spread units (keys ``("d", size)``) fitting the nodes left; None beyond ``cap``."""
    sums = {()}
    for pats in leaf_sets:
        sums = {tuple(sorted((dict(a) | {s: dict(a).get(s, 0) + n for s, n in p.items()})
                             .items())) for a in sums for p in pats}
        if len(sums) > cap:
            return None
    out = []
    for a in sorted(sums):
        left = free - sum(s * n for s, n in a)
        for m in patterns(left, avail):
            out.append({("l", s): n for s, n in a} | {("d", s): n for s, n in m.items()})
            if len(out) > cap:
                return None
    return out
