"""``solve --ranks``, ``toposolve ranks`` and the parallelism annotation of manifests."""

from __future__ import annotations

import json

import yaml

from toposolve.cli.main import main

INSTANCE = """apiVersion: toposolve/v1
kind: Instance
nodeGroups:
- {name: 'n{i}', count: 4, allocatable: {nvidia.com/gpu: 8}}
topology:
  levels:
  - {tier: 2, name: top, count: 1}
  - {tier: 1, name: 'leaf-{i}', per: 2, nodes: 2}
jobs:
- {name: a, parallelism: "tp=8,pp=2,dp=2", tasks: [{name: w, replicas: 4,
   requests: {nvidia.com/gpu: 8}}]}
"""

VC_JOB = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: a, annotations: {toposolve.io/parallelism: "tp=8,pp=3"}}
spec:
  minAvailable: 2
  tasks:
  - name: w
    replicas: 2
    template:
      spec:
        containers: [{name: c, resources: {requests: {nvidia.com/gpu: "8"}}}]
"""


def test_solve_ranks_then_ranks_command(tmp_path, capsys):
    inst, plan, out = tmp_path / "i.yaml", tmp_path / "plan.json", tmp_path / "ranks.yaml"
    inst.write_text(INSTANCE)
    assert main(["solve", str(inst), "--engine", "volcano", "--ranks", "-o", str(plan)]) == 0
    ranks = json.loads(plan.read_text())["ranks"]["default/a"]
    assert sorted(ranks.values()) == [0, 8, 16, 24]
    assert main(["ranks", str(plan), str(inst), "-o", str(out)]) == 0
    (configmap,) = yaml.safe_load_all(out.read_text())
    assert configmap["metadata"]["name"] == "a-ranks"
    assert {f"default/{p}": int(r) for p, r in configmap["data"].items()} == ranks
    err = capsys.readouterr().err
    assert "tp=8,pp=2,dp=2" in err and "index → Volcano's rule → ranked" in err


def test_annotation_with_a_wrong_world_size_is_one_line(tmp_path, capsys):
    path = tmp_path / "job.yaml"
    path.write_text(VC_JOB)
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert "Job/default/a: metadata.annotations.toposolve.io/parallelism:" in err
    assert "tp×pp×dp = 24 equals neither" in err


def test_export_as_ranks_of_a_native_instance_is_a_rank_table(tmp_path):
    inst, plan, out = tmp_path / "i.yaml", tmp_path / "plan.json", tmp_path / "ranks.yaml"
    inst.write_text(INSTANCE)
    assert main(["solve", str(inst), "--engine", "volcano", "--ranks", "-o", str(plan)]) == 0
    assert main(["export", str(plan), str(inst), "--as", "ranks", "-o", str(out)]) == 0
    ranks = json.loads(plan.read_text())["ranks"]["default/a"]
    text = out.read_text()
    assert "# job default/a (tp=8,pp=2,dp=2, ranks per pod: 8): rank table of its pods, " \
           "keyed by <podset>-<pod index>" in text
    (configmap,) = yaml.safe_load_all(text)
    data = configmap["data"]
    assert configmap["metadata"]["name"] == "a-ranks"
    assert {f"default/a-w-{i}": int(data[f"w-{i}.rank"]) for i in range(4)} == ranks
    assert (data["world-size"], data["ranks-per-pod"], data[f"{data['master']}.rank"]) == (
        "32", "8", "0")
