"""Hostile input fails fast: one line ``file: object: field: what``, exit 2, nothing written.

Each input here would hang, exhaust memory or end in a traceback without its guard (an alias
bomb of 10^9 nodes, a billion replicas or nodes, a 1 GB name, a 10,000-deep HyperNode chain
walked cubically, numbers past int64). No test measures time: the inputs are sized so that the
unguarded code could not finish at all. ``benchmarks/hostile_inputs.py`` records timings.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import textwrap
import time
from pathlib import Path

import pytest
import yaml
from builders import example1_tree, gang, hard, instance, nodes
from scheduler_docs import kai_docs, kueue_docs, podset, workload, write_docs

from toposolve.cli.main import main
from toposolve.core.errors import InputError
from toposolve.core.instance import HyperNode, Member
from toposolve.core.limits import MAX_TIER
from toposolve.core.problem import compile_problem
from toposolve.core.topology import build_topology, find_parent_cycle
from toposolve.engines.contract import SolveOptions
from toposolve.formats import load_instance
from toposolve.generate import generate_document

HOSTNAME = "kubernetes.io/hostname"
INSTANCES = Path(__file__).resolve().parents[1] / "instances"
EXAMPLE = str(INSTANCES / "seed000-example1.yaml")


def one_line_error(capsys, argv: list[str]) -> str:
    """Run the CLI, expect exit 2 and exactly one stderr line; return it."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("toposolve: "), err
    assert "Traceback" not in err
    return lines[0]


def native(tmp_path: Path, **changes) -> str:
    """A small native instance with ``changes`` applied to its first node group / job."""
    doc = {
        "apiVersion": "toposolve/v1",
        "kind": "Instance",
        "nodeGroups": [
            {"name": "n-{i}", "count": 4, "allocatable": {"cpu": "8", "nvidia.com/gpu": 8}}
        ],
        "jobs": [
            {
                "name": "j",
                "tasks": [{"name": "w", "replicas": 2, "requests": {"nvidia.com/gpu": 1}}],
            }
        ],
    }
    for path, value in changes.items():
        target = doc
        keys = path.split("__")
        for key in keys[:-1]:
            target = target[int(key)] if key.isdigit() else target[key]
        target[keys[-1]] = value
    out = tmp_path / "in.yaml"
    out.write_text(yaml.safe_dump(doc))
    return str(out)


# -- YAML ------------------------------------------------------------------------------------


def alias_bomb(levels: int = 9, fanout: int = 10) -> str:
    """Nine levels of ten aliases: 10^9 HyperNode members once expanded."""
    lines = ["x0: &x0 [" + ", ".join(["{selector: {exactMatch: {name: n0}}}"] * fanout) + "]"]
    for k in range(1, levels):
        lines.append(f"x{k}: &x{k} [" + ", ".join([f"*x{k - 1}"] * fanout) + "]")
    return textwrap.dedent(
        """\
        apiVersion: topology.volcano.sh/v1alpha1
        kind: HyperNode
        metadata:
          name: bomb
          annotations:
        {anchors}
        spec: {{tier: 1, members: *x{last}}}
        """
    ).format(anchors="\n".join("    " + line for line in lines), last=levels - 1)


def test_alias_bomb_is_refused_before_anything_walks_it(tmp_path, capsys):
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb())
    line = one_line_error(capsys, ["show", str(path)])
    assert (
        line.startswith(f"toposolve: {path}: the YAML stands for ")
        and "more than the limit 20,000,000" in line
    )


def test_a_modest_alias_expansion_is_also_bounded(tmp_path, capsys):
    # 10^6 members: below the total limit, but aliases add more than a million nodes
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb(levels=6))
    assert "YAML aliases expand the file by" in one_line_error(capsys, ["show", str(path)])


def test_ordinary_aliases_are_fine(tmp_path):
    path = tmp_path / "aliases.yaml"
    path.write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: a, labels: &l {zone: x}}, status: "
        "{allocatable: &r {cpu: '4'}}}\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: b, labels: *l}, status: {allocatable: "
        "*r}}\n"
    )
    assert [n.labels for n in load_instance(path, warn=lambda _: None).nodes] == [{"zone": "x"}] * 2


