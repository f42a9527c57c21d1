"""The symmetry rows of the overload probe (benchmarks/overload_symmetry.py) keep every optimum:
small superpods with identical SubJobs and identical leaves, each stage solved alone with and
without them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from toposolve.core.problem import compile_problem
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.generate import generate

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from overload_symmetry import add_order_rows, identical_leaves, subjob_families  # noqa: E402

from tests.benchmarks.stage_optimum import stage_optimum  # noqa: E402


def _optimum(problem, stage: str, **rows) -> tuple[float, int]:
    add = (lambda pm: add_order_rows(pm.model, problem, pm.cands, **rows)) if rows else None
    value, added = stage_optimum(problem, stage, add)
    return value, added or 0


@pytest.mark.parametrize(("nodes", "seed"), [(96, 0), (128, 0), (128, 1)])
@pytest.mark.parametrize("stage", ["placed", "spread", "fragmentation"])
def test_order_rows_keep_the_optimum(nodes, seed, stage):
    problem = compile_problem(generate("superpod", nodes=nodes, load=1.2, seed=seed,
                                       occupancy=0.15))
    cands = PlacementModel(problem).cands
    assert subjob_families(problem, cands) and identical_leaves(cands)  # the rows have work
    plain, _ = _optimum(problem, stage)
    ordered, added = _optimum(problem, stage, subjobs=True, leaves=True)
    assert added > 0
    assert ordered == plain
    assert _optimum(problem, stage, subjobs=False, leaves=False, multiset=True)[0] == plain


def test_subjobs_of_one_family_are_interchangeable():
    problem = compile_problem(generate("superpod", nodes=128, load=1.2, seed=0, occupancy=0.15))
    cands = PlacementModel(problem).cands
    for family in subjob_families(problem, cands):
        units = [cands.subjob_units[s] for s in family]
        assert len({problem.subjobs[s].job for s in family}) == 1
        assert all(u.hard_domains == units[0].hard_domains and not u.running for u in units)
