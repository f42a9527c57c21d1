"""Command line: exit codes, one-line errors, nothing written on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toposolve.cli.main import main

INSTANCES = Path(__file__).resolve().parents[2] / "instances"
INSTANCE_FILES = sorted(INSTANCES.glob("*.yaml"))


def test_every_instance_file_is_covered():
    names = {p.name for p in INSTANCE_FILES}
    assert {
        "default.yaml",
        "superpod-1k.yaml",
        "seed000-example1.yaml",
        "seed004-tree.yaml",
        "kai-crossing-topologies.yaml",
        "kube-composite.yaml",
    } <= names


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
        # bad quantity
        "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {allocatable: {cpu: 4 cores}}\n",
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
    assert (
        main(["compare", str(INSTANCES / "seed001-stories.yaml"), "--engines", "heuristic,magic"])
        == 2
    )
    assert "magic" in capsys.readouterr().err


@pytest.mark.parametrize(
    "command", ["show", "check", "solve", "compare", "generate", "bench", "export"]
)
def test_help_everywhere(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "usage" in capsys.readouterr().out


def test_generate_and_bench_help_list_every_preset_and_suite(capsys):
    from toposolve.analysis.bench import SUITES
    from toposolve.generate import PRESETS

    for command in ("generate", "bench"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
    out = capsys.readouterr().out
    assert all(f"  {name}" in out for name in PRESETS) and "scale-6k" in out
    assert ", ".join(SUITES) in out
    readme = (INSTANCES.parent / "README.md").read_text()
    assert all(f"`{name}`" in readme for name in PRESETS), "README lists every generate preset"


def test_generate_writes_a_loadable_compact_instance(tmp_path, capsys):
    out = tmp_path / "sp.yaml"
    assert main(["generate", "superpod", "--nodes", "64", "--seed", "3", "-o", str(out)]) == 0
    text = out.read_text()
    assert (
        text.startswith("# toposolve generate superpod --nodes 64") and len(text.splitlines()) < 80
    )
    assert main(["show", str(out)]) == 0
    assert "nodes: 64" in capsys.readouterr().out
    manifests = tmp_path / "sp-k8s.yaml"
    assert (
        main(
            [
                "generate",
                "fattree",
                "--option",
                "arity=2",
                "--option",
                "depth=2",
                "--format",
                "manifests",
                "-o",
                str(manifests),
            ]
        )
        == 0
    )
    assert "kind: HyperNode" in manifests.read_text()


def test_compare_json_output(tmp_path, capsys):
    out = tmp_path / "cmp.json"
    path = INSTANCES / "seed001-stories.yaml"
    assert (
        main(
            [
                "compare",
                str(path),
                "--engines",
                "heuristic,cpsat",
                "--time-limit",
                "5",
                "--json",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    data = json.loads(out.read_text())
    assert [e["engine"] for e in data["engines"]] == ["heuristic", "cpsat"]
    assert json.loads(capsys.readouterr().out) == data
    assert (
        data["engines"][0]["gap"] is None and data["engines"][1]["gap"] is not None
    )  # a field per engine


def test_solve_cpsat_with_every_flag(tmp_path, capsys):
    path = INSTANCES / "seed000-partitioned-job.yaml"
    plan, model = tmp_path / "plan.yaml", tmp_path / "model.pb"
    argv = [
        "solve",
        str(path),
        "--engine",
        "cpsat",
        "--time-limit",
        "5",
        "--workers",
        "1",
        "--seed",
        "2",
        "--deterministic",
        "--progress",
        "--param",
        "log_search_progress=false",
        "--export-model",
        str(model),
        "-o",
        str(plan),
    ]
    assert main(argv) == 0
    assert model.stat().st_size > 0
    assert "schema: 1" in plan.read_text()
    err = capsys.readouterr().err
    assert "s] placed OPTIMAL:" in err and "cpsat:" in err  # a progress line per stage
    assert (
        err.rstrip().splitlines()[-1].startswith("cpsat OPTIMAL: placed OPTIMAL")
    )  # the final line
    assert main(["check", str(path), "--plan", str(plan)]) == 0


def test_solve_and_check_with_eviction(tmp_path, capsys):
    busy = tmp_path / "busy.yaml"
    busy.write_text((INSTANCES / "seed004-tree.yaml").read_text())
    plan = tmp_path / "plan.json"
    assert (
        main(["solve", str(busy), "--engine", "heuristic", "--evict", "both", "-o", str(plan)]) == 0
    )
    assert main(["check", str(busy), "--plan", str(plan)]) == 0  # the plan's own mode is used


def test_a_weighted_profile_refuses_to_evict(tmp_path, capsys):
    """A weighted sum cannot put disruption right after placement: one line, exit 2, no plan."""
    plan = tmp_path / "plan.json"
    argv = [
        "solve",
        str(INSTANCES / "seed004-tree.yaml"),
        "--engine",
        "heuristic",
        "--profile",
        "weighted",
        "--evict",
        "preempt",
        "-o",
        str(plan),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "objective.mode" in err[0] and "--evict" in err[0]
    assert not plan.exists()


def test_solve_accepts_the_volcano_alias_and_keeps_the_name(tmp_path, capsys):
    plan = tmp_path / "plan.json"
    assert (
        main(
            [
                "solve",
                str(INSTANCES / "seed000-example1.yaml"),
                "--engine",
                "volcano",
                "-o",
                str(plan),
            ]
        )
        == 0
    )
    assert json.loads(plan.read_text())["engine"] == "volcano"
    assert "volcano: FEASIBLE" in capsys.readouterr().err


LABELLED = (
    """apiVersion: v1
