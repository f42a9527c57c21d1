"""``toposolve defrag``: the plan, the summary in words, one-line errors."""

from __future__ import annotations

import json

import pytest
import yaml

from toposolve.cli.main import main
from toposolve.formats.native.writer import write_native
from toposolve.generate.defrag import TARGET, defrag_family


@pytest.fixture
def family(tmp_path):
    fam = defrag_family(4, seed=3, k=6, lo=3, hi=4)
    path = tmp_path / "cluster.yaml"
    write_native(fam.instance, path)
    return fam, path


def test_defrag_writes_a_plan_that_check_accepts(family, tmp_path, capsys):
    fam, path = family
    plan = tmp_path / "plan.json"
    assert main(["defrag", str(path), "--admit", TARGET, "-o", str(plan)]) == 0
    err = capsys.readouterr().err
    jobs = fam.minimum
    assert f"admits {TARGET} by moving {jobs} job{'s' * (jobs != 1)} ({jobs} pod" in err
    assert "proven minimal" in err
    data = json.loads(plan.read_text())
    assert len(data["moves"]) == jobs and set(data["moves"][0]) == {"pod", "from", "to"}
    assert data["stats"]["defrag"]["proven_minimal"] is True
    assert main(["check", str(path), "--plan", str(plan)]) == 0
    assert "plan is valid" in capsys.readouterr().out


def test_greedy_engine_and_move_limit(family, tmp_path, capsys):
    _, path = family
    assert main(["defrag", str(path), "--admit", TARGET, "--engine", "greedy"]) == 0
    assert json.loads(capsys.readouterr().out)["engine"] == "defrag-greedy"
    assert main(["defrag", str(path), "--admit", TARGET, "--max-moves", "0"]) == 0
    err = capsys.readouterr().err
    assert "admits nothing" in err and TARGET in err


