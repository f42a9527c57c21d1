"""The placement floor column of benchmarks/bench_comm.py: each pending layout job's floor over
the leaves' free capacity (the running pods' nodes taken out), summed."""

from __future__ import annotations

import sys
from pathlib import Path

from builders import gang, instance, leaf, nodes

from toposolve.core.problem import compile_problem
from toposolve.policy.placement_floor import placement_floor

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_comm import placement_bounds  # noqa: E402


def test_placement_bounds_read_the_free_trays_per_rack():
    """Five NVL72-shaped racks of 18 four-GPU trays, 5 + 2 + 8 trays busy: a tp=8,pp=4,dp=8 job
    (64 trays) sees 13, 16, 18, 18, 10 free trays — only three racks hold 8 whole TP groups, so
    the TP-intact bound is above the 128 of four such racks (it would be 128 with every tray
    free); TP halves spread over racks make it lower."""
    tree = [leaf(f"rack{r}", [f"node{18 * r + i}" for i in range(18)]) for r in range(5)]
    busy = [0, 1, 2, 3, 4, 18, 19, *range(72, 80)]
    background = gang("bg", len(busy), gpus=4, running={k: f"node{n}" for k, n in enumerate(busy)})
    job = gang("llm", 64, gpus=4)
    job.parallelism = "tp=8,pp=4,dp=8"
    problem = compile_problem(instance(nodes(90, gpus=4), tree, [background, job]))
    bounds = placement_bounds(problem)
    free = [13, 16, 18, 18, 10]
    assert bounds["whole_tp"] == placement_floor(job.parallelism, 4, free, whole_tp=True) > 128
    assert placement_floor(job.parallelism, 4, [18] * 5, whole_tp=True) == 128
    assert bounds["all_orders"] == placement_floor(job.parallelism, 4, free) < bounds["whole_tp"]
