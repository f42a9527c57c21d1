"""Jobs and tasks built in bulk from values the replay made itself (openb rows, usage pods).

``model_construct`` still runs pydantic's default factories (slow: an ``inspect.signature`` per
field), so these copy one validated template and give every mutable field a fresh value.
"""

from __future__ import annotations

from typing import Any

from toposolve.core.instance import Job, PodConstraints, Task
from toposolve.core.quantity import MilliUnits

_TASK = Task(name="template", replicas=1)
_JOB = Job(name="template")


def make_task(**fields: Any) -> Task:
    """A task; ``requests`` are in thousandths already (kept as :class:`MilliUnits`)."""
    fresh = {"labels": {}, "constraints": PodConstraints(), "pod_labels": {}, "running": {},
             "device_use": {}}
    return _TASK.model_copy(
        update={**fresh, **fields, "requests": MilliUnits(fields.get("requests", {}))})


def make_job(**fields: Any) -> Job:
    fresh = {"tasks": [], "subgroup_policies": [], "min_task_member": {}, "min_resources": {}}
    return _JOB.model_copy(update={**fresh, **fields})


def renamed(job: Job, name: str) -> Job:
    """A copy of ``job`` (one a reader validated) named ``name``, sharing its tasks.

    Jobs of one shape share their task objects, which keeps a trace of 10^5 jobs small; nothing
    changes a trace job's tasks in place (a replay binds pods on copies:
    ``JobRun.with_running``).
    """
    return job.model_copy(update={"name": name})
