"""Pod specs (Pods and Volcano Job task templates) → resource requests and placement predicates.

Rules, as Kubernetes applies them (``k8s.io/component-helpers/resource.PodRequests``):

* A container that sets a limit but no request for a resource requests the limit (API defaulting).
* Effective request = max(sum over regular containers + sidecars, the peak of the init sequence),
  where a sidecar is an init container with ``restartPolicy: Always``: it keeps running, so it adds
  to the regular containers and to every init container started after it. ``spec.overhead`` is
  added on top.
* Required node affinity: ``nodeSelectorTerms`` are ORed, the ``matchExpressions`` of one term
  ANDed. ``matchFields`` on ``metadata.name`` (what DaemonSet pods carry) tests the node name.
* Preferred node affinity (``weight`` 1-100, one ``preference`` term each) is kept as scores; it
  restricts nothing. Pod (anti-)affinity is ignored.
* Scores (kube-scheduler) count a container's unset cpu / memory request as 100m / 200Mi.
* Pod-level ``spec.resources`` (KEP-2837), for kube-scheduler: its cpu / memory / hugepages
  requests replace the containers' for fit and scores.
"""

from __future__ import annotations

from collections.abc import Callable

from toposolve.core.instance import (
    NODE_NAME_FIELD,
    LabelRequirement,
    PodConstraints,
    PreferredTerm,
    Toleration,
)
from toposolve.core.quantity import MilliUnits, parse_resource_amount
from toposolve.formats.k8s.fields import Field, build

NODE_AFFINITY_TERMS = (
    "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
)
PREFERRED_NODE_AFFINITY = "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
# kube-scheduler's DefaultMilliCPURequest / DefaultMemoryRequest, milli-units
SCORE_DEFAULTS = {r: parse_resource_amount(q, r) for r, q in (("cpu", "100m"), ("memory", "200Mi"))}
# resources pod-level ``spec.resources`` may set (component-helpers IsSupportedPodLevelResource)
POD_LEVEL_RESOURCES = ("cpu", "memory")
HUGEPAGES_PREFIX = "hugepages-"


def pod_requests(spec: Field, pod_level: bool = False) -> MilliUnits:
    """Effective resource requests of a pod spec, milli-units per resource; ``pod_level``
    (kube-scheduler): pod-level ``spec.resources`` replace the containers' sum for the
    resources it names (:func:`pod_level_requests`)."""
    return _pod_total(spec, container_requests, pod_level)


def pod_score_requests(spec: Field) -> MilliUnits:
    """The pod's requests as kube-scheduler's scores count them: each container's unset cpu /
    memory request (neither request nor limit given) counts as 100m / 200Mi, an explicit 0
    stays 0 (upstream ``PodRequests`` with ``NonMissingContainerRequests``); pod-level
    requests replace those sums."""
    return _pod_total(spec, _container_score_requests, True)


def pod_level_requests(spec: Field) -> dict[str, int]:
    """Pod-level ``spec.resources`` (KEP-2837) as ``PodRequests`` applies them: the requests of
    the resources pod-level management supports (cpu, memory, ``hugepages-*``), a limit standing
    in for an unset request as for containers (API defaulting)."""
    requests = container_requests(spec)
    return {name: amount for name, amount in requests.items()
            if name in POD_LEVEL_RESOURCES or name.startswith(HUGEPAGES_PREFIX)}


def _container_score_requests(container: Field) -> dict[str, int]:
    requests = container_requests(container)
    for name, amount in SCORE_DEFAULTS.items():
        requests.setdefault(name, amount)
    return requests


def _pod_total(spec: Field, requests_of: Callable[[Field], dict[str, int]],
               pod_level: bool = False) -> MilliUnits:
    """Containers summed, the init-container peak (sidecars included) if higher, the
    pod-level requests over them (``pod_level``), overhead."""
    total: dict[str, int] = {}
    for container in spec["containers"].elements():
        _add(total, requests_of(container))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in spec["initContainers"].elements():
        own = requests_of(container)
        if container["restartPolicy"].text() == "Always":
            _add(total, own)
            _add(sidecars, own)
            running = dict(sidecars)
        else:
            running = dict(own)
            _add(running, sidecars)
        for name, amount in running.items():
            init_peak[name] = max(init_peak.get(name, 0), amount)
    for name, amount in init_peak.items():
        total[name] = max(total.get(name, 0), amount)
    if pod_level:
        total.update(pod_level_requests(spec))
    _add(total, spec["overhead"].resources())
    return MilliUnits(total)


def container_requests(container: Field) -> dict[str, int]:
    """``resources.requests``, with limits standing in for requests that are not set."""
    resources = container["resources"]
    requests = resources["requests"].resources()
    for name, amount in resources["limits"].resources().items():
        requests.setdefault(name, amount)
    return requests


def _add(into: dict[str, int], amounts: dict[str, int]) -> None:
    for name, amount in amounts.items():
        into[name] = into.get(name, 0) + amount


def pod_constraints(spec: Field) -> PodConstraints:
    """nodeSelector, required and preferred node affinity and tolerations of a pod spec."""
    terms: list[list[LabelRequirement]] = []
    affinity = spec.at(NODE_AFFINITY_TERMS)
    if affinity.present and not affinity.elements():
        raise affinity.fail("must list at least one term")
    for term in affinity.elements():
        requirements = _term_requirements(term)
        if not requirements:
            raise term.fail(
                "a node selector term needs matchExpressions or matchFields (an empty term matches "
                "no node)"
            )
        terms.append(requirements)
    tolerations = read_tolerations(spec["tolerations"])
    return build(
        PodConstraints,
        spec,
        node_selector=spec["nodeSelector"].string_map(),
        affinity_terms=terms,
        tolerations=tolerations,
        preferred_affinity=[
            build(PreferredTerm, t, weight=t["weight"].integer(required=True),
                  requirements=_term_requirements(t["preference"]))
            for t in spec.at(PREFERRED_NODE_AFFINITY).elements()
        ],
        priority_class=spec["priorityClassName"].text(None),
    )


def _term_requirements(term: Field) -> list[LabelRequirement]:
    """A node selector term's ``matchExpressions`` and ``matchFields`` (metadata.name only)."""
    fields = term["matchFields"].elements()
    for f in fields:
        if f["key"].required_text() != NODE_NAME_FIELD:
            raise f["key"].fail(
                f"only {NODE_NAME_FIELD} is supported in matchFields (Kubernetes allows no other)")
    return [label_requirement(e) for e in (*term["matchExpressions"].elements(), *fields)]


def read_tolerations(field: Field) -> list[Toleration]:
    """A ``tolerations`` list (pod specs, Kueue ResourceFlavors)."""
    return [
        build(Toleration, t, key=t["key"].text(""), operator=t["operator"].text("Equal"),
              value=t["value"].text(""), effect=t["effect"].text(""))
        for t in field.elements()
    ]


def label_requirement(expr: Field) -> LabelRequirement:
    """A ``{key, operator, values}`` requirement (node selector terms and label selectors)."""
    return build(LabelRequirement, expr, key=expr["key"].required_text(),
                 operator=expr["operator"].required_text(), values=expr["values"].string_list())
