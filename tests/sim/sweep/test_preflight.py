"""Every scenario is checked before the first runs: a bad grid point is refused at once."""

from __future__ import annotations

import copy
import time

import pytest

from toposolve.core.errors import InputError
from toposolve.sim.sweep import run_sweep


def refused_before_running(spec: dict) -> str:
    """Run ``spec``; expect an InputError before any scenario finished; return its line."""
    lines: list[str] = []
    start = time.perf_counter()
    with pytest.raises(InputError) as err:
        run_sweep(spec, workers=1, progress=lines.append)
    assert lines == []  # no scenario ran
    assert time.perf_counter() - start < 5
    text = str(err.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize(
    ("grid", "expected"),
    [
        ({"cluster.variant": ["none", {"drain": "nope"}]},
         "scenario 1 (grid.cluster.variant[1]): cluster.variant: nope: no HyperNode 'nope'"),
        ({"engine": ["volcano", "volcanoo"]}, "Sweep: grid.engine[1]: unknown engine 'volcanoo'"),
        ({"trace.synthetic.mix": ["superpod", "nope"]},
         "scenario 1 (grid.trace.synthetic.mix[1]): synthetic trace: mix: must be one of"),
        ({"replay.cycle": ["5m", "5 minutes"]}, "Sweep: grid.replay.cycle[1]: expected a duration"),
        ({"replay.evict": [None, "always"]}, "Sweep: grid.replay.evict[1]: must be one of preempt, "
                                             "reclaim, both, not 'always'"),
        ({"replay.wall_factor": [1, 0.5]}, "Sweep: grid.replay.wall_factor[1]: must be at least 1"),
        ({"replay": [{}, {"time_limit": 0}]}, "Sweep: grid.replay[1].time_limit: expected seconds"),
        ({"cluster.options.fanout": [[2], "x"]}, "scenario 1 (grid.cluster.options.fanout[1])"),
        ({"profile": [None, "no-such-profile"]}, "Sweep: grid.profile[1]: no profile "
                                                 "named 'no-such-profile'"),
        ({"cluster.variant": [{"allocatable": ["x"]}]},
         "Sweep: grid.cluster.variant[0]: allocatable: expected a mapping of resource to amount"),
    ],
)
def test_bad_last_grid_point_is_refused_before_the_first_scenario(small_spec, grid, expected):
    spec = {**small_spec, "grid": grid}
    assert expected in refused_before_running(spec)


def test_missing_cluster_and_trace_files_are_named(small_spec, tmp_path):
    spec = copy.deepcopy(small_spec)
    spec["base"]["cluster"] = {"file": str(tmp_path / "missing.yaml")}
    text = refused_before_running({**spec, "grid": {}})
    assert text.startswith("<sweep>: Sweep: base.cluster: ") and "missing.yaml" in text
    spec = copy.deepcopy(small_spec)
    spec["base"]["trace"] = {"file": str(tmp_path / "t.csv")}
    text = refused_before_running({**spec, "grid": {}})
    assert text.startswith("<sweep>: Sweep: base.trace: ") and "t.csv: no such file" in text


def test_solve_mode_options_are_checked_first(small_spec):
    spec = {"kind": "Sweep", "mode": "solve",
            "base": {"cluster": small_spec["base"]["cluster"], "engine": "cpsat"},
            "grid": {"solve.time_limit": [1, -1]}}
    assert "Sweep: grid.solve.time_limit[1]: expected seconds" in refused_before_running(spec)
    spec["grid"] = {"solve.parameters": [{}, {"num_wokers": 2}]}
    assert "Sweep: grid.solve.parameters[1].num_wokers: unknown CP-SAT parameter" in \
        refused_before_running(spec)


@pytest.mark.parametrize(
    ("arguments", "error", "named"),
    [
        ({"workers": -3}, ValueError, "workers"),
        ({"workers": 0}, ValueError, "workers"),
        ({"workers": "2"}, TypeError, "workers"),
        ({"workers": True}, TypeError, "workers"),
        ({"num_cpus": 0}, ValueError, "num_cpus"),
        ({"ray": 1}, TypeError, "ray"),
        ({"progress": "stderr"}, TypeError, "progress"),
    ],
)
def test_bad_run_sweep_arguments_fail_at_once_naming_the_parameter(small_spec, arguments,
                                                                   error, named):
    start = time.perf_counter()
    with pytest.raises(error, match=f"run_sweep: {named}"):
        run_sweep(small_spec, **arguments)
    assert time.perf_counter() - start < 1


def test_run_sweep_refuses_a_spec_of_another_type():
    with pytest.raises(TypeError, match="spec must be"):
        run_sweep(42)  # type: ignore[arg-type]
