"""The ``comm`` stage over the CP-SAT variables (:mod:`toposolve.policy.comm_stage`).

Per layout job ``j`` and level ``l`` below the root, a literal ``uses[j, l, d]`` for each cell
``d`` its ranked groups may use (a level-``l`` domain of their classes; a class outside every
level-``l`` domain is its own cell) that its running pods do not already hold, with
``x ≤ ub · uses`` for each of its count variables there, and ``one[j, l]`` ⇒ at most one cell,
``one ≤ y[j]``. With ``k = Σ uses + running cells · y[j]`` the stage is ``Σ tp_j · Δ_l ·
(k − one)`` (``k − y[j]`` for a chain): equal to the policy's value in the exact model; in a
coarse or lifted model, where a class or a merged domain class stands for several cells, a
lower bound (as spread is there). The ``dp_span`` and ``pp_span`` stages (:func:`span_expr`): per
job and level a literal that forces every cell's pod count to a multiple of the size of a DP
component (a pipeline). The ``edge_floor`` stage (:func:`floor_expr`): per job and leaf cell
its pod count and, through an element constraint, the fewest ring edges leaving that many pods.
"""

from __future__ import annotations

from ortools.sat.python import cp_model

from toposolve.core.problem import Problem
from toposolve.engines.cpsat.model.variables import Variables
from toposolve.policy.comm_stage import (
    comm_jobs,
    edge_factor,
    group_size,
    is_chain,
    job_pods,
    ranked_groups,
    tier_steps,
)
from toposolve.policy.edge_floor import job_table
from toposolve.policy.profiles import CommWeights
from toposolve.policy.span_floor import split_prices


def _class_of_node(xv: Variables) -> dict[int, int]:
    classes = xv.cands.classes
    return {int(n): c for c in range(classes.n_base) for n in classes.nodes[c].tolist()}


def _running_cells(xv: Variables, groups: list[int], level: int,
                   class_of: dict[int, int]) -> set[tuple]:
    """Cell keys of the nodes holding running pods of ``groups`` at ``level``."""
    return {_cell_key(xv, level, n, class_of) for g in groups
            for n, count in xv.problem.group_running[g].items() if count > 0}


def comm_expr(problem: Problem, xv: Variables,
              weights: CommWeights | None = None) -> tuple[cp_model.LinearExprT, int]:
    """The ``comm`` stage's expression and its largest value; fills ``xv.comm``."""
    cands, model, cv = xv.cands, xv.model, xv.comm
    steps = tier_steps([int(t) for t in cands.levels.tiers], weights)
    class_of = _class_of_node(xv) if any(problem.group_running) else {}
    expr: cp_model.LinearExprT = 0
    magnitude = 0
    for j in comm_jobs(problem):
        groups = ranked_groups(problem, j)
        entries = xv.pods_of(groups)
        if j not in xv.y or not entries:
            continue
        running = sum(sum(problem.group_running[g].values()) for g in groups)
        pending = sum(problem.group_pending_count(g) for g in groups)
        if running + sum(ub for *_, ub in entries) < 2:
            continue
        factor = edge_factor(problem, j, job_pods(problem, j))
        previous = None
        for level, step in enumerate(steps):
            held = _running_cells(xv, groups, level, class_of)
            by_cell = _new_cells(xv, level, entries, held)
            uses = _cell_uses(xv, j, level, by_cell, pending)
            k = sum(uses) + len(held) * xv.y[j]
            magnitude += factor * step * (len(uses) + len(held))
            if is_chain(problem, j):  # k cells need k - 1 crossings
                expr += factor * step * (k - xv.y[j])
                continue
            one = model.new_bool_var(f"comm_one_{j}_l{level}")
            model.add_implication(one, xv.y[j])
            model.add(sum(uses) + len(held) <= 1).only_enforce_if(one)
            if previous is not None:  # inside one cell below: inside one cell here too
                model.add_implication(previous, one)
            previous = one
            cv.single[(j, level)] = (one, list(by_cell), len(held))
            expr += factor * step * (k - one)
    return expr, magnitude


