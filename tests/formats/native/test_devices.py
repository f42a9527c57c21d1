"""Per-device sharing in the native format: ``deviceShare``, ``deviceUse``, ``deviceResource``."""

from __future__ import annotations

import pytest
import yaml

from toposolve.core.errors import InputError
from toposolve.formats.native.reader import load_native
from toposolve.formats.native.writer import dump_native, instance_to_native

DOC = """
apiVersion: toposolve/v1
kind: Instance
metadata: {name: shares}
nodeGroups:
- {name: "n{i}", count: 2, allocatable: {cpu: 64, nvidia.com/gpu: 2}}
jobs:
- name: "s{i}"
  count: 2
  tasks:
  - {name: w, requests: {nvidia.com/gpu: 600m}, deviceShare: {milli: 600}}
- name: old
  tasks:
  - name: w
    requests: {nvidia.com/gpu: 600m}
    deviceShare: {resource: nvidia.com/gpu, milli: 300, count: 2}
    running: [n0]
    deviceUse: {0: {0: 300, 1: 300}}
"""


def load(text):
    return load_native([yaml.safe_load(text)], "t.yaml")


def test_read_and_written_back_equal():
    instance = load(DOC)
    old = instance.jobs[-1].tasks[0]
    assert (old.device_share.milli, old.device_share.count) == (300, 2)
    assert old.device_use == {0: {0: 300, 1: 300}}
    assert instance.device_resource == "nvidia.com/gpu"
    again = load(dump_native(instance_to_native(instance)))
    assert again.model_dump(exclude={"source"}) == instance.model_dump(exclude={"source"})


@pytest.mark.parametrize("old, new, where", [
    ("{milli: 600}", "{milli: 0}", "tasks[0].deviceShare.milli"),
    ("{milli: 600}", "{milli: 600, size: 1}", "tasks[0].deviceShare.size"),
    ("{0: {0: 300, 1: 300}}", "{0: {0: 300, 1: 2000}}", "tasks[0].deviceUse.0.1"),
    ("{0: {0: 300, 1: 300}}", "{0: {x: 300}}", "tasks[0].deviceUse.0.x"),
    ("{milli: 600}", "{milli: 500}", "tasks[0]"),
])
def test_bad_shares_are_one_line_errors_naming_the_field(old, new, where):
    with pytest.raises(InputError) as err:
        load(DOC.replace(old, new, 1))
    assert where in str(err.value) and "\n" not in str(err.value)
