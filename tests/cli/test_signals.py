"""Ctrl-C and SIGTERM during a CP-SAT search (issue 19 §3): the process ends within a second or
two with 130 / 143, writes nothing and leaves no temporary file (CP-SAT used to catch SIGINT,
finish its search and write the plan)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from toposolve.formats.native.writer import write_native
from toposolve.generate import generate


@pytest.fixture(scope="module")
def long_solve(tmp_path_factory):
    """An instance whose CP-SAT stages run for a while after the first progress line."""
    path = tmp_path_factory.mktemp("signals") / "superpod.yaml"
    write_native(generate("superpod", nodes=1024, load=1.2, occupancy=0.15), path)
    return path


@pytest.mark.parametrize(("command", "sig", "status"), [
    ("solve", signal.SIGINT, 130),
    ("solve", signal.SIGTERM, 143),
    ("compare", signal.SIGINT, 130),
])
def test_a_signal_stops_the_search_at_once_and_writes_nothing(long_solve, tmp_path, command,
                                                              sig, status):
    out = tmp_path / "out.json"
    argv = [sys.executable, "-m", "toposolve.cli", command, str(long_solve), "--time-limit",
            "300", "--progress", "-o", str(out)]
    argv += ["--engine", "cpsat"] if command == "solve" else ["--engines", "cpsat"]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:  # wait until a search runs
        if "placed" in line:
            break
    started = time.monotonic()
    proc.send_signal(sig)
    rest = proc.communicate(timeout=30)[1]
    assert proc.returncode == status, rest
    assert time.monotonic() - started < 3
    assert "interrupted" in rest
    assert list(tmp_path.iterdir()) == []  # neither the output nor a temporary file
