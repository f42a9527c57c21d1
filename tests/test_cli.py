"""Command line: exit codes, one-line errors, nothing written on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toposolve.cli import main

INSTANCES = Path(__file__).resolve().parents[1] / "instances"
INSTANCE_FILES = sorted(INSTANCES.glob("*.yaml"))


def test_every_instance_file_is_covered():
    names = {p.name for p in INSTANCE_FILES}
    assert {"default.yaml", "superpod-1k.yaml", "seed000-example1.yaml", "seed004-tree.yaml"} <= names


@pytest.mark.parametrize("path", INSTANCE_FILES, ids=lambda p: p.name)
def test_show_solve_check_on_every_instance(path, tmp_path, capsys):
    assert main(["show", str(path)]) == 0
    assert "HyperNodes" in capsys.readouterr().out
    plan = tmp_path / "plan.json"
    assert main(["solve", str(path), "--engine", "heuristic", "-o", str(plan)]) == 0
    assert json.loads(plan.read_text())["schema"] == 1
    assert main(["check", str(path), "--plan", str(plan)]) == 0
    assert "plan is valid" in capsys.readouterr().out


def test_check_reports_violations_with_exit_1(tmp_path, capsys):
    path = INSTANCES / "seed000-partitioned-job.yaml"
    plan = tmp_path / "plan.json"
    assert main(["solve", str(path), "-o", str(plan)]) == 0
    data = json.loads(plan.read_text())
    data["bindings"] = data["bindings"][:3]  # break the gang
    plan.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["check", str(path), "--plan", str(plan)]) == 1
    assert "gang" in capsys.readouterr().out


@pytest.mark.parametrize(
    "content",
    [
        "apiVersion: v1\nkind: Node\nmetadata: {name: a\n",  # malformed YAML
        "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {allocatable: {cpu: 4 cores}}\n",  # bad quantity
        (
            "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: h}\n"
            "spec: {tier: 1, members: [{type: Node, selector: {regexMatch: {pattern: '(a'}}}]}\n"
        ),  # bad regex
    ],
)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, capsys, content):
    bad = tmp_path / "bad.yaml"
    bad.write_text(content)
    out = tmp_path / "plan.json"
    assert main(["solve", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(bad) in err
    assert "Traceback" not in err
    assert not out.exists()


def test_missing_file_exits_2(capsys):
    assert main(["show", "/nonexistent/cluster.yaml"]) == 2
    assert "/nonexistent/cluster.yaml" in capsys.readouterr().err


def test_unknown_engine_in_compare_exits_2(capsys):
    assert main(["compare", str(INSTANCES / "seed001-stories.yaml"), "--engines", "heuristic,magic"]) == 2
    assert "magic" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["show", "check", "solve", "compare", "generate", "bench"])
def test_help_everywhere(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "usage" in capsys.readouterr().out
