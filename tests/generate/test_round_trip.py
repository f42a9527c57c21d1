"""Every preset in every ``generate --format`` is read back by toposolve's own readers (issue 19
§1: the Kueue form of superpod-1024 and Lingjun carried memory quotas of 2Pi and 1694Ti, which
the reader refused)."""

from __future__ import annotations

import pytest

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
