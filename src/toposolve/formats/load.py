"""Load an :class:`Instance` from files: Kubernetes/Volcano manifests or the native format.

Inputs may be files, several files or directories (searched recursively for ``*.yaml``,
``*.yml`` and ``*.json``, in sorted path order). A file may hold several YAML documents; a
``kind: List`` or ``kind: <Kind>List`` object (what ``kubectl get … -o yaml`` prints) stands for
its ``items``. Documents with ``apiVersion: toposolve/v1`` (any ``toposolve/`` version) are the
native format; all documents must then be native.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from toposolve.core.errors import InputError
from toposolve.core.instance import Instance
from toposolve.core.label_levels import (
    LabelTopologyError,
    labels_no_node_has,
    option_hypernodes,
    parse_label_items,
    topology_label_hint,
)
from toposolve.core.yaml_guard import STDIN, parse_json, parse_yaml, read_text
from toposolve.formats.k8s.fields import Document
from toposolve.formats.k8s.manifests import read_manifests
from toposolve.formats.k8s.tolerated import warn_tolerated
from toposolve.formats.kube.scheduler_config import CONFIG_KIND, read_scheduler_config
from toposolve.formats.native.reader import API_VERSION, is_native, load_native

INPUT_SUFFIXES = (".yaml", ".yml", ".json")
LOG = logging.getLogger("toposolve")


def load_instance(
    paths: str | Path | Sequence[str | Path],
    *,
    warn: Callable[[str], None] | None = None,
    topology_labels: str | Sequence[str] | None = None,
) -> Instance:
    """Read every input and build one instance.

    Parameters
    ----------
    paths
        Files or directories of Kubernetes/Volcano/Kueue/KAI manifests or native documents.
    warn
        Called with one line per skipped object (default: a warning of the ``toposolve``
        logger, which Python shows on stderr unless logging is configured otherwise).
    topology_labels
        ``"LABEL,LABEL,…"`` or a list, top level first: builds HyperNodes from node labels as
        Volcano's label discovery would (:mod:`toposolve.core.label_levels`); without it, an
        input whose nodes carry well-known topology labels but no HyperNode gets a warning line.

    Returns
    -------
    Instance
        ``source`` is the given path, or the given paths joined with ``", "``.
    """
    warn = warn or LOG.warning
    labels = parse_topology_option(topology_labels)
    instance = _read(paths, warn, labels)
    unused = labels_no_node_has(instance.nodes, [item.split("=")[0] for item in labels])
    if unused:
        warn(f"{instance.source}: --topology-labels: no node carries label "
             f"{', '.join(map(repr, unused))}, so that level holds no domain")
    if not instance.hypernodes:
        hint = topology_label_hint(instance.nodes)
        if hint:
            warn(f"{instance.source}: {hint}")
    return instance


def with_scheduler_config(instance: Instance, path: str | Path,
                          warn: Callable[[str], None] | None = None) -> Instance:
    """``instance`` with the score configuration of the KubeSchedulerConfiguration in ``path``
    (``--scheduler-config``), which replaces one the input holds.

    Raises
    ------
    InputError
        The file holds something else than one KubeSchedulerConfiguration, or a bad value.
    """
    warn = warn or LOG.warning
    docs = read_documents(path)
    for doc in docs:
        if (doc.api_group, doc.kind) != CONFIG_KIND:
            raise InputError("expected a kubescheduler.config.k8s.io KubeSchedulerConfiguration",
                             file=doc.file, obj=doc.object_name(namespaced=False))
    if not docs:
        raise InputError("no KubeSchedulerConfiguration in the file", file=str(path))
    if instance.kube_scoring is not None:
        warn(f"{path}: its KubeSchedulerConfiguration replaces the one in the input")
    scoring = read_scheduler_config(docs, warn)
    return instance.model_copy(update={"kube_scoring": scoring})


def parse_topology_option(value: str | Sequence[str] | None) -> list[str]:
    """The ``--topology-labels`` value as items ``LABEL`` or ``LABEL=TIERNAME``, checked (empty
    when not given)."""
    if value is None or (not isinstance(value, str) and not list(value)):
        return []
    try:
        return [level.node_label + (f"={level.tier_name}" if level.tier_name else "")
                for level in parse_label_items(value)]
    except LabelTopologyError as exc:
        raise InputError(str(exc), obj="--topology-labels") from None


def _read(paths: str | Path | Sequence[str | Path], warn: Callable[[str], None],
          labels: list[str]) -> Instance:
    given = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    if not given:
        raise InputError("no input files given")
    source = ", ".join(str(p) for p in given)
    files = input_files(given)
    bodies = [(body, str(path)) for path in files for body in read_file_documents(path)]
    return instance_from_bodies(bodies, source, warn, labels)


def read_documents(paths: str | Path | Sequence[str | Path]) -> list[Document]:
    """Every object of the inputs, ``kind: List`` objects flattened, in input order.

    Parameters
    ----------
    paths
        As for :func:`load_instance`.

    Returns
    -------
    list of Document
        Native documents too (their ``apiVersion`` says so); ``toposolve export`` reads the
        pods, owners and Workloads of a dump from them.
    """
    given = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    docs: list[Document] = []
    for path in input_files(given):
        for body in read_file_documents(path):
            for item in flatten_lists(body, str(path)):
                docs.append(Document(item, str(path), len(docs)))
    return docs


def instance_from_bodies(bodies: Sequence[tuple[dict[str, Any], str]], source: str,
                         warn: Callable[[str], None], labels: Sequence[str] = ()) -> Instance:
    """One instance from parsed documents, each with the file it came from (native or
    manifests, ``kind: List`` objects flattened); ``labels`` as ``topology_labels``."""
    if any(is_native(body) for body, _ in bodies):
        for body, file in bodies:
            if not is_native(body):
                raise InputError(
                    f"cannot mix the native format ({API_VERSION}) "
                    "with Kubernetes manifests",
                    file=file,
                    obj=_describe(body),
                )
        instance = load_native([b for b, _ in bodies], source)
        instance.source = source
        if labels:
            taken = [h.name for h in instance.hypernodes]
            instance.hypernodes += option_hypernodes(instance.nodes, labels, taken=taken)
        warn_tolerated(instance, warn)
        return instance

    docs: list[Document] = []
    for body, file in bodies:
        for item in flatten_lists(body, file):
            docs.append(Document(item, file, len(docs)))
    return read_manifests(docs, source=source, warn=warn, topology_labels=list(labels))


def input_files(paths: Sequence[Path]) -> list[Path]:
    """Files named, plus the input files found under directories named."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in INPUT_SUFFIXES
            )
            if not found:
                raise InputError("directory holds no .yaml, .yml or .json file", file=str(path))
            files.extend(found)
        elif path.is_file() or str(path) == STDIN:
            files.append(path)
        else:
            raise InputError("no such file or directory", file=str(path))
    return files


