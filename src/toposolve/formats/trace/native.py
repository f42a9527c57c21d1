"""Reader of the native trace format (``apiVersion: toposolve/v1``, ``kind: Trace``), YAML or JSON.

The format is specified in one place, ``docs/replay.md`` (section *Trace formats*): a job entry
takes every key of a native Instance job (``instances/README-native.md``) plus ``arrival``,
``every`` and ``duration``. Errors are one line naming the file, the job and the field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_TRACE_JOBS
from toposolve.formats.k8s.fields import Field, check_keys
from toposolve.formats.native.reader import (
    API_VERSION,
    JOB_KEYS,
    read_job_shape,
    read_native_class,
    read_native_queue,
    rooted,
)
from toposolve.formats.trace.model import Trace, TraceJob, parse_duration
from toposolve.formats.trace.rows import name_problem, shown

KIND = "Trace"
_TOP_KEYS = ("apiVersion", "kind", "metadata", "priorityClasses", "queues", "jobs")
_TIME_KEYS = ("arrival", "every", "duration")


def is_trace(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("kind") == KIND


def _seconds(field: Field, default: float | None) -> float | None:
    if not field.present:
        return default
    try:
        return parse_duration(field.value)
    except ValueError as exc:
        raise field.fail(str(exc)) from None


def read_trace_entry(item: Field, position: int) -> list[TraceJob]:
    """The jobs of one ``jobs`` entry of a trace (``position``: the trace's jobs before it).

    Raises
    ------
    InputError
        Naming the file, the job and the field.
    """
    value = item.value if isinstance(item.value, dict) else {}
    name = value.get("name") if isinstance(value.get("name"), str) else "?"
    namespace = value.get("namespace") if isinstance(value.get("namespace"), str) else "default"
    entry = Field(value, "", item.file, f"Job/{shown(namespace or 'default')}/{shown(name)}")
    if not isinstance(item.value, dict):
        raise item.fail("expected a mapping")
    check_keys(entry, (*JOB_KEYS, *_TIME_KEYS))
    count = value.get("count", 1)
    if isinstance(count, int) and position + count > MAX_TRACE_JOBS:
        raise entry.fail(f"the trace would hold more than {MAX_TRACE_JOBS:,} jobs (the limit)",
                         suffix="count")
    arrival = _seconds(entry["arrival"], 0.0)
    every = _seconds(entry["every"], 0.0)
    duration = _seconds(entry["duration"], None)
    shape = Field({k: v for k, v in value.items() if k not in _TIME_KEYS}, "", entry.file,
                  entry.obj)
    jobs: list[TraceJob] = []
    for k, job in enumerate(read_job_shape(shape, position)):
        if any(task.running for task in job.tasks):
            raise entry.fail("a trace job cannot have running pods (put them in the cluster file)",
                             suffix="tasks.running")
        problem = name_problem(job.name)
        if problem:
            raise entry.fail(problem, suffix="name")
        jobs.append(TraceJob(job, arrival + k * every, duration))
    return jobs


def load_trace_documents(docs: Sequence[Any], source: str) -> Trace:
    """Read one native trace document; raise :class:`InputError` naming file, job and field."""
    if len(docs) != 1:
        raise InputError(f"a {KIND} file holds exactly one YAML document, found {len(docs)}",
                         file=source)
    doc = docs[0]
    if not isinstance(doc, dict):
        raise InputError("expected a mapping at the top level", file=source)
    root = Field(doc, "", source, KIND)
    check_keys(root, _TOP_KEYS)
    if root["apiVersion"].text() != API_VERSION:
        raise root["apiVersion"].fail(f"unsupported apiVersion (expected {API_VERSION})")
    if root["kind"].text() != KIND:
        raise root["kind"].fail(f"expected kind {KIND}")
    queues = [read_native_queue(rooted(f, "Queue", i))
              for i, f in enumerate(root["queues"].elements())]
    classes = [read_native_class(rooted(f, "PriorityClass", i))
               for i, f in enumerate(root["priorityClasses"].elements())]
    jobs: list[TraceJob] = []
    for item in root["jobs"].elements():
        jobs.extend(read_trace_entry(item, len(jobs)))
    trace = Trace(jobs, source, queues, classes)
    trace.check_unique()
    return trace.sorted()