def _new_cells(xv: Variables, level: int, entries: list, held: set[tuple]) -> dict[tuple, list]:
    """Level-``level`` cell key → the count entries of ``entries`` there, cells in ``held``
    (already holding running pods of the job) left out."""
    by_cell: dict[tuple, list[tuple[int, int, cp_model.IntVar, int]]] = {}
    for entry in entries:
        d = int(xv.cands.class_domain[level][entry[1]])
        key = ("domain", d) if d >= 0 else ("class", entry[1])
        if key not in held:
            by_cell.setdefault(key, []).append(entry)
    return by_cell


def _cell_uses(xv: Variables, j: int, level: int, by_cell: dict[tuple, list],
               pending: int) -> list[cp_model.IntVar]:
    """Per cell of ``by_cell`` (cell key → count entries there) the literal "job ``j`` has new
    pods there" (``x ≤ ub · use``), made once per (job, level, cell) and kept in ``xv.comm``."""
    model, cv = xv.model, xv.comm
    uses = []
    for key, members in by_cell.items():
        if (j, level, key) not in cv.uses:
            use = model.new_bool_var(f"comm_use_{j}_l{level}_{key[0][0]}{key[1]}")
            for _, _, var, ub in members:
                model.add(var <= ub * use)
            # the job's pods in the cell, at most its pending pods: a tighter relaxation
            model.add(sum(m[2] for m in members) <= min(pending, sum(m[3] for m in members))
                      * use)
            cv.uses[(j, level, key)] = use
            cv.covers[(j, level, key)] = [(g, c) for g, c, _, _ in members]
        uses.append(cv.uses[(j, level, key)])
    return uses


def _cell_key(xv: Variables, level: int, node: int, class_of: dict[int, int]) -> tuple:
    d = int(xv.cands.levels.domain[level, xv.problem.topology.node_home[node]])
    return ("domain", d) if d >= 0 else ("class", class_of.get(node, -1 - node))


def span_expr(problem: Problem, xv: Variables, weights: CommWeights | None = None,
              axis: str = "dp") -> tuple[cp_model.LinearExprT, int]:
    """The ``dp_span`` (``axis="dp"``) or ``pp_span`` (``"pp"``) stage: per job of
    :func:`~toposolve.policy.comm_stage.group_size` and level, a literal ``aligned`` (⇒ ``y[j]``,
    and ⇒ aligned one level up) that forces every cell's pods (new + running) to ``size · q``;
    the expression ``Σ Δ_l (y[j] − aligned)`` (DP: levels from ``dp_span_from_level`` up).
    Fills ``xv.comm.aligned``."""
    steps = tier_steps([int(t) for t in xv.cands.levels.tiers], weights)
    start = (weights or CommWeights()).dp_span_from_level if axis == "dp" else 0
    class_of = _class_of_node(xv) if any(problem.group_running) else {}
    expr: cp_model.LinearExprT = 0
    counted = set()
    for j in comm_jobs(problem):
        size = group_size(problem, j, axis)
        if size is None or j not in xv.y or not xv.pods_of(ranked_groups(problem, j)):
            continue
        counted.add(j)
        previous = None
        for level, step in enumerate(steps):
            if level < start:
                continue
            aligned = _aligned_literal(problem, xv, j, level, size, axis, class_of)
            if previous is not None:  # cells one level up are unions of these
                xv.model.add_implication(previous, aligned)
            previous = aligned
            expr += step * (xv.y[j] - aligned)
    return expr, sum(steps[start:]) * len(counted)


