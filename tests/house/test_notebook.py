"""The teaching notebook runs top to bottom at its default (CI-sized) parameters.

``docs/notebooks/price_of_privacy.ipynb`` is executed with nbclient in a fresh ``python3`` kernel (the
kernelspec ipykernel installs in the environment), with this checkout first on the kernel's path. A cell
that raises fails the test; so does a notebook committed with outputs.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("sklearn")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "docs" / "notebooks" / "price_of_privacy.ipynb"
BUDGET = 120.0
"""Seconds the notebook may take in CI (at most 2 minutes)."""


def execute(nb, monkeypatch) -> float:
    """Run every cell of ``nb`` in place in a python3 kernel that imports this checkout; return the seconds."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=2 * int(BUDGET),
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def _text(nb) -> str:
    return "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


def test_notebook_is_committed_without_outputs_and_has_a_parameter_cell():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code)
    assert "parameters" in code[0].metadata.get("tags", [])


@pytest.mark.slow
def test_notebook_runs_and_states_what_it_measured(monkeypatch):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    seconds = execute(nb, monkeypatch)
    assert seconds < BUDGET
    text = _text(nb)
    assert not [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    # The computed conclusions of every section are printed, and the figures drawn.
    assert "Joint DP: elim-jdp-pooled's regret over the non-private elim-ucb's is" in text
    assert "elim-ldp-pooled: regret against epsilon has log-log slope" in text and "(`thm:regret-upper-LDP`)" in text
    assert "log-log slope of the local DP regression error" in text
    assert "SSP's error is" in text
    assert "U*^-1 is" in text and "lopsided than Sigma^1/2" in text
    figures = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(figures) >= 4


@pytest.mark.slow
def test_a_cell_that_raises_fails_the_run(monkeypatch):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells = nb.cells[:2] + [nbformat.v4.new_code_cell("raise RuntimeError('broken cell')")] + nb.cells[2:]
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="broken cell"):
        execute(nb, monkeypatch)
