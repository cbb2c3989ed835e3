"""The benchmark: sweeps of many runs, the suites, their stored results, challengers, and ``privbandit bench``.

``sweep(cells, out)`` runs many cells (an agent, an env, a horizon, a seed), persisted cell by cell and resumable,
on local processes or a cluster; ``get_suite("quick")`` is the README's benchmark; ``challenge(suite, agent, out)``
runs your agent beside a suite's baselines and compares them seed by seed; :func:`run_bench` runs what
``privbandit bench`` runs (the sweep, its figures, report and board). The stored results of a suite are
:mod:`privbandit.bench.stored`'s.
"""

from ..agents.workers import BackendUnavailable
from .cells import combine
from .challenger import challenge
from .grid import AgentEntry, Cell, EnvEntry, Grid
from .suites import SUITES, Suite, get_suite
from .sweep import SweepResult, sweep
from .workflow import BenchResult, run_bench

__all__ = ["SUITES", "AgentEntry", "BackendUnavailable", "BenchResult", "Cell", "EnvEntry", "Grid", "Suite",
           "SweepResult", "challenge", "combine", "get_suite", "run_bench", "sweep"]