def test_a_recursive_yaml_alias_is_a_one_line_error(tmp_path, capsys):
    path = tmp_path / "loop.yaml"
    path.write_text("apiVersion: v1\nkind: Node\nmetadata: &m {name: a, again: *m}\n")
    assert "recursive alias" in one_line_error(capsys, ["show", str(path)])


# -- sizes -----------------------------------------------------------------------------------


def test_replicas_beyond_the_job_limit(tmp_path, capsys):
    line = one_line_error(
        capsys, ["show", native(tmp_path, jobs__0__tasks__0__replicas=99_999_999_999)]
    )
    assert line.endswith(
        "Job/default/j: tasks[0].replicas: must be at most 200,000, got 99999999999"
    )
    vcjob = tmp_path / "vcjob.yaml"
    vcjob.write_text(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: big}\n"
        "spec: {tasks: [{name: w, replicas: 99999999999, template: {spec: {containers: []}}}]}\n"
    )
    assert "Job/default/big: spec.tasks[0].replicas: " in one_line_error(
        capsys, ["show", str(vcjob)]
    )


def test_node_group_count_and_pods_across_job_copies(tmp_path, capsys):
    line = one_line_error(capsys, ["show", native(tmp_path, nodeGroups__0__count=1_000_000_000)])
    assert line.endswith("nodeGroups[0]: count: must be at most 200,000, got 1000000000")
    # 100,000 copies of a 100-pod job: each copy is fine, the instance is not
    path = native(
        tmp_path, jobs__0__count=100_000, jobs__0__name="j-{i}", jobs__0__tasks__0__replicas=100
    )
    assert (
        "the instance would have 10,000,000 pods, more than the limit 2,000,000"
        in one_line_error(capsys, ["show", path])
    )


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        ("n-{i:999999999d}", "format spec '999999999d'"),
        ("n-{i:{i}}", "format spec"),
        ("x" * 300 + "{i}", "303 characters"),
    ],
)
def test_name_patterns_cannot_make_huge_names(tmp_path, capsys, pattern, words):
    line = one_line_error(capsys, ["show", native(tmp_path, nodeGroups__0__name=pattern)])
    assert "nodeGroups[0]: name: " in line and words in line


def test_name_ranges_are_bounded(tmp_path, capsys):
    path = native(
        tmp_path,
        topology={"hyperNodes": [{"name": "h", "tier": 1, "nodes": ["n-0..n-99999999999"]}]},
    )
    assert "is longer than 2,000,000 names" in one_line_error(capsys, ["show", path])


def test_absurd_generator_sizes_are_refused_before_writing(capsys, tmp_path):
    out = tmp_path / "g.yaml"
    line = one_line_error(capsys, ["generate", "superpod", "--nodes", "100000000", "-o", str(out)])
    assert "argument --nodes: expected an integer in [1, 200,000]" in line
    line = one_line_error(
        capsys,
        [
            "generate",
            "fattree",
            "--option",
            "arity=100000",
            "--option",
            "depth=100000",
            "-o",
            str(out),
        ],
    )
    assert "more than 200,000 nodes" in line
    assert not out.exists()
    with pytest.raises(InputError, match="leaf_size"):
        generate_document("superpod", leaf_size=10**9)


# -- numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        (
            {"nodeGroups__0__allocatable": {"nvidia.com/gpu": 1e308}},
            "allocatable.nvidia.com/gpu: 1e+308 is more than",
        ),
        ({"nodeGroups__0__allocatable": {"cpu": "90Ei"}}, "allocatable.cpu: '90Ei' is more than"),
        (
            {"jobs__0__networkTopology": {"mode": "hard", "highestTierAllowed": 1e30}},
            "expected an integer, got 1e+30",
        ),
        (
            {"jobs__0__networkTopology": {"mode": "hard", "highestTierAllowed": 10**30}},
            "got a 31-digit number",
        ),
        (
            {"jobs__0__priorityClass": None, "jobs__0__minAvailable": 10**40},
            "minAvailable: must be at most",
        ),
    ],
)
def test_huge_numbers_are_one_line(tmp_path, capsys, changes, words):
    assert words in one_line_error(capsys, ["show", native(tmp_path, **changes)])


def test_a_limit_above_the_root_is_no_limit():
    inst = instance(nodes(8), example1_tree(), [gang("j", 2, topology=hard(2**62))])
    problem = compile_problem(inst)
    assert problem.jobs[0].limit.tier == problem.topology.max_tier == 4


