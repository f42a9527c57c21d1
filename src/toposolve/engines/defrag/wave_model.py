"""Waves inside CP-SAT's full defragmentation model (``--max-waves N``, N > 1).

Per cell (group, node) of a running job, ``out[g, n, w]`` of its pods leave the node in wave
``w`` and ``in[g, n, w]`` arrive; per group and wave as many arrive as leave (with a repair
job's pods off failed nodes, ``failed[g, w]``). A cell keeps ``min(x, pods there now)`` (the
plan's rule, :func:`~toposolve.engines.defrag.common.pod_changes`), so the counts are the
plan's moves. Once each wave but the last is done, every node that may receive pods holds no
more than its allocatable (the checker's ``wave`` rule; a node already over it receives no pod
of the resource before the last wave). Each PodDisruptionBudget bounds each wave by its
allowance now: ``charged[k, g, n, w] ≤ out[g, n, w]`` sums over the waves to the charged pods
the cell loses; a cell where charged pods of two budgets share leaves in one wave, each budget
counting all its charged pods there. Rationale: ``docs/defrag.md`` ("Waves").
"""

from __future__ import annotations

from collections import defaultdict

from ortools.sat.python import cp_model

Key = tuple[int, int, int]  # (group, node, wave)


class WaveModel:
    """The wave variables and constraints added to one full model (``model``: the engine's
    model object, with ``m``, ``di``, ``on``, ``x``, ``stay_at`` and ``cell_leave``)."""

    def __init__(self, model, waves: int) -> None:
        self.model, self.waves = model, waves
        self.out: dict[Key, cp_model.IntVar] = {}
        self.arrive: dict[Key, cp_model.IntVar] = {}
        self.failed: dict[tuple[int, int], cp_model.IntVar] = {}  # (group, wave)
        self.charged: dict[tuple[int, int, int, int], cp_model.IntVar] = {}  # (k, g, n, w)
        self.one: dict[Key, cp_model.IntVar] = {}  # a shared cell's single wave
        self.here: dict[tuple[int, int], int] = {}  # (group, node) -> pods there now
        self._cells()
        self._capacity()
        self._budgets()

    @property
    def variables(self) -> list:
        return [*self.out.values(), *self.arrive.values(), *self.failed.values(),
                *self.charged.values(), *self.one.values()]

    def _cells(self) -> None:
        model, m, span = self.model, self.model.m, range(1, self.waves + 1)
        nodes_of: dict[int, list[int]] = defaultdict(list)
        for g, n in model.x:
            nodes_of[g].append(n)
        for unit in [*model.di.movable, *model.di.repairs]:
            on = model.on[unit.job]
            for g, count in unit.counts.items():
                current = unit.current.get(g, {})
                for n in sorted(set(current) | set(nodes_of[g])):
                    here, x = current.get(n, 0), model.x.get((g, n))
                    stay = model.stay_at.get((g, n))
                    if stay is not None:  # the plan keeps min(x, here) pods in place
                        m.add_min_equality(stay, [x, here])
                    if here:
                        self.here[g, n] = here
                        outs = [self._var(self.out, (g, n, w), here, "wave_out") for w in span]
                        m.add(sum(outs) == here * on - (0 if stay is None else stay))
                    if x is not None:
                        ins = [self._var(self.arrive, (g, n, w), count, "wave_in") for w in span]
                        m.add(sum(ins) == x - (0 if stay is None else stay))
                lost = count - sum(current.values()) if unit.repair else 0
                if lost:
                    gone = [self.failed.setdefault((g, w), m.new_int_var(
                        0, lost, f"wave_failed_{g}_{w}")) for w in span]
                    m.add(sum(gone) == lost * on)
                for w in span:
                    m.add(sum(self.arrive.get((g, n, w), 0) for n in nodes_of[g])
                          == sum(self.out.get((g, n, w), 0) for n in current)
                          + self.failed.get((g, w), 0))

    def _var(self, store: dict, key: Key, top: int, name: str) -> cp_model.IntVar:
        # names are the solution's keys (``_Stages.values``): unique across the whole model
        store[key] = self.model.m.new_int_var(0, top, f"{name}_{key[0]}_{key[1]}_{key[2]}")
        return store[key]

    def _capacity(self) -> None:
        """Once each wave but the last is done, a node that may receive pods holds no more than
        its allocatable, per resource its running jobs' pods there request."""
        model, m = self.model, self.model.m
        p, base = model.di.problem, model.di.base_free
        groups_at: dict[int, set[int]] = defaultdict(set)
        for g, n, _ in [*self.out, *self.arrive]:
            groups_at[n].add(g)
        receiving = sorted({n for _, n, _ in self.arrive})
        for n in receiving:
            for r in range(len(p.resources)):
                gs = sorted(g for g in groups_at[n] if p.group_request[g][r] > 0)
                now = sum(int(p.group_request[g][r]) * self.here.get((g, n), 0) for g in gs)
                if not gs:
                    continue
                if now > base[n, r]:  # over already (not the plan's doing): no arrival before
                    for g in gs:
                        for w in range(1, self.waves):
                            if (g, n, w) in self.arrive:
                                m.add(self.arrive[g, n, w] == 0)
                    continue
                change = []
                for w in range(1, self.waves):
                    change += [int(p.group_request[g][r]) * (self.arrive.get((g, n, w), 0)
                                                             - self.out.get((g, n, w), 0))
                               for g in gs]
                    m.add(sum(change) <= int(base[n, r]) - now)

    def _budgets(self) -> None:
        """Per budget and wave: the charged pods leaving ≤ its allowance now."""
        model, m, span = self.model, self.model.m, range(1, self.waves + 1)
        per: dict[tuple[int, int], list] = defaultdict(list)  # (budget, wave) -> terms
        for k, g, n, c, leave, shared in model.cell_leave:
            if shared:
                for w in span:
                    per[k, w].append(c * self._one(g, n, w))
                continue
            cs = []
            for w in span:
                var = m.new_int_var(0, c, f"wave_charged_{k}_{g}_{n}_{w}")
                self.charged[k, g, n, w] = var
                m.add(var <= self.out[g, n, w])
                per[k, w].append(var)
                cs.append(var)
            m.add(sum(cs) >= leave)
        for k, use in enumerate(model.di.budgets.uses):
            allowed = use.allowed if use.per_wave is None else use.per_wave
            for w in span:
                if per[k, w]:
                    m.add(sum(per[k, w]) <= allowed)

    def _one(self, g: int, n: int, w: int) -> cp_model.IntVar:
        """Whether shared cell (g, n) empties in wave ``w`` (one wave at most)."""
        if (g, n, 1) not in self.one:
            m, span = self.model.m, range(1, self.waves + 1)
            ones = [self._bool(g, n, v) for v in span]
            m.add(sum(ones) <= 1)
            for v, one in zip(span, ones, strict=True):
                m.add(self.out[g, n, v] <= self.here[g, n] * one)
        return self.one[g, n, w]

    def _bool(self, g: int, n: int, w: int) -> cp_model.IntVar:
        self.one[g, n, w] = self.model.m.new_bool_var(f"wave_one_{g}_{n}_{w}")
        return self.one[g, n, w]

    def counts(self, values: dict[str, int]) -> dict[int, dict[int, dict]]:
        """A solution's moves per group and wave (``DefragResult.waved``)."""
        out: dict[int, dict[int, dict]] = {}

        def cell(g: int, w: int) -> dict:
            return out.setdefault(g, {}).setdefault(w, {"out": {}, "in": {}, "charged": {},
                                                         "failed": 0})

        for kind, store in (("out", self.out), ("in", self.arrive)):
            for (g, n, w), var in store.items():
                if values.get(var.name):
                    cell(g, w)[kind][n] = values[var.name]
        for (_, g, n, w), var in self.charged.items():
            if values.get(self.out[g, n, w].name):  # 0 too: the wave's cap on charged pods
                counted = cell(g, w)["charged"]
                counted[n] = counted.get(n, 0) + values.get(var.name, 0)
        for (g, w), var in self.failed.items():
            if values.get(var.name):
                cell(g, w)["failed"] = values[var.name]
        return out

    def hint(self, rows: list[tuple[str, int, int]], waves: list[int],
             charged_pods: frozenset[str]) -> dict[str, int]:
        """Values of the wave variables for moves ``rows`` in ``waves`` (the greedy
        sequencer's), as a warm start."""
        p, values = self.model.di.problem, {v.name: 0 for v in self.variables}
        failed, at = self.model.di.failed, defaultdict(int)  # (g, node, wave) -> charged

        def bump(var) -> None:
            if var is not None:
                values[var.name] += 1

        for (pod, source, to), w in zip(rows, waves, strict=True):
            g = p.pod_group[pod]
            gone = failed is not None and bool(failed[source])
            bump(self.failed.get((g, w)) if gone else self.out.get((g, source, w)))
            bump(self.arrive.get((g, to, w)))
            if (g, source, w) in self.one:
                values[self.one[g, source, w].name] = 1
            at[g, source, w] += pod in charged_pods
        for (_, g, n, w), var in self.charged.items():
            values[var.name] = at.get((g, n, w), 0)
        return values

    def hint_kept(self, values: dict[str, int]) -> None:
        """Complete a hint (in place): each cell's ``stay`` (``min(x, here)``) and charged pods
        leaving (the sum of its hinted ``charged`` over the waves); a complete hint is a
        solution to start from, not a search to finish."""
        model = self.model
        for (g, n), stay in model.stay_at.items():
            values[stay.name] = min(values.get(model.x[g, n].name, 0), self.here[g, n])
        leaves = {v.name for v in model.leave}
        for k, g, n, _, leave, shared in model.cell_leave:
            if not shared and getattr(leave, "name", None) in leaves:
                values[leave.name] = sum(values.get(self.charged[k, g, n, w].name, 0)
                                         for w in range(1, self.waves + 1))
