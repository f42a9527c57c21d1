"""The validators the export tests use are strict and upstream: Kubernetes 1.35's own schemas
(kubernetes-validate) refuse a misspelled field and a missing required one."""

from __future__ import annotations

import pytest
from export_schemas import errors

BINDING = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p", "namespace": "d"},
           "target": {"apiVersion": "v1", "kind": "Node", "name": "n"}}
EVICTION = {"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": "p", "namespace": "d"}}


def job_patch(expression: dict) -> dict:
    term = {"matchExpressions": [expression]}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [term]}}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"template": {"spec": {"affinity": affinity}}}}


@pytest.mark.parametrize("obj", [BINDING, EVICTION, job_patch({"key": "k", "operator": "In",
                                                                 "values": ["a"]})])
def test_valid_objects_pass_and_a_misspelled_field_fails(obj):
    assert errors(obj) == []
    assert any("'metdata' was unexpected" in e for e in errors({**obj, "metdata": {}}))


def test_a_patch_may_leave_out_whole_object_fields_but_not_a_requirement_s_operator():
    assert errors(job_patch({"key": "k", "values": ["a"]})) == [
        "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms.0.matchExpressions.0: 'operator' is a required property"]
