"""KAI PodGroups with several SubGroups through native YAML: their policies share the KAI
reader's name and differ in their selectors; preferred levels and unpadded pod-name ranges."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from toposolve.core.errors import InputError
from toposolve.formats.load import load_instance
from toposolve.formats.native.names import compress_names, expand_range
from toposolve.formats.native.writer import instance_to_native, write_native

INSTANCES = Path(__file__).resolve().parents[3] / "instances"


@pytest.mark.parametrize("name", ["kai-eks.yaml", "kai-crossing-topologies.yaml"])
def test_kai_dumps_with_subgroups_round_trip_through_native_yaml(tmp_path, name):
    inst = load_instance(INSTANCES / name, warn=lambda _: None)
    shared = [j for j in inst.jobs if len({p.name for p in j.subgroup_policies}) == 1
              and len(j.subgroup_policies) > 1]
    assert shared  # several SubGroups, one policy name
    path = tmp_path / "native.yaml"
    write_native(inst, path)
    back = load_instance(path, warn=lambda _: None)
    assert [j.model_dump() for j in back.jobs] == [j.model_dump() for j in inst.jobs]


def test_a_policy_repeating_name_and_selector_is_still_refused(tmp_path):
    inst = load_instance(INSTANCES / "kai-crossing-topologies.yaml", warn=lambda _: None)
    doc = instance_to_native(inst)
    job = next(j for j in doc["jobs"] if "subGroupPolicies" in j)
    job["subGroupPolicies"].append(dict(job["subGroupPolicies"][0]))
    path = tmp_path / "dup.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(InputError, match="duplicate subGroupPolicy name and labelSelector"):
        load_instance(path, warn=lambda _: None)


def test_a_range_from_zero_is_unpadded():
    names = [f"w-{i}" for i in range(16)]
    assert compress_names(names) == ["w-0..w-15"]
    assert expand_range("w-0..w-15") == names
    with pytest.raises(ValueError, match="zero-padded"):
        expand_range("w-00..w-015")
