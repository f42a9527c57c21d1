"""Order rows among interchangeable SubJobs and leaves, for probing a dumped stage model.

A probe of ``overload_stage_models.py`` (docs/cpsat-formulation.md, section 8): two redundant
symmetry-breaking orders, valid for any objective that does not tell the permuted parts apart
(``placed``, ``spread``, ``fragmentation``), chained in an order the model's hint meets so the
warm start stays a solution:

* **SubJobs** of one job that are identical (same policy, one pending group with the same
  request, pod count, minimum and allowed classes, no running pods, the same hard-level
  candidates): their chosen leaf's position is non-increasing along the chain (0: no pods);
* **leaves** of one level-1 domain holding the same node classes (same idle, same predicates,
  same sizes), on which nothing modelled runs and which every unit may choose alike: their new
  pods are non-increasing along the chain.

Sorting the SubJobs of a family by leaf keeps each leaf's pods, so both hold together.
``multiset`` adds, per family and leaf, the count of its SubJobs there and branches on those
counts first (the family's multiset as the decision, not the assignment).
"""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np
from ortools.sat.python import cp_model

from toposolve.core.problem import Problem
from toposolve.engines.cpsat.model.classes import Candidates


def subjob_families(problem: Problem, cands: Candidates) -> list[list[int]]:
    """Families (≥ 2) of interchangeable SubJobs with a leaf choice, each ascending."""
    if cands.gang_units:  # GangNodes may tell SubJobs of one job apart
        return []
    families: dict[tuple, list[int]] = defaultdict(list)
    for s, unit in sorted(cands.subjob_units.items()):
        if (len(unit.groups) != 1 or unit.running or unit.running_nodes
                or unit.hard_level != 0 or len(unit.hard_domains) < 2 or unit.crossing):
            continue
        g = unit.groups[0]
        key = (problem.subjobs[s].job, problem.subjobs[s].policy, unit.minimum,
               tuple(unit.hard_domains), problem.group_request[g].tobytes(),
               problem.group_pending_count(g), cands.allowed[g].tobytes(), cands.ub[g].tobytes(),
               tuple(sorted((lvl, tuple(d)) for lvl, d in unit.spread_domains.items())))
        families[key].append(s)
    return [ss for ss in families.values() if len(ss) > 1]


def identical_leaves(cands: Candidates) -> list[list[int]]:
    """Groups (≥ 2) of interchangeable leaves of one level-1 domain, each ascending."""
    classes = cands.classes
    if classes.base_count >= 0 or len(cands.levels.tiers) < 2:  # lifted model: not probed
        return []
    leaf_of, parent_of = cands.class_domain[0], cands.class_domain[1]
    per_leaf: dict[int, list[int]] = defaultdict(list)
    for c in range(len(classes)):
        per_leaf[int(leaf_of[c])].append(c)
    units = [*cands.job_units.values(), *cands.subjob_units.values()]
    running = {n for u in units for n in u.running_nodes}
    groups: dict[tuple, list[int]] = defaultdict(list)
    for h, cs in sorted(per_leaf.items()):
        nodes = np.concatenate([classes.nodes[c] for c in cs])
        keys = sorted(((classes.keys[c], int(classes.size[c])) for c in cs), key=repr)
        if h < 0 or running.intersection(nodes.tolist()) or len({k for k, _ in keys}) < len(cs):
            continue
        choices = tuple((h in u.hard_domains, h in u.spread_domains.get(0, ()),
                         u.crossing is not None) for u in units)
        groups[(int(parent_of[cs[0]]), tuple(keys), choices)].append(h)
    return [hs for hs in groups.values() if len(hs) > 1]


def add_order_rows(model: cp_model.CpModel, problem: Problem, cands: Candidates, *,
                   subjobs: bool, leaves: bool, multiset: bool = False) -> int:
    """Add the chosen rows to ``model`` (variables found by name); return how many."""
    proto = model.proto
    index = {v.name: i for i, v in enumerate(proto.variables)}
    hint = dict(zip(proto.solution_hint.vars, proto.solution_hint.values, strict=True))

    def var(i: int) -> cp_model.IntVar:
        return model.get_int_var_from_proto_index(i)

    def chain(entries: list[tuple[int, list[tuple[int, int]]]]) -> int:
        """Per item, its weighted variables ``(coefficient, proto index)``: weighted sums
        non-increasing, in the hint's order (ties: item order) so the hint stays a solution."""
        def hinted(terms):
            return sum(k * hint.get(i, 0) for k, i in terms)

        order = sorted(entries, key=lambda e: (-hinted(e[1]), e[0]))
        for (_, a), (_, b) in zip(order, order[1:], strict=False):
            model.add(sum(k * var(i) for k, i in a) >= sum(k * var(i) for k, i in b))
        return max(len(order) - 1, 0)

    rows = 0
    for family in subjob_families(problem, cands) if subjobs or multiset else []:
        doms = cands.subjob_units[family[0]].hard_domains
        lits = {s: [index[f"hard_s{s}_{h}"] for h in doms] for s in family}
        if subjobs:  # a SubJob's leaf position: 1, 2, ... in candidate order; 0 without pods
            rows += chain([(s, list(enumerate(lits[s], start=1))) for s in family])
        if multiset:
            counts = []
            for k, h in enumerate(doms):
                counts.append(model.new_int_var(0, len(family), f"multiset_{family[0]}_{h}"))
                model.add(counts[-1] == sum(var(lits[s][k]) for s in family))
            model.add_decision_strategy(counts, cp_model.CHOOSE_FIRST,
                                        cp_model.SELECT_MAX_VALUE)
    if leaves:
        pods: dict[int, list[int]] = defaultdict(list)  # leaf -> its count variables
        for name, i in index.items():
            m = re.fullmatch(r"x_\d+_(\d+)", name)
            if m:
                pods[int(cands.class_domain[0][int(m.group(1))])].append(i)
        for group in identical_leaves(cands):
            # a leaf nothing may use holds 0 anyway
            rows += chain([(h, [(1, i) for i in pods[h]]) for h in group if pods[h]])
    return rows
