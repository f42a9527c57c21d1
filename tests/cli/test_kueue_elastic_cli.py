"""``solve`` and ``check`` on a Kueue dump whose Workload slice scales an admitted one up."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.kueue_elastic_dump import elastic_dump
from toposolve.cli.main import main


@pytest.mark.parametrize("engine", ["kueue", "cpsat"])
def test_solve_then_check_a_scaled_up_slice(tmp_path, capsys, engine):
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump_all(elastic_dump(count=5)))
    plan = tmp_path / "plan.json"
    assert main(["solve", str(dump), "--engine", engine, "-o", str(plan)]) == 0
    assert main(["check", str(dump), "--plan", str(plan)]) == 0
    data = json.loads(plan.read_text())
    (job,) = data["jobs"]
    assert job["job"] == "default/w-2" and job["placed"]
    nodes = [b["node"] for b in data["bindings"]]
    assert len(nodes) == 3 and "x1" not in nodes  # only the delta, beside the kept pods


def test_bad_replacement_reference_exits_2_with_one_line(tmp_path, capsys):
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump_all(elastic_dump(reference="w-1")))
    assert main(["solve", str(dump), "-o", str(tmp_path / "plan.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "kueue.x-k8s.io/workload-slice-replacement-for" in err and "default/w-2" in err
    assert not (tmp_path / "plan.json").exists()
