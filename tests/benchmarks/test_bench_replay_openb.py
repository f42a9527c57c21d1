"""``--engines`` of benchmarks/bench_replay_openb.py: each scheduler mirror runs as its own rows
in FGD's setting (per-device sharing) on a small openb sample; ``--merge`` keeps the other
engines' rows."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_replay_openb  # noqa: E402

SAMPLE = ["--setting", "fgd", "--nodes", "12", "--first-seed", "42"]


def _bench(monkeypatch, output: Path, *options: str) -> dict:
    argv = ["bench_replay_openb.py", *SAMPLE, "--output", str(output), *options]
    monkeypatch.setattr(sys, "argv", argv)
    bench_replay_openb.main()
    return json.loads(output.read_text())


def test_engines_run_each_mirror_as_rows_labelled_by_engine(monkeypatch, tmp_path):
    mirrors = ["volcano", "kai", "kube", "kueue"]
    record = _bench(monkeypatch, tmp_path / "r.json", "--engines", ",".join(mirrors),
                    "--seeds", "2")
    assert [(r["engine"], r["seed"]) for r in record["rows"]] == [
        (m, s) for m in ["volcano", "kai", "kube", "kueue"] for s in (42, 43)
    ]
    assert list(record["summary"]) == mirrors
    for row in record["rows"]:
        # every cycle's plan passed the checker (replay raises otherwise); something placed
        assert row["cycles"] > 0 and 0 < row["allocation_ratio"] <= 1
        assert row["arrived_load"] > 1.0  # tuned past the cluster's capacity
    # the same seed is the same pod sequence for every mirror
    jobs = {r["seed"]: set() for r in record["rows"]}
    for row in record["rows"]:
        jobs[row["seed"]].add(row["jobs"])
    assert all(len(counts) == 1 for counts in jobs.values())


def test_default_is_the_volcano_mirror_and_merge_keeps_other_engines(monkeypatch, tmp_path):
    output = tmp_path / "r.json"
    first = _bench(monkeypatch, output, "--seeds", "1")
    assert [r["engine"] for r in first["rows"]] == ["volcano"]
    merged = _bench(monkeypatch, output, "--engines", "kube", "--seeds", "1", "--merge")
    assert [(r["engine"], r["seed"]) for r in merged["rows"]] == [("volcano", 42), ("kube", 42)]
    assert merged["rows"][0] == first["rows"][0]
    assert merged["summary"]["kube"]["seed_list"] == [42]
