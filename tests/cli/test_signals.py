"""Ctrl-C and SIGTERM during a CP-SAT search (issue 19 §3): the process ends within a second or
two with 130 / 143, writes nothing and leaves no temporary file (CP-SAT used to catch SIGINT,
finish its search and write the plan).

The search must still be running when the signal comes, whatever the machine's speed: the
command's solve is replaced by a CP-SAT search of a subset-sum equality no search settles within
its two-minute limit (the command line, its worker thread and CP-SAT's own C++ search are the
real ones)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toposolve.engines.cpsat.solve.parameters import Settings

INSTANCE = str(Path(__file__).resolve().parents[2] / "instances" / "seed000-example1.yaml")
LONG_SEARCH = """
import random, sys
from ortools.sat.python import cp_model
import toposolve.analysis.compare, toposolve.solve
from toposolve.engines.cpsat.solve.parameters import Settings

def long_search(*args, **kwargs):
    rng = random.Random(0)
    model = cp_model.CpModel()
    picks = [model.new_bool_var(f"x{i}") for i in range(80)]
    weights = [rng.randrange(10**6, 2 * 10**6) for _ in picks]
    model.add(sum(w * x for w, x in zip(weights, picks)) == sum(weights) // 2 + 1)
    solver = cp_model.CpSolver()
    Settings(time_limit=120, workers=1, seed=0, deterministic=False, log=False).configure(
        solver, 120)
    print("searching", file=sys.stderr, flush=True)
    solver.solve(model)
    raise SystemExit("the search ended before the signal")

# the modules, not the package's re-exported functions of the same names
sys.modules["toposolve.solve"].solve = long_search
sys.modules["toposolve.analysis.compare"].compare = long_search
from toposolve.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_cpsat_leaves_ctrl_c_to_the_host():
    parameters = Settings(time_limit=10, workers=1, seed=0, deterministic=True,
                          log=False).parameters(10)
    assert parameters.catch_sigint_signal is False


@pytest.mark.parametrize(("command", "sig", "status"), [
    ("solve", signal.SIGINT, 130),
    ("solve", signal.SIGTERM, 143),
    ("compare", signal.SIGINT, 130),
])
def test_a_signal_stops_the_search_at_once_and_writes_nothing(tmp_path, command, sig, status):
    out = tmp_path / "out.json"
    proc = subprocess.Popen([sys.executable, "-c", LONG_SEARCH, command, INSTANCE, "-o",
                             str(out)], stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:  # wait until the search runs
        if line.startswith("searching"):
            break
    time.sleep(0.3)
    started = time.monotonic()
    proc.send_signal(sig)
    rest = proc.communicate(timeout=30)[1]
    assert proc.returncode == status, rest
    assert time.monotonic() - started < 3
    assert "interrupted" in rest
    assert list(tmp_path.iterdir()) == []  # neither the output nor a temporary file
