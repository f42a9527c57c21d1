"""Alibaba GPU-share pods (annotations ``alibabacloud.com/gpu-milli``, ``gpu-count``,
``gpu-index``, ``gpu-card-model``), as FGD's simulator reads them, → per-device shares.

A node's devices are its ``alibabacloud.com/gpu-count`` allocatable; a pod asks ``gpu-count``
devices with ``gpu-milli`` thousandths free on each. The rules and the simulator's commit:
docs/formats.md ("Alibaba GPU-share").
"""

from __future__ import annotations

from dataclasses import dataclass

from toposolve.core.instance import (
    DEVICE_MILLI,
    MAX_DEVICES_PER_POD,
    DeviceShare,
    Job,
    LabelRequirement,
    Node,
    PodConstraints,
    Task,
)
from toposolve.core.quantity import MilliUnits
from toposolve.formats.k8s.fields import Field, decimal

GPUSHARE_MILLI = "alibabacloud.com/gpu-milli"
GPUSHARE_COUNT = "alibabacloud.com/gpu-count"  # the resource placed per device (node allocatable)
GPUSHARE_INDEX = "alibabacloud.com/gpu-index"
GPUSHARE_MODEL = "alibabacloud.com/gpu-card-model"  # pod annotation and node label
INDEX_SEPARATOR = "-"
MODEL_SEPARATOR = "|"


@dataclass(frozen=True)
class GpuShareRequest:
    """A pod's GPU-share request: ``count`` devices with ``milli`` each, on a node of one of
    ``models`` (any node when empty); ``devices``: the ``gpu-index`` devices, if given."""

    milli: int
    count: int
    models: tuple[str, ...] = ()
    devices: tuple[int, ...] | None = None

    @property
    def share(self) -> DeviceShare:
        return DeviceShare(resource=GPUSHARE_COUNT, milli=self.milli, count=self.count)

    @property
    def shape(self) -> tuple[int, int, tuple[str, ...]]:
        """What pods of one task share (the devices differ pod by pod)."""
        return (self.milli, self.count, self.models)


def gpushare_request(root: Field, requests: dict[str, int]) -> GpuShareRequest | None:
    """The GPU-share request of the pod at ``root`` (its ``requests`` from the containers), or
    None when it carries neither ``gpu-milli`` nor ``gpu-count``.

    Raises
    ------
    InputError
        One line naming the pod and the annotation: a milli that is not an integer in 1..1000,
        a count that is not a positive integer, one of the two without the other, a
        ``gpu-index`` that does not list ``gpu-count`` distinct devices, or a container request of
        ``alibabacloud.com/gpu-count`` beside the annotations.
    """
    annotations = root.at("metadata.annotations")
    milli_text = annotations[GPUSHARE_MILLI].text()
    count_text = annotations[GPUSHARE_COUNT].text()
    if milli_text is None and count_text is None:
        return None
    if milli_text is None or count_text is None:
        given, missing = ((GPUSHARE_MILLI, GPUSHARE_COUNT) if count_text is None
                          else (GPUSHARE_COUNT, GPUSHARE_MILLI))
        raise annotations[given].fail(f"{given} without {missing}: the simulator places no GPU "
                                      "of such a pod (its pod generator always writes both)")
    milli = decimal(milli_text.strip())
    if milli is None or not 1 <= milli <= DEVICE_MILLI:
        raise annotations[GPUSHARE_MILLI].fail(
            f"{milli_text!r} is not thousandths of one GPU: an integer from 1 to {DEVICE_MILLI}")
    count = decimal(count_text.strip())
    if count is None or not 1 <= count <= MAX_DEVICES_PER_POD:
        raise annotations[GPUSHARE_COUNT].fail(
            f"{count_text!r} is not a device count: an integer from 1 to {MAX_DEVICES_PER_POD}")
    if requests.get(GPUSHARE_COUNT):
        raise annotations[GPUSHARE_COUNT].fail(
            f"a container requests {GPUSHARE_COUNT} beside the GPU-share annotations: give one")
    models = tuple(m for m in (annotations[GPUSHARE_MODEL].text("") or "").split(MODEL_SEPARATOR)
                   if m)
    return GpuShareRequest(milli, count, models, _devices(annotations[GPUSHARE_INDEX], count))