def read_file_documents(path: Path) -> list[dict[str, Any]]:
    """The non-empty documents of one file; syntax errors name the line."""
    text = read_text(path)
    if path.suffix.lower() == ".json" or (str(path) == STDIN and text.lstrip()[:1] in "{["
                                          and text.strip()):
        parsed = parse_json(text, str(path))
        raw = parsed if isinstance(parsed, list) else [parsed]
    else:
        raw = parse_yaml(text, str(path))
    docs: list[dict[str, Any]] = []
    for number, body in enumerate(raw, start=1):
        if body is None:
            continue  # an empty document, e.g. after a trailing '---'
        if not isinstance(body, dict):
            raise InputError(f"document {number} is not a mapping (got {type(body).__name__})",
                             file=str(path))
        docs.append(body)
    return docs


def flatten_lists(body: dict[str, Any], file: str) -> Iterator[dict[str, Any]]:
    """A ``List`` / ``<Kind>List`` object yields its items (kind and apiVersion filled in)."""
    kind = body.get("kind")
    if not (isinstance(kind, str) and kind.endswith("List") and "items" in body):
        yield body
        return
    items = body["items"] or []
    if not isinstance(items, list):
        raise InputError("items must be a list", file=file, obj=kind, field="items")
    item_kind = kind[: -len("List")]
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise InputError("expected an object", file=file, obj=kind, field=f"items[{i}]")
        if item_kind:  # typed lists (HyperNodeList) may leave kind/apiVersion out of their items
            item = {"kind": item_kind, "apiVersion": body.get("apiVersion"), **item}
        yield from flatten_lists(item, file)


def _describe(body: dict[str, Any]) -> str | None:
    """``Kind/name`` of a manifest, ``Kind`` without a name, None without a kind."""
    doc = Document(body, "", 0)
    if doc.kind and doc.name:
        return f"{doc.kind}/{doc.name}"
    return doc.kind or None
