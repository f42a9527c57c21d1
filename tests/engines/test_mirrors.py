"""The Kueue and KAI mirrors: checked plans on generated dumps, default engine, aliases."""

from __future__ import annotations

import pytest

import toposolve
from toposolve.engines.registry import get_engine
from toposolve.formats.load import load_instance
from toposolve.formats.write import write_scheduler_form
from toposolve.generate import generate


@pytest.fixture(scope="module", params=["kueue", "kai"])
def dump(request, tmp_path_factory):
    inst = generate("superpod", nodes=64, seed=5, jobs=10, occupancy=0.25)
    path = tmp_path_factory.mktemp("dump") / f"{request.param}.yaml"
    write_scheduler_form(inst, request.param, str(path), warn=lambda _: None)
    return load_instance(path, warn=lambda _: None)


@pytest.mark.parametrize("engine", ["volcano", "kueue", "kai"])
def test_every_mirror_gives_a_checked_deterministic_plan(dump, engine):
    plan = toposolve.solve(dump, engine)  # solve() checks the plan and raises on a violation
    assert toposolve.check_plan(dump, plan) == []
    assert plan.engine == engine
    assert any(j.placed for j in plan.jobs)
    assert toposolve.solve(dump, engine).bindings == plan.bindings


def test_default_engine_follows_the_input(dump):
    assert toposolve.solve(dump).engine == dump.scheduler


def test_heuristic_is_an_alias_of_volcano():
    assert get_engine("heuristic").name == "volcano"
    with pytest.raises(ValueError, match="unknown engine"):
        get_engine("slurm")


@pytest.mark.parametrize("name, scheduler", [("kueue-gke.yaml", "kueue"), ("kai-eks.yaml", "kai"),
                                             ("kube-gke.yaml", "kube"),
                                             ("kube-composite.yaml", "kube"),
                                             ("kai-two-topologies.yaml", "kai"),
                                             ("kai-crossing-topologies.yaml", "kai"),
                                             ("kueue-two-flavors.yaml", "kueue")])
def test_bundled_dumps_load_and_every_engine_gives_a_checked_plan(name, scheduler):
    from pathlib import Path

    inst = load_instance(Path(__file__).parents[2] / "instances" / name, warn=lambda _: None)
    assert inst.scheduler == scheduler and inst.hypernodes and inst.jobs
    for engine in ("volcano", "kueue", "kai", "kube", "cpsat"):
        plan = toposolve.solve(inst, engine, time_limit=1, workers=1)  # checked inside solve()
        assert sum(j.placed for j in plan.jobs) > 0
