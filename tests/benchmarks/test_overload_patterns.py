"""The pattern rows of the overload probe (benchmarks/overload_patterns.py) keep every optimum:
small superpods, each stage solved alone with and without them; the enumerations against brute
force."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

from toposolve.core.problem import compile_problem
from toposolve.generate import generate

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from overload_patterns import add_pattern_rows, domain_patterns, patterns  # noqa: E402

from tests.benchmarks.stage_optimum import stage_optimum  # noqa: E402


def _optimum(problem, stage: str, per: str | None) -> tuple[float, tuple[int, int]]:
    rows = (lambda pm: add_pattern_rows(pm.model, problem, pm.cands, per=per)) if per else None
    value, added = stage_optimum(problem, stage, rows)
    return value, added or (0, 0)


@pytest.mark.parametrize(("nodes", "seed"), [(96, 0), (128, 1)])
@pytest.mark.parametrize("stage", ["placed", "spread", "fragmentation"])
def test_pattern_rows_keep_the_optimum(nodes, seed, stage):
    problem = compile_problem(generate("superpod", nodes=nodes, load=1.2, seed=seed,
                                       occupancy=0.15))
    plain, _ = _optimum(problem, stage, None)
    for per in ("leaf", "domain"):
        value, (domains, variables) = _optimum(problem, stage, per)
        assert domains > 0 and variables > domains  # the rows have work
        assert value == plain


def _brute(free: int, avail: dict[int, int]) -> set[tuple]:
    sizes = sorted(avail)
    return {combo for combo in itertools.product(*(range(avail[s] + 1) for s in sizes))
            if sum(s * n for s, n in zip(sizes, combo, strict=True)) <= free}


@pytest.mark.parametrize(("free", "avail"), [(32, {16: 3, 4: 5, 1: 2}), (14, {8: 2, 4: 5}),
                                             (0, {2: 1}), (31, {32: 1, 16: 2, 2: 3})])
def test_patterns_are_every_multiset_that_fits(free, avail):
    got = patterns(free, avail)
    sizes = sorted(avail)
    as_tuples = [tuple(p.get(s, 0) for s in sizes) for p in got]
    assert len(as_tuples) == len(set(as_tuples))
    assert set(as_tuples) == _brute(free, avail)


def test_domain_patterns_pack_each_leaf_and_the_spread_units_in_what_is_left():
    leaves = [patterns(20, {16: 2, 4: 3}), patterns(12, {16: 2, 4: 3})]
    got = domain_patterns(leaves, 32, {8: 2}, cap=10_000)
    keys = [("l", 16), ("l", 4), ("d", 8)]
    seen = {tuple(p.get(k, 0) for k in keys) for p in got}
    expected = set()
    for a, b in itertools.product(*leaves):
        sixteen, four = a.get(16, 0) + b.get(16, 0), a.get(4, 0) + b.get(4, 0)
        for eight in range(3):
            if 16 * sixteen + 4 * four + 8 * eight <= 32:
                expected.add((sixteen, four, eight))
    assert seen == expected
    assert (2, 0, 0) not in seen  # two 16s fit the 32 nodes, not the leaves of 20 and 12
    assert domain_patterns(leaves, 32, {8: 2}, cap=3) is None
