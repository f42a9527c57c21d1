"""Writing an instance in a scheduler's own objects: dispatch to the format's writer."""

from __future__ import annotations

from collections.abc import Callable

import yaml

from toposolve.core.instance import Instance
from toposolve.core.paths import write_file
from toposolve.formats.kai.writer import kai_documents
from toposolve.formats.kube.writer import kube_documents
from toposolve.formats.kueue.writer import kueue_documents


def write_scheduler_form(instance: Instance, form: str, path: str, *,
                         warn: Callable[[str], None]) -> None:
    """Write the instance as Kueue, KAI or Workload API objects, one multi-document YAML file.

    Parameters
    ----------
    instance
        The instance to write.
    form
        ``"kueue"``, ``"kube"``, or anything else for KAI.
    path
        The file written.
    warn
        Called with one line per thing the form cannot say.
    """
    writers = {"kueue": kueue_documents, "kube": kube_documents}
    docs = writers.get(form, kai_documents)(instance, warn)
    header = f"# {form} objects written by toposolve from {instance.source}\n"
    body = yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False)
    write_file(path, header + body)
