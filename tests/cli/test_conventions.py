"""Command-line conventions (issue 21 §2): --version, show --json, diff, check's first line on
a plan of another instance, compare --plot saying where the figure went."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toposolve.cli.main import main

INSTANCES = Path(__file__).resolve().parents[2] / "instances"
EXAMPLE = str(INSTANCES / "seed000-example1.yaml")
DEFAULT = str(INSTANCES / "default.yaml")


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("toposolve ")


def test_show_json_gives_numbers(capsys):
    assert main(["show", EXAMPLE, "--json"]) == 0  # a cluster without pending jobs
    summary = json.loads(capsys.readouterr().out)
    assert summary["nodes"] == 8
    assert summary["resources"]["nvidia.com/gpu"]["allocatable_milli"] == 64_000
    assert [t["hypernodes"] for t in summary["tiers"]] == [4, 2, 1, 1]
    assert summary["pending_jobs"] == len(summary["pending"])


def test_diff_of_two_plans(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["solve", EXAMPLE, "--engine", "volcano", "-o", str(a)]) == 0
    assert main(["solve", EXAMPLE, "--engine", "cpsat", "--time-limit", "2", "-o", str(b)]) == 0
    capsys.readouterr()
    assert main(["diff", str(a), str(a)]) == 0
    assert capsys.readouterr().out.strip() == "same placements and evictions"
    status = main(["diff", str(a), str(b), "--json"])
    changes = json.loads(capsys.readouterr().out)
    assert status == (0 if not any(changes[k] for k in ("placed_only_in_a", "placed_only_in_b",
                                                         "moved", "pods_moved")) else 1)
    assert set(changes) >= {"placed_only_in_a", "placed_only_in_b", "moved", "metrics"}


def test_check_of_a_plan_of_another_instance_says_so_first(tmp_path, capsys):
    plan = tmp_path / "plan.json"
    assert main(["solve", DEFAULT, "--engine", "volcano", "-o", str(plan)]) == 0
    capsys.readouterr()
    assert main(["check", EXAMPLE, "--plan", str(plan)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("the plan names ") and "another instance" in lines[0]
    assert len(lines) <= 52 and "more not shown: --all lists them" in lines[-1]
    assert main(["check", EXAMPLE, "--plan", str(plan), "--all"]) == 1
    assert len(capsys.readouterr().out.splitlines()) > 52


def test_compare_plot_says_where_it_went(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="the plots extra is not installed")
    figure = tmp_path / "cmp.png"
    assert main(["compare", EXAMPLE, "--engines", "volcano", "--plot", str(figure)]) == 0
    assert figure.exists()
    assert f"plot written to {figure}" in capsys.readouterr().err


def test_show_json_lists_pending_jobs(capsys):
    assert main(["show", DEFAULT, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["pending_jobs"] == len(summary["pending"]) > 0
    first = summary["pending"][0]
    assert first["pending_pods"] > 0 and isinstance(first["priority"], int)


SHRUNK = """apiVersion: toposolve/v1
kind: Instance
nodeGroups:
  - {name: "n-{i}", count: 1, allocatable: {cpu: "16", nvidia.com/gpu: 4}}
jobs:
  - name: big
    tasks: [{name: w, replicas: 1, requests: {nvidia.com/gpu: 8}, running: {0: n-0}}]
"""


@pytest.mark.parametrize(("flags", "warned"), [([], True), (["-q"], False), (["-v"], True)])
def test_warnings_go_through_logging_and_quiet_silences_them(tmp_path, capsys, flags, warned):
    path = tmp_path / "shrunk.yaml"
    path.write_text(SHRUNK)
    assert main([*flags, "show", str(path)]) == 0
    err = capsys.readouterr().err
    assert ("status.allocatable[nvidia.com/gpu]" in err) is warned


def test_a_program_can_capture_the_warnings_with_logging(tmp_path, caplog):
    from toposolve.formats.load import load_instance

    path = tmp_path / "shrunk.yaml"
    path.write_text(SHRUNK)
    with caplog.at_level("WARNING", logger="toposolve"):
        load_instance(path)
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "status.allocatable[nvidia.com/gpu]" in caplog.records[0].getMessage()


def test_dash_reads_the_instance_from_stdin_and_writes_the_plan_to_stdout(monkeypatch, capsys,
                                                                          tmp_path):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(DEFAULT).read_bytes())))
    monkeypatch.chdir(tmp_path)
    assert main(["solve", "-", "--engine", "volcano", "-o", "-"]) == 0
    captured = capsys.readouterr()
    plan = json.loads(captured.out)
    assert plan["engine"] == "volcano" and plan["bindings"]
    assert list(tmp_path.iterdir()) == []  # no file named "-"


def test_without_an_instance_the_demo_is_named_in_one_line(capsys):
    assert main(["show"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert any(line.startswith("no instance given: running on the bundled demo instance ")
               for line in err)


def test_stdin_cannot_be_combined_with_files(capsys):
    assert main(["show", "-", EXAMPLE]) == 2
    assert "standard input cannot be combined with files" in capsys.readouterr().err
