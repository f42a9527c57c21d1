"""``toposolve sweep``: -o DIR reused, one-line refusals with nothing written, and signals that
stop the sweep and its worker processes at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import toposolve
from toposolve.cli.main import main

CLUSTER = {"preset": "superpod", "nodes": 32, "options": {"leaf_size": 8, "fanout": [2]}}
SPEC = {
    "kind": "Sweep",
    "base": {"cluster": CLUSTER, "trace": {"synthetic": {"jobs": 5, "duration": "10m"}},
             "replay": {"cycle": "5m"}},
    "grid": {"trace.synthetic.load": [0.8]},
}
# two scenarios that each replay for minutes (an overloaded queue of 1,000 gangs)
SLOW = {
    "kind": "Sweep",
    "base": {"cluster": {"preset": "superpod", "nodes": 256},
             "trace": {"synthetic": {"jobs": 1000, "load": 3.0, "duration": "2h"}},
             "replay": {"cycle": "10s"}},
    "grid": {"trace.synthetic.seed": [1, 2]},
}


def write_spec(tmp_path: Path, doc: dict, name: str = "s.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def one_line_error(capsys, argv: list[str]) -> str:
    start = time.perf_counter()
    assert main(argv) == 2
    assert time.perf_counter() - start < 5
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("toposolve: ") and "Traceback" not in err
    return lines[0]


def test_a_second_run_into_the_same_directory_replaces_the_sweep_files(tmp_path, capsys):
    spec, out = write_spec(tmp_path, SPEC), tmp_path / "results"
    assert main(["sweep", spec, "-o", str(out), "--workers", "1"]) == 0
    (out / "mine.txt").write_text("kept")
    first = (out / "sweep.json").read_text()
    assert main(["sweep", spec, "-o", str(out) + "/", "--workers", "1"]) == 0
    assert (out / "sweep.json").read_text() != "" and (out / "mine.txt").read_text() == "kept"
    assert yaml.safe_load((out / "sweep.json").read_text())[0]["scenario"] == 0 and first
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"base": {**SPEC["base"], "engnie": "cpsat"}},
         "s.yaml: Sweep: base.engnie: unknown key (did you mean 'engine'?)"),
        ({"base": {**SPEC["base"], "replay": {"cycel": "5m"}}},
         "s.yaml: Sweep: base.replay.cycel: unknown key (did you mean 'cycle'?)"),
        ({"base": {**SPEC["base"], "cluster": {**CLUSTER, "options": [1]}}},
         "s.yaml: Sweep: base.cluster.options: expected a mapping, got [1]"),
        ({"grid": {"cluster..": [1]}}, "s.yaml: Sweep: grid.cluster..: expected a dotted path"),
        ({"grid": {"cluster.variant": ["none", {"drain": "nope"}]}},
         "s.yaml: Sweep: scenario 1 (grid.cluster.variant[1]): cluster.variant: nope"),
        ({"base": {**SPEC["base"], "cluster": {"file": "missing.yaml"}}},
         "s.yaml: Sweep: base.cluster: "),
        ({"grid": {f"cluster.options.k{i}": list(range(10)) for i in range(6)}},
         "s.yaml: Sweep: grid: 1,000,000 scenarios, more than the limit 10,000"),
    ],
)
def test_a_bad_spec_is_one_line_naming_it_and_nothing_is_written(tmp_path, capsys, change,
                                                                 expected):
    spec = write_spec(tmp_path, {**SPEC, **change})
    line = one_line_error(capsys, ["sweep", spec, "-o", str(tmp_path / "out")])
    assert line.startswith(f"toposolve: {tmp_path / expected}")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--workers", "-3"], "argument --workers: expected an integer in [1, 1,024], got -3"),
        (["--workers", "0"], "argument --workers: expected an integer in [1, 1,024], got 0"),
        (["--ray", "127.0.0.1:1"], "--ray: 127.0.0.1:1: cannot connect"),
        (["--ray", "nohost"], "--ray: nohost: expected local, auto or [ray://]HOST:PORT"),
    ],
)
def test_bad_options_are_one_line(tmp_path, capsys, extra, expected):
    spec = write_spec(tmp_path, SPEC)
    line = one_line_error(capsys, ["sweep", spec, "-o", str(tmp_path / "out"), *extra])
    assert expected in line and not (tmp_path / "out").exists()


def test_an_output_that_is_a_file_is_refused(tmp_path, capsys):
    spec, taken = write_spec(tmp_path, SPEC), tmp_path / "taken"
    taken.write_text("x")
    line = one_line_error(capsys, ["sweep", spec, "-o", str(taken)])
    assert line == f"toposolve: {taken}: exists and is not a directory (--output)"
    line = one_line_error(capsys, ["sweep", spec, "-o", str(taken / "sub")])
    assert "cannot make the directory" in line and taken.read_text() == "x"
    line = one_line_error(capsys, ["sweep", spec, "-o", "-"])
    assert line == "toposolve: -: a sweep writes a directory of files, not standard output " \
                   "(--output)"


def children(pid: int) -> set[int]:
    """Pids whose parent is ``pid`` (from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text() if entry.name.isdigit() else ""
        except OSError:
            continue
        if stat and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_sweep_and_its_workers_within_seconds(tmp_path, signum, status):
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(Path(toposolve.__file__).parents[1])}
    argv = [sys.executable, "-m", "toposolve.cli", "sweep", write_spec(tmp_path, SLOW), "-o",
            str(out), "--workers", "2"]
    sweep = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)  # its own group, as a terminal's job
    try:
        deadline = time.monotonic() + 60
        while len(workers := children(sweep.pid)) < 2 and time.monotonic() < deadline:
            assert sweep.poll() is None, sweep.communicate()
            time.sleep(0.1)
        assert len(workers) == 2
        time.sleep(1)  # both are inside a scenario
        start = time.monotonic()
        if signum == signal.SIGINT:
            os.killpg(sweep.pid, signum)  # Ctrl-C reaches the whole group
        else:
            os.kill(sweep.pid, signum)  # `kill PID` reaches the sweep alone
        _, err = sweep.communicate(timeout=10)
        assert time.monotonic() - start < 5
    finally:
        if sweep.poll() is None:
            os.killpg(sweep.pid, signal.SIGKILL)
    assert sweep.returncode == status, err
    assert err.decode().strip().splitlines()[-1] == "toposolve: interrupted"
    assert b"Traceback" not in err
    deadline = time.monotonic() + 2
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in workers)
    assert not out.exists()
