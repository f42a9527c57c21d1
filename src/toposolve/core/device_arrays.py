"""The per-device arrays of a compiled problem (docs/formats.md, per-device sharing): whole
devices per node, the running pods' use of each device, each group's device shape."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from toposolve.core.errors import InputError
from toposolve.core.instance import DEVICE_MILLI, Instance, Task, share_resources


class DeviceArrays:
    """The per-device arrays of a problem (:class:`Problem`'s ``device_*`` fields)."""

    def __init__(self, instance: Instance, resources: tuple[str, ...],
                 node_index: Mapping[str, int]) -> None:
        self.src = instance.source
        self.node_index = node_index
        name = device_resource_name(instance)
        self.name = name or ""
        self.resource = -1 if name is None else resources.index(name)
        self.milli: list[int] = []
        self.count: list[int] = []
        self.pod_use: dict[str, dict[int, int]] = {}  # running pod -> device -> thousandths
        n = len(instance.nodes)
        if self.resource < 0:
            self.node_devices = np.zeros(0, dtype=np.int64)
            self.used = np.zeros((0, 0), dtype=np.int64)
            return
        self.node_devices = np.array([node.allocatable.get(name, 0) // DEVICE_MILLI
                                      for node in instance.nodes], dtype=np.int64).reshape(n)
        width = int(self.node_devices.max(initial=0))
        self.used = np.zeros((n, width), dtype=np.int64)
        self.used[np.arange(width)[None, :] >= self.node_devices[:, None]] = DEVICE_MILLI

    def add_shape(self, task: Task, request: np.ndarray, obj: str) -> None:
        """Append the device shape of one group of ``task`` (whole devices without a share)."""
        if self.resource < 0:
            return
        share = task.device_share
        asked = int(request[self.resource])
        if share is not None:
            self.milli.append(share.milli)
            self.count.append(share.count)
        elif asked % DEVICE_MILLI == 0 or len(task.running) == task.replicas:
            whole = asked % DEVICE_MILLI == 0 and asked > 0
            self.milli.append(DEVICE_MILLI if whole else 0)
            self.count.append(asked // DEVICE_MILLI if whole else 0)
        else:
            raise InputError(f"{asked}m is not whole devices: a pod sharing a device needs a "
                             "deviceShare", file=self.src, obj=obj,
                             field=f"task {task.name}: requests")

    def add_bulk(self, requests: np.ndarray, nodes: np.ndarray,
                 device_use: np.ndarray | None, names: list[str] | None = None) -> None:
        """Shapes of the bulk job's groups (one per pod) and their pods' device use
        (``names``: the pods', for :attr:`pod_use`)."""
        if self.resource < 0:
            return
        asked = requests[:, self.resource]
        whole = (asked % DEVICE_MILLI == 0) & (asked > 0)
        self.milli += np.where(whole, DEVICE_MILLI, 0).tolist()
        self.count += np.where(whole, asked // DEVICE_MILLI, 0).tolist()
        if device_use is not None and self.used.shape[1]:
            use = device_use[:, : self.used.shape[1]]
            np.add.at(self.used, nodes, use)
            for k, name in enumerate(names or []):
                held = np.flatnonzero(use[k])
                if len(held):
                    self.pod_use[name] = {int(d): int(use[k, d]) for d in held}

    def add_running(self, task: Task, index: int, node: int, request: np.ndarray,
                    pod: str) -> None:
        """Add the devices running pod ``pod`` (pod ``index`` of ``task``) holds on ``node``."""
        asked = int(request[self.resource])
        use = task.device_use.get(index, {})
        where = {"file": self.src, "obj": f"Pod/{pod}", "field": "deviceUse"}
        if sum(use.values()) != asked:
            raise InputError(f"the running pod holds {asked}m of {self.name} but deviceUse "
                             f"gives {sum(use.values())}m of its node's devices", **where)
        for device, milli in use.items():
            if device >= self.node_devices[node]:
                raise InputError(f"device {device} on a node of {self.node_devices[node]} "
                                 "devices", **where)
            self.used[node, device] += milli
        if use:
            self.pod_use[pod] = dict(use)

    def fields(self) -> dict[str, object]:
        """The :class:`~toposolve.core.problem.Problem` fields these arrays fill (none without a
        per-device resource, so such problems keep their defaults)."""
        if self.resource < 0:
            return {}
        return {
            "device_resource": self.resource,
            "node_devices": self.node_devices,
            "device_used": self.used,
            "group_device_milli": np.array(self.milli, dtype=np.int64),
            "group_device_count": np.array(self.count, dtype=np.int64),
            "running_device_use": self.pod_use,
        }


def device_resource_name(instance: Instance) -> str | None:
    """The instance's per-device resource (its tasks' ``deviceShare`` resource, also for an
    instance built without validation), or None; two are one :class:`InputError`."""
    shared = share_resources(instance)
    if instance.device_resource is not None:
        shared.setdefault(instance.device_resource, "deviceResource")
    if len(shared) > 1:
        (first, _), (second, where) = list(shared.items())[:2]
        raise InputError(f"per-device sharing of {second!r} beside {first!r}: one resource per "
                         "instance is shared per device", file=instance.source, obj=where,
                         field="deviceShare.resource")
    return next(iter(shared), None)
