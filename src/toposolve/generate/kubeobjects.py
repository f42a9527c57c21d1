"""Kubernetes objects as ``kubectl get -o yaml`` prints them: uid, resourceVersion,
creationTimestamp, managedFields, ownerReferences. Deterministic: every value comes from the
seeded generator or from a fixed clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

# the instant the dump was taken; objects are created hours or days before it
DUMP_TIME = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)


def timestamp(hours_before: float) -> str:
    """RFC 3339 time ``hours_before`` the dump, whole seconds, as the API server writes it."""
    moment = DUMP_TIME - timedelta(seconds=round(hours_before * 3600))
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class ObjectFactory:
    """Builds ``metadata`` blocks with seeded uids and increasing resourceVersions."""

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._version = 4_812_000

    def uid(self) -> str:
        digits = "".join(f"{b:02x}" for b in self._rng.integers(0, 256, 16).tolist())
        return f"{digits[:8]}-{digits[8:12]}-4{digits[13:16]}-a{digits[17:20]}-{digits[20:32]}"

    def metadata(
        self,
        name: str,
        *,
        hours_before: float,
        namespace: str | None = None,
        labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None,
        owner: dict[str, Any] | None = None,
        managers: tuple[tuple[str, str], ...] = (("kubectl-client-side-apply", "Update"),),
        api_version: str = "v1",
        status_manager: str | None = None,
    ) -> dict[str, Any]:
        """``metadata`` with managedFields: one entry per (manager, operation) owning the
        labels and annotations, plus ``status_manager`` owning ``status``."""
        self._version += int(self._rng.integers(1, 400))
        meta: dict[str, Any] = {
            "creationTimestamp": timestamp(hours_before),
            "name": name,
            "resourceVersion": str(self._version),
            "uid": self.uid(),
        }
        if namespace is not None:
            meta["namespace"] = namespace
        if labels:
            meta["labels"] = dict(labels)
        if annotations:
            meta["annotations"] = dict(annotations)
        if owner is not None:
            meta["ownerReferences"] = [owner]
        meta["managedFields"] = _managed_fields(
            meta, managers, api_version, hours_before, status_manager
        )
        return meta

    def owner(
        self, kind: str, name: str, api_version: str, *, controller: bool = True
    ) -> dict[str, Any]:
        ref: dict[str, Any] = {
            "apiVersion": api_version,
            "kind": kind,
            "name": name,
            "uid": self.uid(),
        }
        if controller:
            ref.update(blockOwnerDeletion=True, controller=True)
        return ref


def _managed_fields(
    meta: dict[str, Any],
    managers: tuple[tuple[str, str], ...],
    api_version: str,
    hours_before: float,
    status_manager: str | None,
) -> list[dict[str, Any]]:
    owned: dict[str, Any] = {}
    for key in ("labels", "annotations"):
        if key in meta:
            owned[f"f:{key}"] = {".": {}, **{f"f:{k}": {} for k in meta[key]}}
    if "ownerReferences" in meta:
        owned["f:ownerReferences"] = {
            ".": {},
            f'k:{{"uid":"{meta["ownerReferences"][0]["uid"]}"}}': {},
        }
    entries = [
        {
            "apiVersion": api_version,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": owned, "f:spec": {}},
            "manager": manager,
            "operation": operation,
            "time": timestamp(hours_before),
        }
        for manager, operation in managers
    ]
    if status_manager is not None:
        entries.append(
            {
                "apiVersion": api_version,
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:status": {}},
                "manager": status_manager,
                "operation": "Update",
                "subresource": "status",
                "time": timestamp(min(hours_before, 0.05)),
            }
        )
    return entries


def kube_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``kind: List`` wrapper kubectl prints around several objects."""
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
