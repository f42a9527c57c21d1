"""The native trace format: durations, copies, ordering, and one-line errors."""

from __future__ import annotations

import pytest

from toposolve.core.errors import InputError
from toposolve.formats.trace.model import parse_duration
from toposolve.formats.trace.native import load_trace_documents


def doc(*jobs, **top):
    return {"apiVersion": "toposolve/v1", "kind": "Trace", "jobs": list(jobs), **top}


def job(name="j", **fields):
    return {
        "name": name,
        "tasks": [{"name": "w", "replicas": 2, "requests": {"nvidia.com/gpu": 8}}],
        **fields,
    }


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        (90, 90.0),
        ("90", 90.0),
        ("10s", 10.0),
        ("2m", 120.0),
        ("1.5h", 5400.0),
        ("1d", 86400.0),
        ("250ms", 0.25),
    ],
)
def test_durations_read_as_seconds(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["x", "-1", -1, "3w", True, float("nan")])
def test_bad_durations_are_value_errors(bad):
    with pytest.raises(ValueError):
        parse_duration(bad)


def test_copies_arrive_every_and_sort_by_arrival():
    trace = load_trace_documents(
        [
            doc(
                job("late", arrival="1h"),
                job("c-{i}", count=3, arrival=60, every="10m", duration="2h"),
            )
        ],
        "t.yaml",
    )
    assert [tj.key for tj in trace.jobs] == [
        "default/c-0",
        "default/c-1",
        "default/c-2",
        "default/late",
    ]
    assert [tj.arrival for tj in trace.jobs] == [60.0, 660.0, 1260.0, 3600.0]
    assert [tj.job.creation_index for tj in trace.jobs] == [0, 1, 2, 3]
    assert trace.jobs[0].duration == 7200.0
    assert next(tj for tj in trace.jobs if tj.key == "default/late").duration is None


def test_declared_queues_and_classes():
    trace = load_trace_documents(
        [
            doc(
                job(priorityClass="hi"),
                priorityClasses=[{"name": "hi", "value": 9}],
                queues=[{"name": "q"}],
            )
        ],
        "t",
    )
    assert [pc.name for pc in trace.priority_classes] == ["hi"]
    assert [q.name for q in trace.queues] == ["q"]


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (doc(job(arrival="soon")), "Job/default/j: arrival"),
        (doc(job(speed=3)), "Job/default/j"),
        (doc(job(), job()), "Job/default/j: name"),
        (
            doc({"name": "r", "tasks": [{"name": "w", "replicas": 1, "running": ["n0"]}]}),
            "Job/default/r: tasks.running",
        ),
        ({"apiVersion": "toposolve/v1", "kind": "Instance"}, "Trace: kind"),
        (doc(job(), extra=1), "Trace"),
    ],
)
def test_errors_name_file_object_and_field(body, where):
    with pytest.raises(InputError) as err:
        load_trace_documents([body], "t.yaml")
    assert str(err.value).startswith(f"t.yaml: {where}")
    assert "\n" not in str(err.value)