# -- the HyperNode tree ----------------------------------------------------------------------


def chain(depth: int, *, tiers_fall: bool) -> list[HyperNode]:
    def child(name: str) -> list[Member]:
        return [Member.exact(name, "HyperNode")]

    return [
        HyperNode(
            name=f"h{k}",
            tier=(depth - 1 - k if tiers_fall else 1),
            members=child(f"h{k + 1}") if k + 1 < depth else [],
        )
        for k in range(depth)
    ]


def test_a_10000_deep_chain_fails_on_its_first_bad_link():
    # the old cycle check walked from every start keeping a list: cubic in the depth
    with pytest.raises(
        InputError, match="member 'h1' has tier 1, not lower than this HyperNode's tier 1"
    ):
        build_topology([], chain(10_000, tiers_fall=False))


def test_cycle_search_is_linear_and_names_the_cycle():
    links = {f"h{k}": f"h{k + 1}" for k in range(200_000)}
    links["h200000"] = "h100000"
    cycle = find_parent_cycle(links)
    assert cycle[0] == "h100000" and len(cycle) == 100_001
    assert find_parent_cycle({f"h{k}": f"h{k + 1}" for k in range(200_000)}) == []


def test_tiers_are_bounded_and_the_deepest_valid_chain_builds():
    with pytest.raises(ValueError, match="less than or equal to 100"):
        HyperNode(name="h", tier=MAX_TIER + 1)
    topo = build_topology([], chain(MAX_TIER + 1, tiers_fall=True))
    assert (topo.min_tier, topo.max_tier) == (0, MAX_TIER + 1) and int(
        topo.depth.max()
    ) == MAX_TIER + 1


def test_a_hypernode_with_100000_members(tmp_path):
    path = native(
        tmp_path,
        nodeGroups__0__count=100_000,
        topology={"hyperNodes": [{"name": "big", "tier": 1, "nodes": ["n-0", "n-1..n-99999"]}]},
    )
    problem = compile_problem(load_instance(path))
    assert int(problem.topology.node_count[problem.topology.index["big"]]) == 100_000


# -- flags and files -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (
            ["--time-limit", "nan"],
            "argument --time-limit: expected seconds in (0, 604800], got nan",
        ),
        (["--time-limit", "-1"], "got -1.0"),
        (["--time-limit", "inf"], "got inf"),
        (
            ["--workers", "1000000"],
            "argument --workers: expected an integer in [1, 1,024], got 1,000,000",
        ),
        (["--seed", "-1"], "argument --seed: expected an integer in [0, 2,147,483,647], got -1"),
        (
            ["--param", "num_workers=1000000"],
            "solver.parameters.num_workers: expected an integer in [0, 1,024]",
        ),
        (
            ["--param", "max_time_in_seconds=.nan"],
            "solver.parameters.max_time_in_seconds: invalid value nan",
        ),
    ],
)
@pytest.mark.parametrize("engine", ["heuristic", "cpsat"])
def test_bad_solver_flags_are_one_line_errors(tmp_path, capsys, flags, words, engine):
    out = tmp_path / "plan.json"
    line = one_line_error(capsys, ["solve", EXAMPLE, "--engine", engine, *flags, "-o", str(out)])
    assert words in line and not out.exists()


def test_solve_options_refuse_the_same_values_from_python():
    for bad in ({"time_limit": float("nan")}, {"time_limit": -1}, {"workers": 10**6}, {"seed": -1}):
        with pytest.raises(InputError, match="options"):
            SolveOptions(**bad)


def test_a_missing_command_is_one_line(capsys):
    assert "the following arguments are required" in one_line_error(capsys, [])


@pytest.mark.parametrize("kind", ["plan", "profile"])
def test_non_utf8_plan_and_profile_name_the_file(tmp_path, capsys, kind):
    bad = tmp_path / ("bad.json" if kind == "plan" else "bad.yaml")
    bad.write_bytes(b'{"schema": 1, "engine": "x\xff"}')
    argv = (
        ["check", EXAMPLE, "--plan", str(bad)]
        if kind == "plan"
        else ["solve", EXAMPLE, "--profile", str(bad)]
    )
    line = one_line_error(capsys, argv)
    assert line == f"toposolve: {bad}: not UTF-8 text (byte 0xff at offset 26)"


