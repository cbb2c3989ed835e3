"""Helpers that several test modules of ``tests/bench/`` share (``from bench_helpers import ...``: pytest puts this
folder on the path), so that no test module imports another: the tiny suite that stands for ``quick``, its cells run
and stored, and a manifest with one stream moved."""

from __future__ import annotations

from privbandit.bench.grid import AgentEntry, Grid
from privbandit.bench.stored import pack_results
from privbandit.bench.suites import Suite, lin_env
from privbandit.bench.sweep import sweep

TINY = Suite("tiny", "two agents, one env, two seeds", (
    Grid((AgentEntry("uniform", private=False), AgentEntry("elim-nonprivate", private=False),
          AgentEntry("elim-jdp", private=True, reference="elim-nonprivate")),
         (lin_env("rare-direction", 2, 2),), epsilons=(1.0,), seeds=2, horizon=64),))


def stored_suite(suite: Suite, tmp_path_factory) -> tuple:
    """The suite's cells run into a folder and stored: (folder, dest, archive, manifest)."""
    folder = tmp_path_factory.mktemp(f"{suite.name}-cells")
    sweep(suite.cells(), folder, jobs=1)
    dest = tmp_path_factory.mktemp(f"{suite.name}-reference")
    archive, manifest = pack_results(suite, folder, f"privbandit store-reference --suite {suite.name}", dest=dest)
    return folder, dest, archive, manifest


def shifted(meta: dict, key: str, by: float, block: int = 0) -> dict:
    """``meta`` with the first sketch value of one block of stream ``key`` moved by ``by`` times its scale."""
    summary = meta["streams"][key]
    sketch = [list(s) for s in summary["sketch"]]
    sketch[block][0] += by * summary["scale"][block][0]
    return {**meta, "streams": {**meta["streams"], key: {**summary, "sketch": sketch}}}