def _aligned_literal(problem: Problem, xv: Variables, j: int, level: int, size: int, axis: str,
                     class_of: dict[int, int]) -> cp_model.IntVar:
    """The literal "every level-``level`` cell holds a multiple of ``size`` of job ``j``'s
    ranked pods (new + running)" (⇒ ``y[j]``), made once per (job, level, axis)."""
    if (j, level, axis) in xv.comm.aligned:
        return xv.comm.aligned[(j, level, axis)][0]
    model, groups = xv.model, ranked_groups(problem, j)
    cells: dict[tuple, tuple[list, int]] = {}
    for g, c, var, ub in xv.pods_of(groups):
        d = int(xv.cands.class_domain[level][c])
        members, _ = cells.setdefault(("domain", d) if d >= 0 else ("class", c), ([], 0))
        members.append((g, c, var, ub))
    for g in groups:
        for n, count in problem.group_running[g].items():
            key = _cell_key(xv, level, n, class_of)
            members, held = cells.get(key, ([], 0))
            cells[key] = (members, held + max(0, count))
    aligned = model.new_bool_var(f"{axis}_aligned_{j}_l{level}")
    model.add_implication(aligned, xv.y[j])
    stored = []
    for members, held in cells.values():
        most = held + sum(m[3] for m in members)
        q = model.new_int_var(0, most // size, f"{axis}_q_{j}_l{level}")
        model.add(sum(m[2] for m in members) + held == size * q).only_enforce_if(aligned)
        stored.append((q, [(g, c) for g, c, _, _ in members], held))
    xv.comm.aligned[(j, level, axis)] = (aligned, size, stored)
    return aligned


def _pin_aligned(xv: Variables, j: int, level: int) -> None:
    """Make job ``j``'s ``dp`` literal of ``level`` exact: a placed job whose every cell holds a
    multiple of ``dp`` has it true (each cell's count is ``dp · q + r``, ``r < dp``; a false
    literal needs some ``r ≥ 1``). The ``span_floor`` stage prices the literal, so left free
    it would be false wherever that is cheaper (:func:`span_expr` alone pushes it true)."""
    key = (j, level, "dp")
    if key in xv.comm.remainders:
        return
    aligned, size, cells = xv.comm.aligned[key]
    x = {(g, c): var for g, c, var, _ in xv.pods_of(ranked_groups(xv.problem, j))}
    rests = []
    for q, members, held in cells:
        rest = xv.model.new_int_var(0, size - 1, f"dp_rest_{j}_l{level}")
        xv.model.add(sum(x[m] for m in members) + held == size * q + rest)
        rests.append(rest)
    xv.model.add(sum(rests) >= 1).only_enforce_if([~aligned, xv.y[j]])
    xv.comm.remainders[key] = rests


def _leaf_cells(xv: Variables, groups: list[int], entries: list,
                class_of: dict[int, int]) -> dict[tuple, tuple[list, int]]:
    """Level-0 cell key → (count variables of ``entries`` there, running pods of ``groups``)."""
    cells: dict[tuple, tuple[list, int]] = {}
    for g, c, var, ub in entries:
        d = int(xv.cands.class_domain[0][c])
        members, _ = cells.setdefault(("domain", d) if d >= 0 else ("class", c), ([], 0))
        members.append((g, c, var, ub))
    for g in groups:
        for n, count in xv.problem.group_running[g].items():
            key = _cell_key(xv, 0, n, class_of)
            members, held = cells.get(key, ([], 0))
            cells[key] = (members, held + max(0, count))
    return cells


def floor_expr(problem: Problem, xv: Variables) -> tuple[cp_model.LinearExprT, int]:
    """The ``edge_floor`` stage: per layout job with a
    :func:`~toposolve.policy.edge_floor.job_table` and leaf cell, ``n = Σ x + running · y[j]``
    and ``f = table[n]`` (element constraint); the expression ``Σ f``. Fills
    ``xv.comm.floors``."""
    class_of = _class_of_node(xv) if any(problem.group_running) else {}
    expr: cp_model.LinearExprT = 0
    magnitude = 0
    for j in comm_jobs(problem):
        for _, value, most, _ in _leaf_floors(problem, xv, j, class_of):
            expr += value
            magnitude += most
    return expr, magnitude


def _leaf_floors(problem: Problem, xv: Variables, j: int,
                 class_of: dict[int, int]) -> list[tuple]:
    """Per leaf cell job ``j``'s pods may use: its pod count, its table value, the largest
    value and the largest count (made once per job and leaf, kept in ``xv.comm.floors``); none
    without a table."""
    model, cv = xv.model, xv.comm
    table = job_table(problem, j)
    groups = ranked_groups(problem, j)
    entries = xv.pods_of(groups)
    if table is None or j not in xv.y or not entries:
        return []
    out = []
    for key, (members, held) in _leaf_cells(xv, groups, entries, class_of).items():
        most = min(len(table) - 1, held + sum(m[3] for m in members))
        if (j, key) not in cv.floors:
            count = model.new_int_var(0, most, f"floor_n_{j}_{key[0][0]}{key[1]}")
            model.add(count == sum(m[2] for m in members) + held * xv.y[j])
            value = model.new_int_var(0, max(table[:most + 1]),
                                      f"floor_f_{j}_{key[0][0]}{key[1]}")
            model.add_element(count, list(table[:most + 1]), value)
            cv.floors[(j, key)] = (count, value, [(g, c) for g, c, _, _ in members], held,
                                   table)
        count, value, *_ = cv.floors[(j, key)]
        out.append((count, value, max(table[:most + 1]), most))
    return out


def span_floor_expr(problem: Problem, xv: Variables,
                    weights: CommWeights | None = None) -> tuple[cp_model.LinearExprT, int]:
    """The ``span_floor`` stage (:mod:`toposolve.policy.span_floor`): per job, ``v`` is the
    larger of ``Σ f`` (the leaf floors of :func:`floor_expr`) and, when the job's ``dp`` literal
    of the capped level ``c`` (``dp_span_from_level``) is true, ``per_cell · (k_c − 1) +
    per_leaf · Σ partial`` (``k_c`` its level-``c`` cells, ``partial`` a leaf count not a
    multiple of ``dp``; 0 otherwise); the expression ``Σ v``. The literal is made exact
    (:func:`_pin_aligned`), so the stage is its value after any stage, not only after
    ``dp_span``'s proven optimum. Fills ``xv.comm.span_floors``."""
    model = xv.model
    levels = len(tier_steps([int(t) for t in xv.cands.levels.tiers], weights))
    level = min((weights or CommWeights()).dp_span_from_level, levels - 1)
    class_of = _class_of_node(xv) if any(problem.group_running) else {}
    expr: cp_model.LinearExprT = 0
    magnitude = 0
    for j in comm_jobs(problem):
        floors = _leaf_floors(problem, xv, j, class_of)
        prices = split_prices(problem, j)
        if not floors or prices is None or level < 0:
            expr += sum(f[1] for f in floors)
            magnitude += sum(f[2] for f in floors)
            continue
        per_cell, per_leaf = prices
        dp = group_size(problem, j, "dp")
        aligned = _aligned_literal(problem, xv, j, level, dp, "dp", class_of)
        _pin_aligned(xv, j, level)
        groups = ranked_groups(problem, j)
        held = _running_cells(xv, groups, level, class_of)
        pending = sum(problem.group_pending_count(g) for g in groups)
        uses = _cell_uses(xv, j, level, _new_cells(xv, level, xv.pods_of(groups), held),
                          pending)
        partials = []
        for count, _, _, top in floors:
            partial = model.new_bool_var(f"span_partial_{j}_{len(partials)}")
            model.add_element(count, [int(n % dp != 0) for n in range(top + 1)], partial)
            partials.append((partial, count))
        floor = model.new_int_var(0, sum(f[2] for f in floors), f"span_leaves_{j}")
        model.add(floor == sum(f[1] for f in floors))
        most_split = per_cell * (len(uses) + len(held)) + per_leaf * len(partials)
        split = model.new_int_var(0, most_split, f"span_split_{j}")
        model.add(split == per_cell * (sum(uses) + len(held) - 1)  # aligned: placed
                  + per_leaf * sum(p for p, _ in partials)).only_enforce_if(aligned)
        model.add(split == 0).only_enforce_if(~aligned)
        most = max(sum(f[2] for f in floors), most_split)
        v = model.new_int_var(0, most, f"span_floor_{j}")
        model.add_max_equality(v, [floor, split])  # no slack: v is the value at every solution
        xv.comm.span_floors[j] = (v, aligned, partials, [f[1] for f in floors], uses, len(held),
                                  prices, dp, floor, split)
        expr += v
        magnitude += most
    return expr, magnitude


def comm_hint(xv: Variables, counts: dict, put) -> None:
    """Hint values of ``xv.comm`` for per-group class counts ``counts`` (as the hint's)."""
    seen: dict[int, int] = {}

    def keep(var, value) -> None:
        put(var, value)
        seen[var.index] = int(value)

    _aligned_hint(xv, counts, keep)
    _floor_hint(xv, counts, keep)
    _uses_hint(xv, counts, keep)
    for v, aligned, partials, values, uses, held, (per_cell, per_leaf), dp, floor_var, split_var \
            in xv.comm.span_floors.values():
        for partial, count in partials:
            keep(partial, seen[count.index] % dp != 0)
        floor = sum(seen[f.index] for f in values)
        split = 0
        if seen[aligned.index]:  # aligned: placed
            split = (per_cell * (sum(seen[u.index] for u in uses) + held - 1)
                     + per_leaf * sum(seen[p.index] for p, _ in partials))
        put(floor_var, floor)
        put(split_var, split)
        put(v, max(floor, split))


def _uses_hint(xv: Variables, counts: dict, put) -> None:
    """Hint values of ``xv.comm.uses`` and ``single`` for per-group class counts ``counts``."""
    cv, cands = xv.comm, xv.cands
    if not cv.uses and not cv.single:
        return
    used: set[tuple[int, int]] = set()
    for g, per in counts.items():
        used.update((g, c) for c, n in zip(cands.allowed[g].tolist(), per.tolist(), strict=True)
                    if n > 0)
    on = {key: any(m in used for m in members) for key, members in cv.covers.items()}
    for key, use in cv.uses.items():
        put(use, on[key])
    for (j, level), (one, keys, held) in cv.single.items():
        placed = any((g, c) in used for g in cands.job_units[j].groups
                     for c in cands.allowed.get(g, []).tolist())
        put(one, placed and held + sum(on[(j, level, k)] for k in keys) <= 1)


def _aligned_hint(xv: Variables, counts: dict, put) -> None:
    """Hint values of ``xv.comm.aligned`` for per-group class counts ``counts``."""
    cands = xv.cands
    for key, (aligned, dp, cells) in xv.comm.aligned.items():
        j = key[0]
        placed = any(int(counts[g].sum()) > 0 for g in cands.job_units[j].groups if g in counts)
        totals = []
        for q, members, held in cells:
            total = held
            for g, c in members:
                if g in counts:
                    total += int(counts[g][cands.allowed[g].tolist().index(c)])
            totals.append((q, total))
        on = placed and all(total % dp == 0 for _, total in totals)
        put(aligned, on)
        for q, total in totals:
            put(q, total // dp)
        for rest, (_, total) in zip(xv.comm.remainders.get(key, []), totals, strict=False):
            put(rest, total % dp)  # (none where the literal is not made exact)


def _floor_hint(xv: Variables, counts: dict, put) -> None:
    """Hint values of ``xv.comm.floors`` for per-group class counts ``counts``."""
    cands = xv.cands
    for (j, _), (count, value, members, held, table) in xv.comm.floors.items():
        placed = any(int(counts[g].sum()) > 0 for g in cands.job_units[j].groups if g in counts)
        total = held * placed + sum(int(counts[g][cands.allowed[g].tolist().index(c)])
                                    for g, c in members if g in counts)
        put(count, total)
        put(value, table[min(total, len(table) - 1)])
