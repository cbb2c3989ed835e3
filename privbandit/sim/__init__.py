"""Simulation: the runner (batch path and Gymnasium loop), sweeps, benchmark suites and reports.

``run(agent, env, horizon, seed)`` plays one run and returns a tidy DataFrame; ``sweep(cells, out)``
runs many, persisted cell by cell and resumable; ``get_suite("quick")`` is the README's benchmark.
"""

from .report import final_regret, ledger_guarantees, loglog_slopes, price_of_privacy, write_report
from .runner import COLUMNS, geometric_grid, run, split_seed
from .suites import SUITES, Suite, get_suite
from .sweep import AgentEntry, BackendUnavailable, Cell, EnvEntry, Grid, SweepResult, combine, sweep

__all__ = [
    "COLUMNS", "SUITES", "AgentEntry", "BackendUnavailable", "Cell", "EnvEntry", "Grid", "Suite", "SweepResult",
    "combine", "final_regret", "geometric_grid", "get_suite", "ledger_guarantees", "loglog_slopes",
    "price_of_privacy", "run", "split_seed", "sweep", "write_report",
]
