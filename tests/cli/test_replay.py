"""``toposolve replay``: table, record, trace kinds, one-line errors."""

from __future__ import annotations

import json
import time
from pathlib import Path

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
        (["synthetic", "--defrag", "every=0"], "--defrag: every must be an integer"),
        (["synthetic", "--defrag", "every=1,engine=kai"], "engine must be one of cpsat, greedy"),
        (["synthetic", "--fail-rate", "often"], "--fail-rate: the rate must be a number"),
        (["synthetic", "--fail-rate", "1,repair=pray"], "repair must be one of defrag, evict"),
        (["synthetic", "--defrag", "every=1,restart=checkpoint:x"],
         "--defrag: restart=checkpoint:INTERVAL needs a positive interval"),
        (["synthetic", "--fail-rate", "1,restart=checkpoint"],
         "--fail-rate: restart must be one of lose, keep, checkpoint:INTERVAL"),
        (["synthetic", "--fail-rate", "1,restart=checkpoint:30m:save=-1m"],
         "--fail-rate: restart=checkpoint:INTERVAL:save= needs a duration of 0 or more"),
        (["synthetic", "--defrag", "every=1,restart=checkpoint:30m:load=5m"],
         "--defrag: restart=checkpoint:INTERVAL takes save=DURATION and restore=DURATION"),
        (["synthetic", "--fail-rate", "1,scope=node+node"],
         "--fail-rate: scope must name each failure scope once"),
        (["synthetic", "--fail-rate", "1,scope=node+7"],
         "--fail-rate: scope must be node or a HyperNode tier"),
        (["synthetic", "--fail-rate", "1,scope=node:often+1"],
         "--fail-rate: the rate of scope 'node' must be a number ≥ 0, not 'often'"),
        (["synthetic", "--fail-rate", "1,scope=node+1:-2"],
         "--fail-rate: the rate of scope '1' must be a number ≥ 0, not '-2'"),
    ],
)
def test_errors_are_one_line(cluster_file, capsys, args, message):
    assert main(["replay", cluster_file, *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_defrag_policy_moves_jobs_and_the_table_says_so(cluster_file, tmp_path, capsys):
    # 32 one-pod jobs of 5 GPUs, one per node, long and short alternating; then an 8-node gang
    # hard in one leaf, blocked by fragmentation once the short ones end
    lines = [f"{kind}-{i},{2 * i + (kind == 'short')},{'10h' if kind == 'long' else '5m'},1,5,,"
             for i in range(16) for kind in ("long", "short")]
    trace = write_csv(tmp_path, "name,arrival,duration,replicas,gpu,topology,tier\n"
                      + "\n".join([*lines, "target,6m,1h,8,8,hard,1"]) + "\n")
    out = tmp_path / "rec.json"
    assert main(["replay", cluster_file, trace, "--defrag", "every=1,restart=keep",
                 "-o", str(out)]) == 0
    table = capsys.readouterr().out
    assert "moved jobs" in table and "moves/day" in table
    record = json.loads(out.read_text())["records"][0]
    target = next(j for j in record["jobs"] if j["job"] == "default/target")
    assert target["wait"] == 0 and record["summary"]["moved_jobs"] > 0
    assert record["options"]["defrag"]["restart"] == "keep"


def test_fail_rate_columns_and_record(cluster_file, tmp_path, capsys):
    trace = write_csv(tmp_path, "name,arrival,duration,replicas,gpu,topology,tier\n"
                      + "\n".join(f"g{i},{600 * i},6h,4,8,hard,1" for i in range(6)) + "\n")
    out = tmp_path / "rec.json"
    assert main(["replay", cluster_file, trace, "--fail-rate", "5,down=1h", "-o", str(out)]) == 0
    table = capsys.readouterr().out
    assert "failed nodes" in table and "jobs repaired" in table and "jobs evicted" in table
    record = json.loads(out.read_text())["records"][0]
    s = record["summary"]
    assert s["node_failures"] == sum(len(r["failed"]) for r in record["failures"]) > 0
    assert s["failure_jobs_hit"] == s["failure_jobs_repaired"] + s["failure_jobs_evicted"]
    assert record["options"]["failures"]["repair"] == "defrag"


def test_fail_rate_per_scope(cluster_file, tmp_path, capsys):
    """scope=node:0+1:RATE: only the leaves fail (node failures at rate 0); the record keeps the
    scope text and counts the leaf failures alone."""
    trace = write_csv(tmp_path, "name,arrival,duration,replicas,gpu,topology,tier\n"
                      + "\n".join(f"g{i},{600 * i},6h,4,8,hard,1" for i in range(6)) + "\n")
    out = tmp_path / "rec.json"
    assert main(["replay", cluster_file, trace, "--fail-rate", "1,down=1h,scope=node:0+1:5",
                 "-o", str(out)]) == 0
    record = json.loads(out.read_text())["records"][0]
    assert record["options"]["failures"]["scope"] == "node:0+1:5"
    by_scope = record["summary"]["unit_failures_by_scope"]
    assert by_scope.get("1", 0) > 0 and by_scope.get("node", 0) == 0
    assert record["summary"]["node_failures"] == 8 * by_scope["1"]  # a leaf of 8 fails whole


def test_fail_rate_help_documents_scope_rates(capsys):
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "scope=node:2+rack:0.1" in help_text and "TIER[:RATE]" in help_text


def test_bad_csv_names_line_and_column(cluster_file, tmp_path, capsys):
    trace = write_csv(tmp_path, "name,arrival,replicas\na,0,many\n")
    assert main(["replay", cluster_file, trace]) == 2
    assert "line 2: replicas" in capsys.readouterr().err


DEFAULT = str(Path(__file__).resolve().parents[2] / "instances" / "default.yaml")
OPENB_HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
                "deletion_time,scheduled_time\n")


def hostile_files(folder: Path) -> dict[str, tuple[str, str]]:
    """Trace files of issue 19, each with a word its one-line error must hold."""
    pods = "p1,1000,2048,1,1000,,LS,Running,{},100000,{}\n"
    texts = {
        "cell.csv": ("name,arrival,replicas\na,0," + "1" * 140_000 + "\n", "line 2"),
        "digits.csv": (OPENB_HEADER + pods.format("9" * 40, 0), "line 2: creation_time"),
        "twice.csv": (OPENB_HEADER + pods.format(0, 0) + pods.format(50, 50), "duplicate pod"),
        "negative.csv": (OPENB_HEADER + pods.replace("1,1000,,", "-1,1000,,").format(0, 0),
                         "line 2: num_gpu"),
        "long.csv": (OPENB_HEADER + pods.replace("p1", "p" * 401).format(0, 0), "401 char"),
        "newline.csv": ('name,arrival,replicas\n"a\nb",0,1\n', "line 2: name"),
    }
    for name, (text, _) in texts.items():
        (folder / name).write_text(text)
    return {str(folder / name): (str(folder / name), word) for name, (_, word) in texts.items()}


def one_line_refusal(capsys, argv: list[str], out: Path) -> str:
    """Run the CLI; expect exit 2, one stderr line, no output written, well under 5 s."""
    start = time.perf_counter()
    assert main(argv + ["-o", str(out)]) == 2
    assert time.perf_counter() - start < 5
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not out.exists()
    return err


def test_hostile_trace_files_are_one_line_errors_naming_the_file(cluster_file, tmp_path, capsys):
    for path, (source, word) in hostile_files(tmp_path).items():
        err = one_line_refusal(capsys, ["replay", cluster_file, path], tmp_path / "r.json")
        assert source in err and word in err, err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["openb", "--trace-option", "inflate=1e12"], "inflate: expected a number in (0, 10]"),
        (["openb", "--trace-option", "inflate=9.5", "--trace-option", "capacity=1e9"],
         "more than 250,000 jobs"),
        (["synthetic", "--trace-option", "jobs=100000000"], "synthetic trace: jobs"),
        (["synthetic", "--trace-option", "load=1e12"], "synthetic trace: load"),
        (["synthetic", "--trace-option", "colour=1"], "unknown option 'colour'"),
        (["synthetic", "--engines", "volcano,nope"], "--engines: unknown engine 'nope'"),
        (["synthetic", "--engines", " , "], "--engines: no engine named"),
        (["synthetic", "--seed", "-1"], "--seed"),
        (["synthetic", "--time-limit", "nan"], "--time-limit"),
        (["synthetic", "--wall-factor", "inf"], "--wall-factor"),
        (["synthetic", "--cycle", "0"], "--cycle"),
    ],
)
def test_options_are_checked_before_the_first_cycle(cluster_file, tmp_path, capsys, args, words):
    err = one_line_refusal(capsys, ["replay", cluster_file, *args], tmp_path / "r.json")
    assert words in err, err


def test_a_bad_engine_after_a_good_one_is_refused_before_any_replay(cluster_file, tmp_path,
                                                                      capsys, monkeypatch):
    import toposolve.sim.replay as sim_replay

    monkeypatch.setattr(sim_replay, "replay", lambda *a, **k: pytest.fail("replayed"))
    one_line_refusal(capsys, ["replay", cluster_file, "synthetic", "--engines", "volcano,nope"],
                     tmp_path / "r.json")


def test_a_synthetic_trace_replays_on_a_cluster_file_with_jobs(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["replay", DEFAULT, "synthetic", "--trace-option", "jobs=40", "--engines",
            "volcano,heuristic", "-o", str(out)]
    assert main(argv) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (  # one line for both engines, through the toposolve logger
        f"{DEFAULT}: 32 pending job(s) of the cluster dropped (a replay's workload is its "
        "trace; the 29 with running pods stay)")
    assert [line.split(":")[0] for line in err[1:]] == ["volcano", "heuristic"]
    records = json.loads(out.read_text())["records"]
    assert [len(r["jobs"]) for r in records] == [40, 40]
    assert records[0]["summary"]["jobs_started"] > 30
