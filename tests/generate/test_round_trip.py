"""Every preset in every ``generate --format`` is read back by toposolve's own readers (issue 19
§1: the Kueue form of superpod-1024 and Lingjun carried memory quotas of 2Pi and 1694Ti, which
the reader refused)."""

from __future__ import annotations

import pytest
import yaml

from toposolve.cli.main import main
from toposolve.formats.load import load_instance
from toposolve.generate import PRESETS, generate

FORMATS = ("native", "manifests", "kueue", "kai", "kube")
# the sizes the audit failed on; small elsewhere (Lingjun has a fixed size)
SIZES = {"superpod": 1024, "lingjun": None}


@pytest.mark.parametrize("form", FORMATS)
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_generated_input_reads_back(tmp_path, capsys, preset, form):
    nodes = SIZES.get(preset, 64)
    path = tmp_path / f"{preset}.yaml"
    argv = ["generate", preset, "--format", form, "-o", str(path)]
    if nodes is not None:
        argv += ["--nodes", str(nodes)]
    assert main(argv) == 0, capsys.readouterr().err
    back = load_instance(path, warn=lambda _: None)
    original = generate(preset, nodes=nodes)
    assert sorted(n.name for n in back.nodes) == sorted(n.name for n in original.nodes)
    assert len(back.jobs) == len(original.jobs)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_kueue_form_of_a_preset_with_a_tree_stays_tas(tmp_path, capsys, preset):
    """Every flavor of a preset with a HyperNode tree names a written Topology, and the jobs read
    back are placed by TAS (only tree-less instances get flavors without a Topology)."""
    original = generate(preset, nodes=SIZES.get(preset, 64))
    assert original.hypernodes  # every preset has a tree
    path = tmp_path / f"{preset}.yaml"
    argv = ["generate", preset, "--format", "kueue", "-o", str(path)]
    if SIZES.get(preset, 64) is not None:
        argv += ["--nodes", str(SIZES.get(preset, 64))]
    assert main(argv) == 0, capsys.readouterr().err
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
    topologies = {d["metadata"]["name"] for d in docs if d["kind"] == "Topology"}
    flavors = [d["spec"] for d in docs if d["kind"] == "ResourceFlavor"]
    assert topologies and flavors
    assert all(f.get("topologyName") in topologies for f in flavors)
    back = load_instance(path, warn=lambda _: None)
    assert all(j.topology_name in topologies for j in back.jobs)
