"""Plan format: schema 1 round trips through JSON and YAML; bad plans are input errors."""

from __future__ import annotations

import json
import time

import pytest

from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_PLAN_BYTES, MAX_PLAN_NESTING, MAX_PODS
from toposolve.core.plan import Binding, JobPlacement, Plan, SubJobPlacement


def sample() -> Plan:
    return Plan(
        engine="cpsat",
        status="OPTIMAL",
        objective=10.0,
        bound=12.0,
        wall_time_s=1.5,
        bindings=[Binding("ns/a-w-0", "n1"), Binding("ns/b-w-0", "n2", nominated=True)],
        evictions=[Binding("ns/v-w-0", "n2")],
        jobs=[
            JobPlacement("ns/a", True, "s0", [SubJobPlacement("ns/a/w-0", "s0")]),
            JobPlacement("ns/c", False, reason="why"),
        ],
    )


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_plan_file_reads_back_equal(tmp_path, suffix):
    path = tmp_path / f"plan{suffix}"
    sample().write(path)
    again = Plan.read(path)
    assert again == sample()


def test_json_has_the_documented_fields():
    data = json.loads(sample().to_json())
    assert data["schema"] == 1
    assert set(data) >= {
        "engine",
        "status",
        "objective",
        "bound",
        "wall_time_s",
        "bindings",
        "evictions",
        "jobs",
    }
    assert data["bindings"][0] == {"pod": "ns/a-w-0", "node": "n1"}  # nominated only when true
    assert data["bindings"][1]["nominated"] is True
    assert data["evictions"][0] == {"pod": "ns/v-w-0", "node": "n2"}


def test_gap_is_relative_to_the_bound_and_none_without_one():
    assert sample().gap == pytest.approx(0.2)
    assert Plan(engine="x", status="y").gap is None


def test_json_carries_the_gap_after_the_bound():
    """Issue 10: the gap is a top-level field of the plan (null without a bound); reading a plan
    derives it again rather than trusting the file."""
    data = json.loads(sample().to_json())
    assert list(data)[:6] == ["schema", "engine", "status", "objective", "bound", "gap"]
    assert data["gap"] == pytest.approx(0.2)
    assert json.loads(Plan(engine="x", status="FALLBACK", objective=3.0).to_json())["gap"] is None
    assert Plan.from_dict({**data, "gap": 99}).gap == pytest.approx(0.2)


@pytest.mark.parametrize(
    "text, field",
    [
        ("schema: 2\n", "schema"),
        ("[1, 2]\n", "(top)"),
        ("{schema: 1, bindings: [{pod: a}]}\n", "bindings"),
        ("a: [\n", "line"),
    ],
)
def test_bad_plans_are_one_line_input_errors(tmp_path, text, field):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        Plan.read(path)
    assert str(path) in str(err.value) and field in str(err.value) and "\n" not in str(err.value)


# -- hostile plans (issue 19 §1) ------------------------------------------------------------


def plan_doc(**changes) -> dict:
    doc = json.loads(sample().to_json())
    doc.update(changes)
    return doc


