"""The local runner's worker processes: isolation, a worker that dies, errors sent back."""

from __future__ import annotations

import multiprocessing
import os

import pytest

from toposolve.core.errors import InputError
from toposolve.sim.sweep import local

pytestmark = pytest.mark.skipif(multiprocessing.get_start_method() != "fork",
                                reason="the stand-in scenario reaches workers by fork")
SCENARIOS = [{"index": i, "params": {}, "spec": {}, "mode": "replay", "root": "."}
             for i in range(3)]


def pid_row(scenario):
    return {"scenario": scenario["index"], "engine": "stub", "pid": os.getpid()}


def test_isolate_runs_even_one_worker_in_another_process(monkeypatch):
    monkeypatch.setattr(local, "run_scenario", pid_row)
    here = local.run_local(SCENARIOS, workers=1)
    apart = local.run_local(SCENARIOS, workers=1, isolate=True)
    assert {r["pid"] for r in here} == {os.getpid()}
    assert os.getpid() not in {r["pid"] for r in apart}
    assert [r["scenario"] for r in apart] == [0, 1, 2]
    assert multiprocessing.active_children() == []


def dies(scenario):
    if scenario["index"] == 1:
        os._exit(3)
    return pid_row(scenario)


def test_a_worker_that_dies_is_an_error_naming_its_scenario(monkeypatch):
    monkeypatch.setattr(local, "run_scenario", dies)
    with pytest.raises(RuntimeError, match=r"scenario 1: its worker process died \(exit code 3"):
        local.run_local(SCENARIOS, workers=2)
    assert multiprocessing.active_children() == []


def refuses(scenario):
    raise InputError("no HyperNode 'x'", obj="cluster.variant")


def fails(scenario):
    raise ZeroDivisionError("boom")


def test_errors_in_a_worker_come_back(monkeypatch):
    monkeypatch.setattr(local, "run_scenario", refuses)
    with pytest.raises(InputError, match="scenario 0: cluster.variant: no HyperNode 'x'"):
        local.run_local(SCENARIOS[:1], workers=2, isolate=True)
    monkeypatch.setattr(local, "run_scenario", fails)
    with pytest.raises(RuntimeError, match="(?s)scenario 0 failed in its worker.*ZeroDivision"):
        local.run_local(SCENARIOS[:1], workers=2, isolate=True)
    assert multiprocessing.active_children() == []
