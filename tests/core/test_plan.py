"""Plan format: schema 1 round trips through JSON and YAML; bad plans are input errors."""

from __future__ import annotations

import json

import pytest

from toposolve.core.errors import InputError
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
