"""Simulation: the runner (batch path and Gymnasium loop), sweeps, benchmark suites and reports.

``run(agent, env, horizon, seed)`` plays one run and returns a tidy DataFrame; ``run_many(agents, env, horizon,
seed)`` plays several agents on the same rounds, drawn once; ``sweep(cells, out)`` runs many, persisted cell by
cell and resumable; ``get_suite("quick")`` is the README's benchmark;
``challenge(suite, agent, out)`` runs your agent beside a suite's baselines and compares them seed by seed;
``collect_feedback(agent, env, horizon, seed)`` logs bandit feedback (arms, rewards, propensities) for
off-policy evaluation.
"""

from .backends import BackendUnavailable
from .cells import combine
from .compare import challenge, paired_comparison
from .feedback import BanditFeedback, collect_feedback
from .grid import AgentEntry, Cell, EnvEntry, Grid
from .leaderboard import leaderboard
from .report import final_regret, ledger_guarantees, loglog_slopes, price_of_privacy, write_report
from .runner import COLUMNS, geometric_grid, run, run_many, split_seed
from .suites import SUITES, Suite, get_suite
from .sweep import SweepResult, sweep

__all__ = [
    "COLUMNS", "SUITES", "AgentEntry", "BackendUnavailable", "BanditFeedback", "Cell", "EnvEntry", "Grid", "Suite",
    "SweepResult", "challenge", "collect_feedback", "combine", "final_regret", "geometric_grid", "get_suite",
    "leaderboard", "ledger_guarantees", "loglog_slopes", "paired_comparison", "price_of_privacy", "run", "run_many",
    "split_seed", "sweep", "write_report",
]
