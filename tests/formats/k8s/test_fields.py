"""Document's metadata accessors and Field's located errors (formats/k8s/fields.py)."""

from __future__ import annotations

import pytest

from toposolve.core.errors import InputError
from toposolve.formats.k8s.fields import Document, Field


def doc(metadata) -> Document:
    return Document(
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": metadata},
        "f.yaml",
        0,
    )


def test_metadata_accessors_read_name_namespace_labels_and_annotations():
    d = doc(
        {"name": "pg", "namespace": "team", "labels": {"a": "1", "n": 2}, "annotations": {"x": "y"}}
    )
    assert (d.name, d.namespace, d.declares_namespace) == ("pg", "team", True)
    assert d.labels == {"a": "1", "n": "2"}  # label values read as strings
    assert d.annotations == {"x": "y"}
    assert d.object_name(namespaced=True) == "PodGroup/team/pg"
    assert d.api_group == "scheduling.volcano.sh"


@pytest.mark.parametrize("metadata", [None, "text", [], {}])
def test_missing_or_malformed_metadata_reads_as_empty_in_namespace_default(metadata):
    d = doc(metadata)
    assert (d.name, d.namespace, d.declares_namespace, d.labels, d.annotations) == (
        "",
        "default",
        False,
        {},
        {},
    )
    assert d.object_name(namespaced=False) == "PodGroup/?"


def test_malformed_labels_read_as_empty():
    assert doc({"name": "pg", "labels": ["a"], "annotations": "b"}).labels == {}


def test_field_errors_name_file_object_and_path():
    root = Field.root(doc({"name": "pg"}), "PodGroup/default/pg")
    with pytest.raises(InputError) as err:
        root.at("metadata.name").integer(0, minimum=0)  # "pg" is not an integer
    assert str(err.value).startswith("f.yaml: PodGroup/default/pg: metadata.name:")
