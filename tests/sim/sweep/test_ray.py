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


def _children_named(words: tuple[str, ...]) -> list[str]:
    """Command lines of this process's children that mention one of ``words`` (from /proc)."""
    import os
    from pathlib import Path

    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="ignore")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and any(w in cmdline for w in words):
            found.append(cmdline)
    return found


def test_a_local_ray_sweep_leaves_no_ray_process_behind(small_spec):
    """Issue 21 §4: `sweep --ray local` starts Ray and must stop it (raylet, GCS) when done."""
    import time

    run_sweep(small_spec, ray="local", num_cpus=1, progress=lambda line: None)
    deadline = time.monotonic() + 10
    while _children_named(("raylet", "gcs_server")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _children_named(("raylet", "gcs_server")) == []
