"""``toposolve replay``: table, record, trace kinds, one-line errors."""

from __future__ import annotations

import json

import pytest

from toposolve.cli.main import main
from toposolve.formats.native.writer import dump_native
from toposolve.generate import generate_document


@pytest.fixture(scope="module")
def cluster_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("c") / "cluster.yaml"
    path.write_text(
        dump_native(generate_document("superpod", nodes=32, load=0.0, leaf_size=8, fanout=(2,)))
    )
    return str(path)


def write_csv(tmp_path, text):
    path = tmp_path / "trace.csv"
    path.write_text(text)
    return str(path)


def test_csv_trace_with_two_engines(cluster_file, tmp_path, capsys):
    trace = write_csv(
        tmp_path,
        "name,arrival,duration,replicas,gpu,topology,tier\na,0,5m,8,8,hard,1\nb,30s,2m,4,8,,\nc,1m,,2,4,soft,1\n",
    )
    out = tmp_path / "rec.json"
    assert (
        main(
            [
                "replay",
                cluster_file,
                trace,
                "--engines",
                "volcano,cpsat",
                "--time-limit",
                "1",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    table = capsys.readouterr().out
    assert "volcano" in table and "cpsat" in table
    records = json.loads(out.read_text())["records"]
    assert [r["engine"] for r in records] == ["volcano", "cpsat"]
    assert all(r["summary"]["jobs_started"] == 3 for r in records)
    assert records[0]["jobs"][0]["domain_tier"] == 1


def test_synthetic_trace_option(cluster_file, capsys):
    assert (
        main(
            [
                "replay",
                cluster_file,
                "synthetic",
                "--trace-option",
                "jobs=20",
                "--trace-option",
                "duration=10m",
                "--cycle",
                "1m",
            ]
        )
        == 0
    )
    assert "volcano" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["synthetic", "--trace-option", "colour=1"], "--trace-option"),
        (["synthetic", "--engines", "slurm"], "unknown engine"),
        (["nope.csv"], "nope.csv: no such file"),
    ],
)
def test_errors_are_one_line(cluster_file, capsys, args, message):
    assert main(["replay", cluster_file, *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_bad_csv_names_line_and_column(cluster_file, tmp_path, capsys):
    trace = write_csv(tmp_path, "name,arrival,replicas\na,0,many\n")
    assert main(["replay", cluster_file, trace]) == 2
    assert "line 2: replicas" in capsys.readouterr().err
