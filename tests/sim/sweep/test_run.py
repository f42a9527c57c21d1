"""Running sweeps here: rows in scenario order, same rows in parallel, variants, table files."""

from __future__ import annotations

import json

import pytest
import yaml

from toposolve.cli.main import main
from toposolve.core.errors import InputError
from toposolve.generate import generate
from toposolve.sim.sweep import SweepResult, run_sweep
from toposolve.sim.sweep.scenario import TIMING_SUFFIXES, apply_variant


def without_timings(rows):
    return [{k: v for k, v in row.items() if not k.endswith(TIMING_SUFFIXES)} for row in rows]


def test_parallel_rows_equal_serial_rows(small_spec):
    lines = []
    serial = run_sweep(small_spec, workers=1, progress=lines.append)
    parallel = run_sweep(small_spec, workers=2, progress=lambda line: None)
    assert [r["scenario"] for r in parallel.rows] == [0, 1, 2, 3]
    assert without_timings(serial.rows) == without_timings(parallel.rows)
    assert len(lines) == 4 and "ETA" in lines[-1]
    rows = serial.rows
    assert rows[1]["cluster.variant"] == json.dumps({"drain": "su-00"})
    assert rows[2]["mean_utilisation"] > rows[0]["mean_utilisation"]  # more load, busier


def test_variants_drain_remove_and_reshape_a_copy_of_the_cluster():
    cluster = generate("superpod", nodes=32, load=0.0, leaf_size=8, fanout=(2,))
    drained = apply_variant(cluster, {"drain": "spine-00"})
    assert sum(n.unschedulable for n in drained.nodes) == 16 and not any(
        n.unschedulable for n in cluster.nodes
    )
    removed = apply_variant(cluster, {"remove": "su-01"})
    assert len(removed.nodes) == 24 and "su-01" not in {h.name for h in removed.hypernodes}
    shaped = apply_variant(cluster, {"allocatable": {"nvidia.com/gpu": 4}})
    assert {n.allocatable["nvidia.com/gpu"] for n in shaped.nodes} == {4000}
    with pytest.raises(InputError, match="no HyperNode"):
        apply_variant(cluster, {"drain": "nope"})


def test_solve_mode_and_table_files(tmp_path, small_spec):
    spec = {
        **small_spec,
        "mode": "solve",
        "grid": {"engine": ["volcano", "cpsat"]},
        "base": {
            "cluster": {**small_spec["base"]["cluster"], "load": 0.9},
            "solve": {"time_limit": 2},
        },
    }
    result = run_sweep(spec, workers=1, progress=lambda line: None)
    assert [r["engine"] for r in result.rows] == ["volcano", "cpsat"]
    assert result.rows[1]["accelerators_placed"] >= result.rows[0]["accelerators_placed"] > 0
    files = {p.name for p in result.write(tmp_path)}
    assert {"sweep.csv", "sweep.json"} <= files
    frame = SweepResult(json.loads((tmp_path / "sweep.json").read_text())).frame()
    assert list(frame["engine"]) == ["volcano", "cpsat"]


def test_sweep_command_prints_the_table_and_writes_the_csv(tmp_path, small_spec, capsys):
    import yaml

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({**small_spec, "grid": {"trace.synthetic.load": [0.8]}}))
    assert main(["sweep", str(spec), "-o", str(tmp_path / "out"), "--workers", "1"]) == 0
    assert "0.8" in capsys.readouterr().out
    assert (tmp_path / "out" / "sweep.csv").exists()


@pytest.mark.parametrize("form", ["path", "mapping"])
def test_trace_file_is_a_path_or_a_mapping_with_path(tmp_path, small_spec, form):
    (tmp_path / "t.csv").write_text("name,arrival,duration,replicas,gpu\n"
                                    "a,0,10m,2,8\nb,60,10m,1,8\n")
    trace = "t.csv" if form == "path" else {"path": "t.csv"}
    spec = {**small_spec, "grid": {}, "base": {**small_spec["base"], "trace": {"file": trace}}}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(spec))
    rows = run_sweep(tmp_path / "s.yaml", workers=1, progress=lambda line: None).rows
    assert rows[0]["jobs_started"] == 2  # relative to the spec's folder


def test_writing_twice_replaces_the_sweep_files_and_nothing_else(tmp_path):
    out = tmp_path / "results"
    SweepResult([{"scenario": 0, "x": 1}]).write(out)
    (out / "notes.txt").write_text("mine")
    written = SweepResult([{"scenario": 0, "x": 2}]).write(out)
    assert json.loads((out / "sweep.json").read_text()) == [{"scenario": 0, "x": 2}]
    assert (out / "sweep.csv").read_text().splitlines() == ["scenario,x", "0,2"]
    assert (out / "notes.txt").read_text() == "mine"
    names = sorted(["notes.txt", *(p.name for p in written)])
    assert sorted(p.name for p in out.iterdir()) == names
