"""A small sweep on a local Ray instance gives the local run's rows (ray: the dev extra installs
it)."""

from __future__ import annotations

import pytest

pytest.importorskip("ray")

from toposolve.sim.sweep import run_sweep  # noqa: E402
from toposolve.sim.sweep.scenario import TIMING_SUFFIXES  # noqa: E402


def test_ray_rows_equal_local_rows(small_spec):
    spec = {**small_spec, "grid": {"trace.synthetic.load": [0.8, 1.4]}}
    local = run_sweep(spec, workers=1, progress=lambda line: None)
    lines = []
    on_ray = run_sweep(spec, ray="local", num_cpus=2, progress=lines.append)
    def strip(rows):
        return [{k: v for k, v in r.items() if not k.endswith(TIMING_SUFFIXES)} for r in rows]

    assert strip(on_ray.rows) == strip(local.rows)
    assert len(lines) == 2
