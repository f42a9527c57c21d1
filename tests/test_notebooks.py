"""The notebooks in notebooks/: stored without outputs, and each one runs from top to bottom.

They run in kernels started from *this* interpreter (a kernel spec written to a temporary
directory and put first on ``JUPYTER_PATH``), so nothing needs to be registered with Jupyter: a
fresh ``make test`` virtual environment is enough. Kernel start-up dominates their run time, so
they run two at a time (one per core of the CI machine), each in its own kernel.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
KERNEL = "toposolve-tests"
MAX_SECONDS = 60  # ceiling per notebook (and per cell) on 2 cores; they take a few seconds
PARALLEL = 2


@pytest.fixture(scope="module")
def kernel_name(tmp_path_factory):
    """A kernel spec for the running interpreter, found before any installed one."""
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": KERNEL, "language": "python"})
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(root))
        mp.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # quiet debugpy warning in the kernel
        yield KERNEL


def test_the_promised_notebooks_exist():
    names = {p.name for p in NOTEBOOKS}
    assert {
        "01_tour.ipynb",
        "02_heuristic_vs_optimal.ipynb",
        "03_scoring_explained.ipynb",
        "04_preemption.ipynb",
    } <= names
    readme = (NOTEBOOKS_DIR / "README.md").read_text()
    assert all(name in readme for name in names), "notebooks/README.md describes every notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for k, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"cell {k} has outputs: clear them before committing"
            assert cell.execution_count is None, f"cell {k} has an execution count"


async def _execute(path: Path, kernel: str, slots: asyncio.Semaphore):
    """(executed notebook, seconds) or the exception the execution raised."""
    async with slots:
        nb = nbformat.read(path, as_version=4)
        client = nbclient.NotebookClient(
            nb,
            kernel_name=kernel,
            timeout=MAX_SECONDS,  # per cell
            resources={
                "metadata": {"path": str(path.parent)}
            },  # run from notebooks/, as Jupyter does
        )
        start = time.perf_counter()
        try:
            await client.async_execute()
        except Exception as exc:  # reported by the notebook's own test below
            return exc
        return nb, time.perf_counter() - start


@pytest.fixture(scope="module")
def executed(kernel_name):
    async def run_all():
        slots = asyncio.Semaphore(PARALLEL)
        results = await asyncio.gather(*(_execute(p, kernel_name, slots) for p in NOTEBOOKS))
        return dict(zip(NOTEBOOKS, results, strict=True))

    return asyncio.run(run_all())


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, executed):
    result = executed[path]
    if isinstance(result, Exception):
        raise result  # CellExecutionError carries the failing cell and its traceback
    nb, seconds = result
    assert seconds < MAX_SECONDS
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert errors == []
