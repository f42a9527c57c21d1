"""The ported-case counts in docs/kube-fidelity.md and the README match the data."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).parents[3]
DATA = Path(__file__).parent / "data"


def counts() -> tuple[int, int]:
    """(reproduced, listed) over every ported upstream case."""
    cases = []
    for name in ("generate_placements", "podgroup_algorithm"):
        cases += yaml.safe_load((DATA / f"{name}.yaml").read_text())["cases"]
    for name in ("placement_bin_packing", "pod_group_count"):
        for table in yaml.safe_load((DATA / f"{name}.yaml").read_text()).values():
            cases += table
    listed = sum("listed" in c for c in cases)
    return len(cases) - listed, listed


def test_the_docs_total_row_and_the_readme_count_match_the_data():
    reproduced, listed = counts()
    doc = (ROOT / "docs" / "kube-fidelity.md").read_text()
    total = re.search(r"\| \*\*total\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*0\*\* \| "
                      r"\*\*(\d+)\*\* \|", doc)
    assert total is not None
    assert tuple(map(int, total.groups())) == (reproduced + listed, reproduced, listed)
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"{reproduced + listed} cases of four upstream test files): {reproduced} reproduced" in (
        readme)