def _devices(field: Field, count: int) -> tuple[int, ...] | None:
    """``gpu-index`` (``"2"``, ``"0-1-2-3"``) as device numbers, or None without it."""
    text = field.text("")
    if not text:
        return None
    devices = [decimal(part) for part in text.split(INDEX_SEPARATOR)]
    if (any(d is None or d < 0 for d in devices) or len(set(devices)) != len(devices)
            or len(devices) != count):
        raise field.fail(f"{text!r} is not {count} distinct device numbers joined by "
                         f"{INDEX_SEPARATOR!r} (gpu-count is {count})")
    return tuple(d for d in devices if d is not None)


def with_gpushare(root: Field, requests: MilliUnits, constraints: PodConstraints
                  ) -> tuple[MilliUnits, PodConstraints, GpuShareRequest | None]:
    """The requests and constraints of the pod (or pod template) at ``root`` with its GPU-share
    request added (``milli × count`` of ``alibabacloud.com/gpu-count``, the model affinity),
    and that request (None without one: ``requests`` and ``constraints`` unchanged)."""
    gpushare = gpushare_request(root, requests)
    if gpushare is None:
        return requests, constraints, None
    requests = MilliUnits({**requests, GPUSHARE_COUNT: gpushare.milli * gpushare.count})
    return requests, with_model(constraints, gpushare.models), gpushare


def with_model(constraints: PodConstraints, models: tuple[str, ...]) -> PodConstraints:
    """``constraints`` that also require a node labelled with one of ``models`` (the
    simulator's ``gpu-card-model`` filter), ANDed into every required-affinity term."""
    if not models:
        return constraints
    need = LabelRequirement(key=GPUSHARE_MODEL, operator="In", values=list(models))
    terms = [[*term, need] for term in constraints.affinity_terms] or [[need]]
    return constraints.model_copy(update={"affinity_terms": terms})


def without_pooled_milli(nodes: list[Node], jobs: list[Job]) -> list[Node]:
    """Nodes without the ``alibabacloud.com/gpu-milli`` allocatable where it only repeats
    ``1000 × gpu-count`` (the simulator's nodes carry both) and no pod requests it."""
    if any(GPUSHARE_MILLI in t.requests for j in jobs for t in j.tasks):
        return nodes
    return [n.model_copy(update={"allocatable": MilliUnits(
        {k: v for k, v in n.allocatable.items() if k != GPUSHARE_MILLI})})
        if n.allocatable.get(GPUSHARE_MILLI) == DEVICE_MILLI * n.allocatable.get(GPUSHARE_COUNT, -1)
        else n for n in nodes]


def gpushare_manifest(task: Task, index: int | None = None) -> tuple[dict[str, int],
                                                                    dict[str, str]]:
    """What a writer gives pod ``index`` of ``task`` (None: its template): (its container
    requests, its GPU-share annotations). A ``deviceShare`` of ``alibabacloud.com/gpu-count``
    becomes ``gpu-milli`` / ``gpu-count`` (its request dropped) and a running pod's devices
    ``gpu-index``, which :func:`gpushare_request` reads back as the same sharing; any other task
    keeps its requests, without annotations."""
    share = task.device_share
    if share is None or share.resource != GPUSHARE_COUNT:
        return dict(task.requests), {}
    requests = {k: v for k, v in task.requests.items() if k != GPUSHARE_COUNT}
    annotations = {GPUSHARE_MILLI: str(share.milli), GPUSHARE_COUNT: str(share.count)}
    devices = sorted(task.device_use.get(index, {})) if index is not None else []
    if devices:
        annotations[GPUSHARE_INDEX] = INDEX_SEPARATOR.join(map(str, devices))
    return requests, annotations