def test_unwritable_outputs_fail_before_any_work(tmp_path, capsys):
    line = one_line_error(
        capsys, ["compare", EXAMPLE, "--engines", "heuristic", "--plot", "/nonexistent/x.png"]
    )
    assert (
        line
        == "toposolve: /nonexistent/x.png: cannot write: directory '/nonexistent' does not exist "
           "(--plot)"
    )
    assert "is a directory" in one_line_error(capsys, ["solve", EXAMPLE, "-o", str(tmp_path)])


# -- plans, export and output files (issue 19) --------------------------------------------------


def hostile_plan(folder: Path, name: str, **changes) -> str:
    """A one-binding JSON plan with ``changes`` to its top-level fields."""
    doc = {"schema": 1, "engine": "x", "status": "FEASIBLE",
           "bindings": [{"pod": "ns/a-0", "node": "n-0"}], **changes}
    path = folder / name
    path.write_text(json.dumps(doc))
    return str(path)


DEEP = "[" * 50_000 + "]" * 50_000


@pytest.mark.parametrize(
    "changes, words",
    [
        ({"bindings": [{"pod": 5, "node": "n-0"}]},
         "Plan: bindings[0].pod: expected a string, got 5"),
        ({"bindings": [{"pod": "ns/a", "node": "n-0", "nominated": "yes"}]},
         "Plan: bindings[0].nominated: expected true or false, got 'yes'"),
        ({"bindings": [{"pod": "ns/a", "node": "n-0"}, {"pod": "ns/a", "node": "n-1"}]},
         "Plan: bindings[1].pod: the plan binds 'ns/a' twice (first at bindings[0])"),
        ({"bindings": [{"pod": "ns/a\n---\nkind: Secret", "node": "n-0"}]},
         "Plan: bindings[0].pod: pod name 'a\\n---\\nkind: Secret' is not a DNS subdomain"),
        ({"bindings": [{"pod": "ns/a", "node": ""}]}, "bindings[0].node: expected a name"),
        ({"bindings": [{"pod": "ns/a", "node": "Node_1"}]},
         "bindings[0].node: node name 'Node_1' is not a DNS subdomain"),
        ({"bindings": [0] * 2_000_001}, "bindings: 2,000,001 entries, more than the limit"),
        ({"stats": "DEEP"}, "invalid JSON: lists or mappings nested too deeply to read"),
    ],
)
def test_hostile_plans_are_refused_by_export_and_check(tmp_path, capsys, changes, words):
    plan = hostile_plan(tmp_path, "plan.json", **changes)
    if changes.get("stats") == "DEEP":
        Path(plan).write_text(Path(plan).read_text().replace('"DEEP"', DEEP))
    out = tmp_path / "out.yaml"
    start = time.perf_counter()
    line = one_line_error(capsys, ["export", plan, "-o", str(out)])
    assert time.perf_counter() - start < 5
    assert line.startswith(f"toposolve: {plan}: ") and words in line and not out.exists()
    if "twice" not in words and "DNS" not in words:  # check reports those as violations
        assert words in one_line_error(capsys, ["check", EXAMPLE, "--plan", plan])


def test_an_instance_nested_50000_deep_is_one_line(tmp_path, capsys):
    path = tmp_path / "deep.json"
    path.write_text('{"apiVersion": "v1", "kind": "Node", "metadata": ' + DEEP + "}")
    assert "nested too deeply" in one_line_error(capsys, ["show", str(path)])


def test_a_full_disk_keeps_the_previous_plan(tmp_path, capsys, monkeypatch):
    """Issue 19 §3: ``solve -o`` used to truncate the old plan and leave half a new one."""
    out = tmp_path / "plan.json"
    out.write_text("the previous plan\n")

    def disk_full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", disk_full)
    line = one_line_error(capsys, ["solve", EXAMPLE, "--engine", "heuristic", "-o", str(out)])
    assert line == f"toposolve: {out}: cannot write: No space left on device"
    assert out.read_text() == "the previous plan\n"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"]  # no temporary file left


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="/dev/full does not exist here")
@pytest.mark.parametrize("command", ["solve", "export"])
def test_writing_to_dev_full_is_one_line_and_leaves_the_device(tmp_path, capsys, command):
    argv = (["solve", EXAMPLE, "--engine", "heuristic"] if command == "solve"
            else ["export", hostile_plan(tmp_path, "plan.json")])
    line = one_line_error(capsys, [*argv, "-o", "/dev/full"])
    assert line == "toposolve: /dev/full: cannot write: No space left on device"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)  # written in place, never replaced