def read_error(tmp_path, doc_or_text, name="bad.json") -> str:
    path = tmp_path / name
    text = doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text)
    path.write_text(text)
    start = time.perf_counter()
    with pytest.raises(InputError) as err:
        Plan.read(path)
    assert time.perf_counter() - start < 5
    message = str(err.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    return message


@pytest.mark.parametrize(
    "changes, words",
    [
        ({"bindings": [{"pod": 5, "node": "n1"}]},
         "Plan: bindings[0].pod: expected a string, got 5"),
        ({"bindings": [{"pod": "ns/a", "node": ["n1"]}]}, "bindings[0].node: expected a string"),
        ({"bindings": [{"pod": "ns/a", "node": "n1", "nominated": "yes"}]},
         "bindings[0].nominated: expected true or false, got 'yes'"),
        ({"bindings": [{"pod": "ns/a", "node": "n1", "nominated": 1}]},
         "bindings[0].nominated: expected true or false, got 1"),
        ({"bindings": [{"pod": "", "node": "n1"}]}, "bindings[0].pod: expected a name"),
        ({"bindings": [{"node": "n1"}]}, "bindings[0].pod: missing"),
        ({"bindings": [{"pod": "a", "node": "n", "nodes": "m"}]}, "bindings[0].nodes: unknown"),
        ({"bindings": ["ns/a"]}, "bindings[0]: expected a mapping, got 'ns/a'"),
        ({"bindings": {"pod": "a"}}, "bindings: expected a list"),
        ({"evictions": [{"pod": None, "node": "n1"}]}, "evictions[0].pod: expected a string"),
        ({"jobs": [{"job": "ns/a", "placed": "yes"}]}, "jobs[0].placed: expected true or false"),
        ({"jobs": [{"job": 7, "placed": True}]}, "jobs[0].job: expected a string, got 7"),
        ({"jobs": [{"job": "a", "placed": True, "subjobs": [{"id": 1, "hypernode": None}]}]},
         "jobs[0].subjobs[0].id: expected a string"),
        ({"jobs": [{"job": "a", "placed": True, "subjobs": "s0"}]}, "jobs[0].subjobs: expected"),
        ({"objective": "best"}, "objective: expected a number or null, got 'best'"),
        ({"wall_time_s": True}, "wall_time_s: expected a number"),
        ({"engine": ["cpsat"]}, "engine: expected a string"),
        ({"metrics": [1]}, "metrics: expected a mapping"),
        ({"moves": [{"pod": "ns/a", "from": "n1", "to": "n2", "wave": 0}]},
         "moves[0].wave: expected a wave number (1, 2, …), got 0"),
        ({"moves": [{"pod": "ns/a", "from": "n1", "to": "n2", "wave": "2"}]},
         "moves[0].wave: expected a wave number"),
    ],
)
def test_wrong_types_name_the_file_the_entry_and_the_field(tmp_path, changes, words):
    assert words in read_error(tmp_path, plan_doc(**changes))


def test_free_form_metrics_are_bounded_in_depth(tmp_path):
    deep: list = []
    for _ in range(MAX_PLAN_NESTING + 5):
        deep = [deep]
    assert "stats: nested more than" in read_error(tmp_path, plan_doc(stats={"x": deep}))
    shallow = plan_doc(metrics={"a": {"b": [[1]]}})
    assert Plan.from_dict(shallow).metrics == {"a": {"b": [[1]]}}


@pytest.mark.parametrize("name, text", [
    ("deep.json", '{"schema": 1, "stats": {"x": ' + "[" * 50_000 + "]" * 50_000 + "}}"),
    ("deep.yaml", "schema: 1\nstats: {x: " + "[" * 50_000 + "]" * 50_000 + "}\n"),
])
def test_a_plan_nested_50000_deep_is_refused(tmp_path, name, text):
    assert "nest" in read_error(tmp_path, text, name)


def test_more_bindings_than_pods_in_an_instance_are_refused():
    with pytest.raises(InputError, match=r"bindings: 2,000,001 entries, more than the limit"):
        Plan.from_dict(plan_doc(bindings=[0] * (MAX_PODS + 1)), source="big.json")


def test_a_plan_file_over_the_size_limit_is_refused_unread(tmp_path):
    path = tmp_path / "huge.json"
    with path.open("wb") as f:
        f.truncate(MAX_PLAN_BYTES + 1)  # sparse: nothing is written
    with pytest.raises(InputError, match=f"{MAX_PLAN_BYTES + 1:,} bytes, more than the limit"):
        Plan.read(path)


def test_a_plan_with_100000_bindings_reads_fast(tmp_path):
    """Issue 19: JSON was parsed as YAML, 22-63 s for 10^5 bindings; the json module takes
    about 0.3 s."""
    bindings = [{"pod": f"ns/j{k // 8}-w-{k % 8}", "node": f"n{k % 5000}"} for k in range(100_000)]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(plan_doc(bindings=bindings, evictions=[], jobs=[]), indent=1))
    start = time.process_time()
    plan = Plan.read(path)
    assert time.process_time() - start < 5
    assert len(plan.bindings) == 100_000 and plan.bindings[9] == Binding("ns/j1-w-1", "n9")


def test_yaml_flow_style_and_yaml_plans_are_still_read(tmp_path):
    flow = tmp_path / "flow.yaml"
    flow.write_text("{schema: 1, engine: x, status: y, bindings: [{pod: ns/a, node: n1}]}\n")
    assert Plan.read(flow).bindings == [Binding("ns/a", "n1")]
    two = tmp_path / "two.yaml"
    two.write_text("schema: 1\n---\nschema: 1\n")
    with pytest.raises(InputError, match="one document, not 2"):
        Plan.read(two)


def test_device_indexes_round_trip_and_are_left_out_when_none(tmp_path):
    plan = sample()
    plan.bindings.append(Binding("ns/s-w-0", "n1", devices=[0, 3]))
    path = tmp_path / "plan.json"
    plan.write(path)
    back = Plan.read(path)
    assert back.bindings[-1].devices == [0, 3] and back.bindings[0].devices is None
    data = json.loads(path.read_text())
    assert "devices" not in data["bindings"][0] and "devices" not in data["evictions"][0]


@pytest.mark.parametrize("devices", ["0", [-1], [1.5], [True]])
def test_bad_device_indexes_name_the_field(devices):
    data = {"schema": 1, "bindings": [{"pod": "a/b", "node": "n", "devices": devices}]}
    with pytest.raises(InputError, match="device indexes") as err:
        Plan.from_dict(data, source="p.json")
    assert "bindings[0].devices" in str(err.value)
