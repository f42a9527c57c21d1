"""Constraints no node satisfies (a Kueue input's missing level, an inactive ClusterQueue, slice
layers TAS refuses) in the native form: ``missingLevel`` / ``neverPlaced``, read back as written
(issue 23: the native writer used to drop them silently)."""

from __future__ import annotations

import pytest
from scheduler_docs import inactive_queue_docs, kueue_docs, podset, workload, write_docs

import toposolve
from toposolve.core.errors import InputError
from toposolve.formats.load import load_instance
from toposolve.formats.native.reader import load_native
from toposolve.formats.native.writer import instance_to_native, write_native

LEVELS = ["block", "kubernetes.io/hostname"]
REFUSED_LAYERS = {"podsetSliceRequiredTopologyConstraints": [
    {"topology": "block", "size": 4}, {"topology": "kubernetes.io/hostname", "size": 3}]}


def kueue_inputs():
    """Kueue documents of each kind of refusal: an inactive ClusterQueue; a missing level and
    refused layers on the workload; both on podsets of their own (SubJobs)."""
    return {
        "inactive": inactive_queue_docs(),
        "missing": kueue_docs(LEVELS, workload([podset("main", 2, {"required": "rack"})])),
        "layers": kueue_docs(LEVELS, workload([podset("main", 8, REFUSED_LAYERS)])),
        "podsets": kueue_docs(LEVELS, workload([podset("a", 2, {"preferred": "rack"}),
                                                podset("b", 8, REFUSED_LAYERS)])),
    }


@pytest.mark.parametrize("case", sorted(kueue_inputs()))
def test_the_native_round_trip_keeps_the_refusal_and_the_pending_reason(tmp_path, case):
    inst = load_instance(write_docs(tmp_path, kueue_inputs()[case]), warn=lambda _: None)
    write_native(inst, tmp_path / "native.yaml")
    back = load_instance(tmp_path / "native.yaml", warn=lambda _: None)
    assert back.jobs == inst.jobs
    before, after = (toposolve.solve(i, "kueue").jobs for i in (inst, back))
    assert [(j.reason, j.scheduler_reason) for j in after] == [
        (j.reason, j.scheduler_reason) for j in before]
    assert any("never places" in (j.reason or "") or "does not have" in (j.reason or "")
               for j in after)


def test_the_keys_are_written_on_the_constraint(tmp_path):
    inst = load_instance(write_docs(tmp_path, kueue_inputs()["missing"]), warn=lambda _: None)
    (job,) = instance_to_native(inst)["jobs"]
    assert job["networkTopology"] == {"mode": "hard", "missingLevel": "rack"}


def test_a_refusal_with_a_tier_is_one_line_naming_the_field(tmp_path):
    inst = load_instance(write_docs(tmp_path, kueue_inputs()["missing"]), warn=lambda _: None)
    doc = instance_to_native(inst)
    doc["jobs"][0]["networkTopology"]["highestTierAllowed"] = 1
    with pytest.raises(InputError, match="sets no tier") as info:
        load_native([doc], "t.yaml")
    assert "networkTopology" in str(info.value)
