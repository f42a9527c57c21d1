"""KAI PodGroup annotations under kai.scheduler/ that the reader does not read warn once each
(issue 23 §1: none may pass silently); the topology annotations it reads do not."""

from __future__ import annotations

from scheduler_docs import kai_docs, write_docs

from toposolve.formats.load import load_instance


def test_unknown_kai_annotations_warn_and_known_ones_do_not(tmp_path):
    docs = kai_docs([{"name": "a", "minMember": 1}], ["a"])
    podgroup = next(d for d in docs if d["kind"] == "PodGroup")
    podgroup["metadata"]["annotations"] = {
        "kai.scheduler/topology": "t", "kai.scheduler/topology-required-placement": "rack",
        "kai.scheduler/mystery": "1", "other.io/x": "y"}
    warnings: list[str] = []
    load_instance(write_docs(tmp_path, docs), warn=warnings.append)
    unread = [w for w in warnings if "not read by toposolve" in w]
    assert len(unread) == 1
    assert "PodGroup/default/pg: annotation kai.scheduler/mystery: not read" in unread[0]
