"""toposolve's own job annotations: ``toposolve.io/parallelism`` (docs/ranks.md),
``toposolve.io/movable`` and ``toposolve.io/move-cost`` (docs/defrag.md); the native format
spells them as the job fields ``parallelism``, ``movable`` and ``moveCost``."""

from __future__ import annotations

from pydantic import ValidationError

from toposolve.core.instance import Job
from toposolve.core.limits import MAX_INTEGER
from toposolve.core.parallelism import PARALLELISM_ANNOTATION
from toposolve.formats.k8s.fields import Field, decimal


def read_parallelism(job: Job, where: Field) -> Job:
    """Set ``job.parallelism`` from ``where`` (a string, or absent).

    Parameters
    ----------
    job
        The job read; updated in place and returned.
    where
        The annotation's or field's value, located.

    Raises
    ------
    InputError
        Not a string, malformed, or a world size that is neither the job's accelerators nor its
        pods (docs/ranks.md); the error names ``where``.
    """
    text = where.text()
    if text is None:
        return job
    try:
        job.parallelism = text
    except ValidationError as exc:
        raise where.fail(str(exc.errors()[0]["msg"]).removeprefix("Value error, ")) from None
    return job


MOVABLE_ANNOTATION = "toposolve.io/movable"
MOVE_COST_ANNOTATION = "toposolve.io/move-cost"


def read_job_annotations(job: Job, root: Field) -> Job:
    """Set the job's parallelism, ``movable`` and ``move_cost`` from the annotations of the
    object at ``root`` (each left as it is when absent); a bad value names its annotation."""
    annotations = root.at("metadata.annotations")
    read_parallelism(job, annotations[PARALLELISM_ANNOTATION])
    return read_movability(job, annotations[MOVABLE_ANNOTATION],
                           annotations[MOVE_COST_ANNOTATION])


def read_movability(job: Job, movable: Field, cost: Field) -> Job:
    """``movable``: ``"true"`` / ``"false"`` (or a YAML boolean in the native format);
    ``cost``: a positive integer (a decimal string in an annotation)."""
    value = movable.value
    if value is not None:
        text = str(value).lower() if isinstance(value, (str, bool)) else None
        if text not in ("true", "false"):
            raise movable.fail(f"expected \"true\" or \"false\", got {value!r}")
        job.movable = text == "true"
    value = cost.value
    if value is not None:
        number = decimal(value) if isinstance(value, str) else value
        whole = isinstance(number, int) and not isinstance(number, bool)
        if not whole or not 1 <= number <= MAX_INTEGER:
            raise cost.fail(f"expected a positive integer, got {value!r}")
        job.move_cost = number
    return job