# -- Kueue / KAI / label-topology readers (issue 19) ------------------------------------------


def kai_with(tmp_path: Path, subgroups: list[dict], pods: list[str], gpu: dict | None = None):
    docs = kai_docs(subgroups, pods)
    if gpu is not None:
        docs.append({"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
                     "metadata": {"name": "q"}, "spec": {"resources": {"gpu": gpu}}})
    return str(write_docs(tmp_path, docs))


def kueue_admitted(tmp_path: Path, slices: list[dict], levels=("block", HOSTNAME)) -> str:
    status = {"admission": {"clusterQueue": "cq", "podSetAssignments": [
        {"name": "main", "count": 2, "topologyAssignment": {"levels": [HOSTNAME],
                                                              "slices": slices}}]}}
    return str(write_docs(tmp_path, kueue_docs(list(levels), workload([podset("main", 2)],
                                                                      status))))


def deep_chain(depth: int) -> list[dict]:
    required = {"topology": "t", "requiredTopologyLevel": "rack"}
    return [{"name": f"s{k}", **({"parent": f"s{k - 1}"} if k else {}),
             "topologyConstraint": required} for k in range(depth)]


READER_CASES = {
    "KAI gpu.limit .inf": (
        lambda t: kai_with(t, [], ["a"], {"limit": float("inf")}),
        "Queue/q: spec.resources.gpu.limit: inf is not a Kubernetes quantity"),
    "KAI quota 1e300": (
        lambda t: kai_with(t, [], ["a"], {"quota": 1e300}),
        "Queue/q: spec.resources.gpu.quota: 1e+300 is more than the largest amount"),
    "KAI SubGroup chain 300 deep": (
        lambda t: kai_with(t, deep_chain(300), ["s299"]),
        "PodGroup/default/pg: spec.subGroups[64].parent: SubGroup 's64' is nested 65 levels"),
    "Kueue domainCount 1e12": (
        lambda t: kueue_admitted(t, [{"domainCount": 10**12, "podCounts": {"universal": 1},
                                      "valuesPerLevel": [{"universal": "n1"}]}]),
        "slices[0].domainCount: 1,000,000,000,000 domains, more than the 2 pods"),
    "Kueue Topology of 20,001 levels": (
        lambda t: kueue_admitted(t, [], levels=[f"l{i}" for i in range(20_000)] + [HOSTNAME]),
        "Topology/t: spec.levels: 20,001 levels, more than the limit of 100 levels"),
}


@pytest.mark.parametrize("case", READER_CASES)
@pytest.mark.parametrize("engine", ["kai", "cpsat"])
def test_hostile_kueue_and_kai_inputs_are_one_line_and_write_nothing(tmp_path, capsys, case,
                                                                      engine):
    make, words = READER_CASES[case]
    path, out = make(tmp_path), tmp_path / "plan.json"
    start = time.perf_counter()
    line = one_line_error(capsys, ["solve", path, "--engine", engine, "-o", str(out)])
    assert time.perf_counter() - start < 5
    assert line.startswith(f"toposolve: {path}: ") and words in line, line
    assert not out.exists()


def test_hostile_topology_labels_are_one_line(tmp_path, capsys):
    path = kai_with(tmp_path, [], ["a"])
    many = ",".join(f"l{i}" for i in range(10_000))
    line = one_line_error(capsys, ["show", path, "--topology-labels", many])
    assert line == "toposolve: --topology-labels: 10,000 labels, more than the limit of 100 levels"


def test_a_topology_label_no_node_has_is_one_warning_line(tmp_path, capsys):
    path = str(write_docs(tmp_path, kai_docs([], ["a"])[:4]))  # the nodes only
    assert main(["show", path, "--topology-labels", "example.com/nosuch"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"{path}: --topology-labels: no node carries label 'example.com/nosuch', so "
                   "that level holds no domain"]


def test_a_non_utf8_kueue_file_names_the_file(tmp_path, capsys):
    path = kueue_admitted(tmp_path, [])
    Path(path).write_bytes(Path(path).read_bytes().replace(b"block", b"bl\xffck", 1))
    assert "not UTF-8 text (byte 0xff" in one_line_error(capsys, ["show", path])
