"""Elastic workload slices: a new Workload slice that replaces an admitted one.

A pending Workload annotated ``kueue.x-k8s.io/workload-slice-replacement-for: <ns>/<name>``
takes over the pods of the admitted slice it names (Kueue's ``ElasticJobsViaWorkloadSlicesWithTAS``
delta placement): each of its podsets keeps the previous slice's pods of the same podset where
they run — the first ``count`` of them in assignment order on a scale-down (``TruncateAssignment``)
— and only the delta is pending. A podset group whose previous assignment names a domain no
longer in the input (stale) is placed afresh, the replaced pods released. The replaced slice is
not read as a job of its own. See ``docs/kueue-fidelity.md`` (elastic workload slices).
"""

from __future__ import annotations

from collections.abc import Callable

from toposolve.core.instance import Node
from toposolve.core.label_levels import HOSTNAME_LABEL
from toposolve.core.limits import MAX_PODS_PER_JOB
from toposolve.formats.k8s.fields import Document, Field
from toposolve.formats.k8s.pods import pod_requests
from toposolve.formats.kueue.assignment import assigned_nodes, assignment_domains

REPLACEMENT_FOR = "kueue.x-k8s.io/workload-slice-replacement-for"
Key = tuple[str, str]  # (namespace, name)


def _admitted(doc: Document) -> bool:
    return bool((doc.body.get("status") or {}).get("admission"))


def _reference(doc: Document) -> tuple[Key, Field] | None:
    """The (namespace, name) a Workload's replacement annotation names, or None."""
    root = Field.root(doc, doc.object_name(namespaced=True))
    where = root.at("metadata.annotations")[REPLACEMENT_FOR]
    text = where.text()
    if text is None:
        return None
    namespace, slash, name = text.partition("/")
    if not slash or not namespace or not name or "/" in name:
        raise where.fail(
            f"expected <namespace>/<name> of the replaced Workload slice, got {text!r}")
    return (namespace, name), where


def pair_slices(docs: list[Document], warn: Callable[[str], None]) -> dict[Key, Document]:
    """Replacing slice (namespace, name) → the admitted Workload document it replaces.

    A reference to a Workload that is not in the input, not admitted, or in another namespace
    replaces nothing (Kueue's ``ReplacedWorkloadSlice`` finds no target): warning, the new slice
    is placed as any Workload; so is a second slice naming one that another replaces (the first
    in the input keeps its pods). An admitted replacing slice has been placed already: ignored.

    Parameters
    ----------
    docs
        The input's Workload documents.
    warn
        Called with one line per reference that replaces nothing.

    Returns
    -------
    dict
        (namespace, name) of each pending replacing slice → the replaced slice's document.

    Raises
    ------
    InputError
        For an annotation value that is not ``<namespace>/<name>``.
    """
    by_key = {(d.namespace, d.name): d for d in docs}
    pairs: dict[Key, Document] = {}
    taken: dict[Key, str] = {}
    for doc in docs:
        found = _reference(doc)
        if found is None or _admitted(doc):
            continue
        ref, where = found
        old = by_key.get(ref)
        if old is None or not _admitted(old) or ref[0] != doc.namespace:
            warn(f"{where.file}: {where.obj}: {where.path}: {'/'.join(ref)} is no admitted "
                 "Workload of the same namespace in the input: placed as a new Workload")
            continue
        claimant = taken.setdefault(ref, doc.name)
        if claimant != doc.name:  # its pods can be kept once only
            warn(f"{where.file}: {where.obj}: {where.path}: {'/'.join(ref)} is replaced by "
                 f"{claimant} already (first in the input): placed as a new Workload")
            continue
        pairs[(doc.namespace, doc.name)] = old
    return pairs


def previous_nodes(old: Document, nodes: list[Node]) -> dict[str, list[str] | None]:
    """Podset name → nodes of the replaced slice's pods in assignment order, or None where its
    assignment names a domain no longer in the input (stale: Kueue places afresh).

    Parameters
    ----------
    old
        The replaced (admitted) Workload.
    nodes
        The nodes read.

    Returns
    -------
    dict
        One entry per podset assignment with a ``topologyAssignment``.
    """
    root = Field.root(old, old.object_name(namespaced=True))
    templates = {ps["name"].text("main"): ps.at("template.spec")
                 for ps in root.at("spec.podSets").elements()}
    out: dict[str, list[str] | None] = {}
    for a in root.at("status.admission.podSetAssignments").elements():
        name = a["name"].text("main") or "main"
        count = a["count"].integer(0, minimum=0, maximum=MAX_PODS_PER_JOB) or 0
        ta = a["topologyAssignment"]
        if not ta.present or name not in templates:
            continue
        levels, domains = assignment_domains(ta, count)
        if _stale(levels, [values for values, _, _ in domains], nodes):
            out[name] = None
            continue
        out[name] = assigned_nodes(ta, nodes, pod_requests(templates[name]), count)
    return out


def _stale(levels: list[str], domains: list[list[str]], nodes: list[Node]) -> bool:
    """Whether a domain of the assignment is held by no node (``IsTopologyAssignmentStale``)."""
    if levels and levels[-1] == HOSTNAME_LABEL:
        known = {n.labels.get(HOSTNAME_LABEL, n.name) for n in nodes}
        return any(values[-1] not in known for values in domains)
    held = {tuple(n.labels.get(key) for key in levels) for n in nodes}
    return any(tuple(values) not in held for values in domains)


def kept_pods(root: Field, replaced: Document, nodes: list[Node],
               warn: Callable[[str], None]) -> dict[str, list[str]]:
    """Podset name → nodes of the replaced slice's pods the replacing Workload ``root`` keeps,
    in assignment order (Kueue's delta placement).

    None are kept for a podset group (or lone podset) whose previous assignment is stale
    (warning), nor for a podset with a required or preferred topology (Kueue takes no previous
    assignment there).

    Parameters
    ----------
    root
        The replacing Workload.
    replaced
        The admitted Workload it replaces.
    nodes
        The nodes read.
    warn
        Called with one line per podset (group) placed afresh.

    Returns
    -------
    dict
        Podsets without an entry keep nothing.
    """
    previous = previous_nodes(replaced, nodes)
    units: dict[str, list[str]] = {}
    for ps in root.at("spec.podSets").elements():
        name = ps["name"].text("main") or "main"
        request = ps["topologyRequest"]
        if request["required"].present or request["preferred"].present:
            continue
        units.setdefault(request["podSetGroupName"].text(None) or f"#{name}", []).append(name)
    kept: dict[str, list[str]] = {}
    for members in units.values():
        found = [previous.get(m, []) for m in members]
        if any(nodes_of is None for nodes_of in found):
            warn(f"{root.file}: {root.obj}: the replaced slice's assignment of podset "
                 f"{members[0]!r} names a domain not in the input: placed afresh")
            continue
        kept.update((m, nodes_of or []) for m, nodes_of in zip(members, found, strict=True))
    return kept
