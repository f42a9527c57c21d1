"""Which plan a search starts from
(:func:`toposolve.engines.cpsat.solve.warmstart.choose_start`)."""

from __future__ import annotations

from builders import example1_tree, gang, instance, nodes, soft

from toposolve.core.assignment import Assignment
from toposolve.core.problem import compile_problem
from toposolve.engines.contract import SolveOptions
from toposolve.engines.cpsat.model.hint import hint_from_assignment
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.post.repack import repack
from toposolve.engines.cpsat.solve.parameters import resolve_settings
from toposolve.engines.cpsat.solve.runner import Run
from toposolve.engines.cpsat.solve.warmstart import choose_start
from toposolve.policy.profiles import load_profile

PROFILE = load_profile("lexicographic")


def setup():
    """Job `a` (2 × 8 GPUs, soft topology) and `b` (1 × 8 GPUs) on Example 1's 8 nodes."""
    problem = compile_problem(
        instance(nodes(8), example1_tree(), [gang("a", 2, topology=soft()), gang("b", 1)])
    )
    run = Run(problem, PROFILE, resolve_settings(PROFILE, SolveOptions(time_limit=10)), None)
    return problem, run, PlacementModel(problem)


def plan(problem, **pods_on: tuple[int, ...]) -> Assignment:
    out = Assignment()
    for job, where in pods_on.items():
        (g,) = next(cj.groups for cj in problem.jobs if cj.key == f"default/{job}")
        for n in where:
            out.add(g, n, 1)
    return out


def test_the_better_plan_is_chosen_and_a_tie_keeps_the_earlier():
    problem, run, pm = setup()
    only_b = plan(problem, b=(4,))
    both = plan(problem, a=(0, 1), b=(4,))
    assert choose_start(run, pm, [only_b, both]).plan is both
    same = plan(problem, a=(0, 1), b=(4,))
    assert choose_start(run, pm, [both, same]).plan is both


def test_a_better_repacking_replaces_the_hint_values_but_not_the_plan():
    """`a` split over racks s0 and s1 is worse than `a` in one rack: its repacking seeds the
    hint."""
    problem, run, pm = setup()
    scattered = plan(problem, a=(0, 2), b=(4,))
    start = choose_start(run, pm, [scattered])
    assert (
        start.plan is scattered and start.hint.values == hint_from_assignment(pm, scattered).values
    )
    assert (
        start.values
        == hint_from_assignment(pm, repack(problem, scattered)).values
        != start.hint.values
    )
    assert run.repacked == 1


def test_a_plan_repacking_cannot_improve_keeps_its_own_hint():
    problem, run, pm = setup()
    packed = plan(problem, a=(0, 1), b=(2,))
    start = choose_start(run, pm, [packed])
    assert start.values == start.hint.values and run.repacked == 0
