"""The job's ``toposolve.io/parallelism`` annotation (native format: the ``parallelism`` field)."""

from __future__ import annotations

from pydantic import ValidationError

from toposolve.core.instance import Job
from toposolve.core.parallelism import PARALLELISM_ANNOTATION
from toposolve.formats.k8s.fields import Field


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


def annotation_field(root: Field) -> Field:
    """The parallelism annotation of the object at ``root`` (absent when not set)."""
    return root.at("metadata.annotations")[PARALLELISM_ANNOTATION]
