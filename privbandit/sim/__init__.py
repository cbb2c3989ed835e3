"""One run: the runner (batch path and Gymnasium loop) and the logging of bandit feedback.

``run(agent, env, horizon, seed)`` plays one run and returns a tidy DataFrame; ``run_many(agents, env, horizon,
seed)`` plays several agents on the same rounds, drawn once; ``collect_feedback(agent, env, horizon, seed)`` logs
bandit feedback (arms, rewards, propensities) for off-policy evaluation. Many runs, persisted and resumable, are
:mod:`privbandit.bench`'s; their tables and figures :mod:`privbandit.report`'s.
"""

from .feedback import BanditFeedback, collect_feedback
from .runner import COLUMNS, geometric_grid, run, run_many, split_seed

__all__ = ["COLUMNS", "BanditFeedback", "collect_feedback", "geometric_grid", "run", "run_many", "split_seed"]