@pytest.mark.parametrize("argv, words", [
    (["--admit", "default/nope"], "no job 'default/nope'"),
    ([], "defrag needs --admit NAMESPACE/JOB[,...], --free TIER=N or --fail NODE[,...]"),
    (["--fail", "r0-n0,nope"], "no node 'nope' in the instance"),
    (["--free", "rack"], "--free wants TIER=N"),
    (["--free", "9=1"], "no HyperNode tier 9 to free"),
    (["--admit", "default/run-0"], "is not a pending job"),
])
def test_bad_admit_is_one_line_exit_2(family, capsys, argv, words):
    _, path = family
    assert main(["defrag", str(path), *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_free_without_admit_names_the_idle_racks(family, tmp_path, capsys):
    _, path = family
    plan = tmp_path / "plan.json"
    assert main(["defrag", str(path), "--free", "1=1", "-o", str(plan)]) == 0
    err = capsys.readouterr().err
    freed = json.loads(plan.read_text())["stats"]["defrag"]["freed"]
    assert len(freed) == 1 and f"frees {freed[0]}" in err and "proven minimal" in err
    assert main(["check", str(path), "--plan", str(plan)]) == 0


def test_fail_repairs_and_check_accepts_the_plan(tmp_path, capsys):
    from tests.engines.defrag.test_repair import cluster

    path, plan = tmp_path / "cluster.yaml", tmp_path / "plan.json"
    write_native(cluster(), path)
    assert main(["defrag", str(path), "--fail", "node2", "-o", str(plan)]) == 0
    err = capsys.readouterr().err
    assert ("repairs 1 of 1 job hit by node2 (1 pod re-placed) by moving 1 job (1 pod); "
            "proven minimal") in err
    data = json.loads(plan.read_text())
    assert data["failed"] == ["node2"]
    assert {"pod": "default/g-w-2", "from": "node2", "to": "node3"} in data["moves"]
    assert main(["check", str(path), "--plan", str(plan)]) == 0
    assert "plan is valid" in capsys.readouterr().out


def test_fail_names_the_job_it_cannot_repair(tmp_path, capsys):
    from tests.engines.defrag.test_repair import cluster

    path = tmp_path / "cluster.yaml"
    write_native(cluster({"movable": False}, r1_busy=True), path)
    assert main(["defrag", str(path), "--fail", "node2", "--engine", "greedy"]) == 0
    err = capsys.readouterr().err
    assert "repairs 0 of 1 job" in err and "not default/g: no spare in r0 (tier 1)" in err


def test_fail_beside_admit_says_both(tmp_path, capsys):
    from tests.engines.defrag.test_repair import cluster

    inst = cluster(s_on="node4")
    inst.jobs.append(inst.jobs[1].model_copy(update={"name": "p", "tasks": [
        inst.jobs[1].tasks[0].model_copy(update={"running": {}})]}))
    path = tmp_path / "cluster.yaml"
    write_native(inst, path)
    assert main(["defrag", str(path), "--fail", "node2", "--admit", "default/p"]) == 0
    err = capsys.readouterr().err
    assert "admits default/p by moving 0 jobs" in err
    assert "; repairs 1 of 1 jobs hit by node2" in err


def _elastic(tmp_path, target_min: int):
    """Two racks of two 4-GPU nodes, 2-GPU pods on node0, node2, node3; a pending gang of four
    2-GPU pods hard-limited to one rack, ready at ``target_min``; written natively."""
    from tests.builders import GPU, hard, inner, leaf, nodes
    from toposolve.core.instance import Instance, Job, Task

    def one(name: str, node: str) -> Job:
        return Job(name=name, min_available=1, tasks=[Task(
            name="w", replicas=1, requests={GPU: 2000}, running={0: node})])
    target = Job(name="big", min_available=target_min, network_topology=hard(1),
                 tasks=[Task(name="w", replicas=4, requests={GPU: 2000})])
    tree = [leaf("r0", ["node0", "node1"]), leaf("r1", ["node2", "node3"]),
            inner("spine", ["r0", "r1"], 2)]
    path = tmp_path / f"elastic{target_min}.yaml"
    write_native(Instance(nodes=nodes(4, gpus=4000), hypernodes=tree,
                          jobs=[one("x", "node0"), one("y", "node2"), one("z", "node3"), target]),
                 path)
    return path


def test_an_elastic_target_is_admitted_at_its_minimum_and_check_accepts(tmp_path, capsys):
    path, plan = _elastic(tmp_path, 3), tmp_path / "plan.json"
    assert main(["defrag", str(path), "--admit", "default/big", "-o", str(plan)]) == 0
    assert "admits default/big by moving 0 jobs" in capsys.readouterr().err
    data = json.loads(plan.read_text())
    assert len(data["bindings"]) == 3 and not data.get("moves")  # the 4th pod would need a move
    assert main(["check", str(path), "--plan", str(plan)]) == 0


def test_export_moves_with_the_instance_says_which_replacements_it_cannot_steer(tmp_path,
                                                                                  capsys):
    path, plan, out = _elastic(tmp_path, 4), tmp_path / "plan.json", tmp_path / "moves.yaml"
    assert main(["defrag", str(path), "--admit", "default/big", "-o", str(plan)]) == 0
    capsys.readouterr()
    assert main(["export", str(plan), str(path), "--as", "moves", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    # the native format has no owner objects: the eviction stays, the note says why
    assert "job default/x: its replacements are not steered: no owner object to patch" in err
    docs = [d for d in yaml.safe_load_all(out.read_text()) if d]
    assert [d["kind"] for d in docs] == ["Eviction"]


def test_max_waves_puts_a_wave_on_each_move(tmp_path, capsys):
    from tests.engines.defrag.test_waves import TARGET as WAVE_TARGET
    from tests.engines.defrag.test_waves import TEAM, cluster

    path, plan = tmp_path / "cluster.yaml", tmp_path / "plan.json"
    write_native(cluster(TEAM), path)
    assert main(["defrag", str(path), "--admit", WAVE_TARGET, "--max-waves", "2",
                 "-o", str(plan)]) == 0
    assert "in 2 waves" in capsys.readouterr().err
    assert sorted(m["wave"] for m in json.loads(plan.read_text())["moves"]) == [1, 2]
    assert main(["check", str(path), "--plan", str(plan)]) == 0
