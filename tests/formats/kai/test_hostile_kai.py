"""KAI reader, hostile input (issue 19): one line naming the file, object and field, at once."""

from __future__ import annotations

import time

import pytest
from scheduler_docs import kai_docs, write_docs

from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_GANG_DEPTH
from toposolve.formats.load import load_instance

REQUIRED = {"topology": "t", "requiredTopologyLevel": "rack"}


def load(tmp_path, docs):
    return load_instance(write_docs(tmp_path, docs), warn=lambda _: None)


def refused(tmp_path, docs, field: str, words: str, seconds: float = 5.0) -> str:
    """Load ``docs``: an InputError naming the file and ``field``, whose text has ``words``."""
    start = time.perf_counter()
    with pytest.raises(InputError) as info:
        load(tmp_path, docs)
    assert time.perf_counter() - start < seconds
    text = str(info.value)
    assert info.value.file.endswith("in.yaml") and info.value.field == field, text
    assert words in text and "\n" not in text
    return text


def chain(depth: int, constrained: bool = True) -> list[dict]:
    """SubGroups s0 → s1 → … nested ``depth`` deep, each required at the rack level."""
    extra = {"topologyConstraint": REQUIRED} if constrained else {}
    return [{"name": f"s{k}", **({"parent": f"s{k - 1}"} if k else {}), **extra}
            for k in range(depth)]


def with_queue(docs: list[dict], gpu: dict) -> list[dict]:
    queue = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "q"},
             "spec": {"resources": {"gpu": gpu}}}
    return [*docs, queue]


def podgroup_spec(docs: list[dict]) -> dict:
    return next(d for d in docs if d["kind"] == "PodGroup")["spec"]


@pytest.mark.parametrize(("gpu", "field", "words"), [
    ({"limit": float("inf")}, "spec.resources.gpu.limit", "not finite"),
    ({"limit": float("nan")}, "spec.resources.gpu.limit", "not finite"),
    ({"quota": 1e300}, "spec.resources.gpu.quota", "largest amount"),
    ({"quota": "lots"}, "spec.resources.gpu.quota", "not a Kubernetes quantity"),
])
def test_queue_gpu_amounts_beyond_the_limit_are_one_line(tmp_path, gpu, field, words):
    refused(tmp_path, with_queue(kai_docs([], ["a"]), gpu), field, words)


def test_queue_minus_one_is_unlimited_and_fractions_are_read(tmp_path):
    inst = load(tmp_path, with_queue(kai_docs([], ["a"]), {"limit": -1, "quota": 1.5}))
    (queue,) = inst.queues
    assert queue.capability == {} and queue.deserved == {"nvidia.com/gpu": 1500}


def test_duplicate_subgroup_names_are_refused(tmp_path):
    docs = kai_docs([{"name": "a", "minMember": 1}, {"name": "a", "minMember": 1}], ["a"])
    refused(tmp_path, docs, "spec.subGroups[1].name", "duplicate SubGroup name 'a'")


def test_root_min_subgroup_above_the_top_subgroups_is_refused(tmp_path):
    docs = kai_docs([{"name": "a", "minMember": 1}, {"name": "b", "minMember": 1}], ["a", "b"])
    podgroup_spec(docs)["minSubGroup"] = 7
    refused(tmp_path, docs, "spec.minSubGroup", "minSubGroup 7 exceeds the 2 top SubGroups")


def test_subgroup_cycle_names_the_cycle(tmp_path):
    docs = kai_docs([{"name": "a", "parent": "b"}, {"name": "b", "parent": "a"}], ["a"])
    refused(tmp_path, docs, "spec.subGroups[0].parent", "a -> b -> a")


def test_the_deepest_subgroup_chain_loads_and_one_more_level_is_refused(tmp_path):
    deepest = load(tmp_path, kai_docs(chain(MAX_GANG_DEPTH), [f"s{MAX_GANG_DEPTH - 1}"]))
    assert len(deepest.jobs[0].gang_groups) == MAX_GANG_DEPTH - 1
    deeper = kai_docs(chain(MAX_GANG_DEPTH + 1), [f"s{MAX_GANG_DEPTH}"])
    text = refused(tmp_path, deeper, f"spec.subGroups[{MAX_GANG_DEPTH}].parent",
                   f"SubGroup 's{MAX_GANG_DEPTH}' is nested {MAX_GANG_DEPTH + 1} levels deep")
    assert f"limit of {MAX_GANG_DEPTH}" in text


def test_a_10000_deep_chain_is_refused_at_once(tmp_path):
    # unconstrained: these SubGroups would all fold into one; the nesting itself is refused
    refused(tmp_path, kai_docs(chain(10_000, constrained=False), ["s9999"]),
            f"spec.subGroups[{MAX_GANG_DEPTH}].parent", "levels deep")


def test_20000_flat_subgroups_load_in_linear_time(tmp_path):
    subgroups = [{"name": f"s{k}", "minMember": 0} for k in range(20_000)]
    start = time.perf_counter()
    inst = load(tmp_path, kai_docs(subgroups, ["s0", "s19999"]))
    assert time.perf_counter() - start < 30  # quadratic order lookups took minutes at 10x this
    names = [p.label_selector.match_labels["kai.scheduler/subgroup-name"]
             for p in inst.jobs[0].subgroup_policies]
    assert names == [f"s{k}" for k in range(20_000)]


def topology(levels: list[str], name: str = "t") -> dict:
    return {"apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology", "metadata": {"name": name},
            "spec": {"levels": [{"nodeLabel": key} for key in levels]}}


def with_topology(docs: list[dict], levels: list[str]) -> list[dict]:
    return [topology(levels) if d["kind"] == "Topology" else d for d in docs]


@pytest.mark.parametrize(("levels", "field", "words"), [
    (["rack", "rack", "kubernetes.io/hostname"], "spec.levels[1].nodeLabel", "duplicate nodeLabel"),
    (["rack", "bad label!"], "spec.levels[1].nodeLabel", "not a valid qualified name"),
    (["kubernetes.io/hostname", "rack"], "spec.levels[0].nodeLabel", "only be the lowest"),
    ([f"l{i}" for i in range(101)], "spec.levels", "101 levels, more than the limit of 100"),
    ([f"l{i}" for i in range(20_001)], "spec.levels", "20,001 levels"),
])
def test_bad_topology_levels_name_the_topology_and_field(tmp_path, levels, field, words):
    text = refused(tmp_path, with_topology(kai_docs([], ["a"]), levels), field, words)
    assert "Topology/t" in text and "pydantic" not in text


def test_a_second_topology_of_the_same_name_is_refused(tmp_path):
    docs = [*kai_docs([], ["a"]), topology(["kubernetes.io/hostname"])]
    refused(tmp_path, docs, "metadata.name", "Topology 't' is declared twice")


def test_a_kai_file_that_is_not_utf8_names_the_file(tmp_path):
    path = write_docs(tmp_path, kai_docs([], ["a"]))
    path.write_bytes(path.read_bytes().replace(b"rack", b"r\xffck", 1))
    with pytest.raises(InputError, match="not UTF-8") as info:
        load_instance(path, warn=lambda _: None)
    assert info.value.file == str(path)