kind: List
items:
"""
    + "".join(
        f"""- apiVersion: v1
  kind: Node
  metadata: {{name: n{i}, labels: {{volcano.sh/spine: s{i // 4}, volcano.sh/leaf: l{i // 2}}}}}
  status: {{allocatable: {{cpu: "8", nvidia.com/gpu: "8", pods: "110"}}}}
"""
        for i in range(8)
    )
    + """- apiVersion: batch.volcano.sh/v1alpha1
  kind: Job
  metadata: {name: train}
  spec:
    minAvailable: 2
    networkTopology: {mode: hard, highestTierAllowed: 1}
    tasks:
    - name: w
      replicas: 2
      template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "8"}}}]}}
"""
)


def test_topology_labels_on_every_command_that_reads_instances(tmp_path, capsys):
    path = tmp_path / "labelled.yaml"
    path.write_text(LABELLED)
    flag = ["--topology-labels", "volcano.sh/spine,volcano.sh/leaf"]
    assert main(["show", str(path), *flag]) == 0
    out, err = capsys.readouterr()
    assert "tier 1 (volcano.sh/leaf): 4 HyperNodes" in out and "no HyperNodes" not in err
    plan = tmp_path / "plan.json"
    assert main(["solve", str(path), *flag, "-o", str(plan)]) == 0
    assert json.loads(plan.read_text())["jobs"][0]["hypernode"] in {"l0", "l1", "l2", "l3"}
    assert main(["check", str(path), *flag, "--plan", str(plan)]) == 0
    assert main(["compare", str(path), *flag, "--engines", "heuristic"]) == 0
    capsys.readouterr()
    assert main(["show", str(path)]) == 0  # without the flag: one warning naming the labels
    assert "--topology-labels volcano.sh/spine,volcano.sh/leaf" in capsys.readouterr().err
    assert main(["show", str(path), "--topology-labels", "volcano.sh/spine,"]) == 2
    assert capsys.readouterr().err.startswith("toposolve: --topology-labels: expected LABEL")


def test_no_timings_gives_byte_identical_outputs(tmp_path, capsys):
    """Issue 19 §2: two runs differ only in wall-clock fields; --no-timings leaves them out."""
    example = str(Path(__file__).resolve().parents[2] / "instances" / "seed000-example1.yaml")
    texts = []
    for run in (1, 2):
        plan = tmp_path / f"plan{run}.json"
        assert main(["solve", example, "--engine", "cpsat", "--time-limit", "2", "--no-timings",
                     "-o", str(plan)]) == 0
        assert main(["compare", example, "--engines", "volcano,cpsat", "--time-limit", "2",
                     "--json", "--no-timings"]) == 0
        texts.append((plan.read_text(), capsys.readouterr().out))
    assert texts[0] == texts[1]
    plan_text, compare_text = texts[0]
    for key in ("wall_time_s", "seconds", "ended_s", "build_seconds"):
        assert f'"{key}"' not in plan_text and f'"{key}"' not in compare_text
    assert main(["check", example, "--plan", str(tmp_path / "plan1.json")]) == 0


def test_compare_on_crossing_topologies_places_by_each_constraints_own_tree(tmp_path, capsys):
    out = tmp_path / "cmp.json"
    path = INSTANCES / "kai-crossing-topologies.yaml"
    argv = ["compare", str(path), "--engines", "volcano,kai,cpsat", "--time-limit", "5",
            "--json", "-o", str(out)]
    assert main(argv) == 0
    data = json.loads(out.read_text())
    placed = {e["engine"]: e["jobs_placed"] for e in data["engines"]}
    assert placed == {"volcano": 2, "kai": 4, "cpsat": 4}
    diffs = {d["job"]: d for d in data["diffs"]}
    assert set(diffs) >= {"default/eval", "default/pipeline"}
    assert diffs["default/eval"]["volcano"].startswith(
        "pending: constrained in Topology 'zone-topology'")
    assert diffs["default/eval"]["kai"] == "zone-topology:zone-a (tier 3)"


def test_compare_on_kueue_flavors_with_crossing_topologies(tmp_path, capsys):
    out = tmp_path / "cmp.json"
    path = INSTANCES / "kueue-crossing-topologies.yaml"
    argv = ["compare", str(path), "--engines", "kueue,cpsat,volcano", "--time-limit", "5",
            "--json", "-o", str(out)]
    assert main(argv) == 0
    data = json.loads(out.read_text())
    placed = {e["engine"]: e["jobs_placed"] for e in data["engines"]}
    assert placed == {"kueue": 5, "cpsat": 5, "volcano": 3}
    diffs = {d["job"]: d for d in data["diffs"]}
    assert diffs["default/eval"]["kueue"].startswith("zone-topology:zone-")
    assert diffs["default/eval"]["volcano"].startswith(
        "pending: constrained in Topology 'zone-topology'")


def test_compare_on_the_composite_dump_runs_every_engine(tmp_path, capsys):
    out = tmp_path / "cmp.json"
    path = INSTANCES / "kube-composite.yaml"
    engines = ["volcano", "kueue", "kai", "kube", "cpsat"]
    argv = ["compare", str(path), "--engines", ",".join(engines), "--time-limit", "5",
            "--json", "-o", str(out)]
    assert main(argv) == 0
    data = json.loads(out.read_text())
    assert [e["engine"] for e in data["engines"]] == engines
    diffs = {d["job"]: d for d in data["diffs"]}
    for job in ("ml/llm-train", "ml/rl-pipeline"):  # gang trees Kueue's slices cannot say
        assert diffs[job]["kueue"].startswith("pending: a gang tree that is not Kueue's")
    plan = tmp_path / "kube.json"
    assert main(["solve", str(path), "--engine", "kube", "-o", str(plan)]) == 0
    assert main(["check", str(path), "--plan", str(plan)]) == 0
    assert "plan is valid" in capsys.readouterr().out
