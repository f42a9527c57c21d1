"""Single objects of the export forms: ``policy/v1 Eviction`` and KAI's ``BindRequest``.

Sources: ``Eviction`` (``policy/v1``, body of ``POST /api/v1/namespaces/NS/pods/NAME/eviction``)
as in Kubernetes' ``api/openapi-spec/v3/apis__policy__v1_openapi.json``; ``BindRequest``
(``scheduling.run.ai/v1alpha2``) as KAI-Scheduler's scheduler cache creates it
(``pkg/scheduler/cache/cache.go``, ``createBindRequest``, KAI-Scheduler@d5bc503).
"""

from __future__ import annotations

import json
from typing import Any

from toposolve.core.instance import Task
from toposolve.core.plan import Binding
from toposolve.formats.k8s.fields import Document

GPU = "nvidia.com/gpu"
KAI_API = "scheduling.run.ai/v1alpha2"


def metadata(pod: str) -> dict[str, str]:
    """``{name, namespace}`` of ``namespace/name`` (namespace ``default`` when left out)."""
    namespace, _, name = pod.rpartition("/")
    return {"name": name, "namespace": namespace or "default"}


def eviction_object(victim: Binding) -> dict[str, Any]:
    """The ``policy/v1 Eviction`` of the pod ``victim.pod`` (grace period: the pod's own)."""
    return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": metadata(victim.pod)}


def eviction_command(victim: Binding) -> str:
    """The ``kubectl`` line that posts :func:`eviction_object` (an Eviction is a pod
    subresource: ``kubectl create -f`` cannot create one, ``kubectl create --raw`` posts it)."""
    meta = metadata(victim.pod)
    body = json.dumps(eviction_object(victim), separators=(",", ":"))
    return (f"kubectl create --raw /api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}"
            f"/eviction -f - <<< '{body}'")


def bind_request_object(binding: Binding, task: Task | None,
                        pod: Document | None) -> dict[str, Any]:
    """The KAI ``BindRequest`` that has KAI's binder bind ``binding.pod`` to ``binding.node``.

    Parameters
    ----------
    binding
        The planned placement.
    task
        The pod's task (its whole-GPU request becomes ``receivedGPU.count``).
    pod
        The pod's object in the dump: its ``uid`` makes the pod the BindRequest's owner, as
        KAI's scheduler does (so the request is deleted with the pod).
    """
    meta: dict[str, Any] = {**metadata(binding.pod), "labels": {"selected-node": binding.node}}
    uid = (pod.metadata.get("uid") if pod is not None else None)
    if uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"],
                                    "uid": str(uid)}]
    gpus = (task.requests.get(GPU, 0) // 1000) if task is not None else 0
    return {
        "apiVersion": KAI_API,
        "kind": "BindRequest",
        "metadata": meta,
        "spec": {
            "podName": meta["name"],
            "selectedNode": binding.node,
            "receivedResourceType": "Regular",
            "receivedGPU": {"count": int(gpus), "portion": "1.00" if gpus else "0.00"},
        },
    }
