"""Agents without a private oracle: uniform random play (the floor every learner must beat) and epsilon-greedy."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from .._validation import POSITIVE, Options, ParameterConstraints, check_real
from .base import Agent, doubling_schedule
from .registry import register_agent


class UniformAgent(Agent):
    """Play an arm uniformly at random every round; it sees no data, so it spends no privacy.

    References
    ----------
    Source paper, `alg:plan` (uniform play over a spanner; here over all arms).
    """

    name: ClassVar[str] = "uniform"

    def _choose(self, features: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        k = features.shape[1]
        return np.minimum((uniforms[:, 0] * k).astype(np.int64), k - 1)

    def _probabilities(self, features: np.ndarray) -> np.ndarray:
        m, k = features.shape[:2]
        return np.full((m, k), 1.0 / k)


register_agent("uniform", UniformAgent, description="uniform random arm every round (no learning)", privacy="none")


class EpsilonGreedyAgent(Agent):
    """Epsilon-greedy on a ridge fit of all past data (non-private baseline).

    With probability eps_j play an arm uniformly at random, otherwise the arm maximising the ridge
    prediction <phi_a, theta_hat> (ties to the lowest index). The ridge fit uses every past row and
    is refreshed at the doubling epoch ends T_j = 2^{j+1} - 1, so the policy is fixed within an epoch;
    the exploration rate of epoch j >= 1 is eps_j = min(1, explore_scale (d / T_{j-1})^{1/3}) with
    T_{j-1} the rounds seen so far (eps_0 = 1; the classical T^{2/3} trade-off), or the constant
    ``explore_scale`` with ``schedule="constant"``.

    Parameters
    ----------
    explore_scale : float
        The multiplier of the decaying rate, or the constant rate, in (0, 1] for "constant", > 0 otherwise.
    schedule : {"decay", "constant"}
        How the exploration rate evolves.
    lam : float
        Ridge regularizer lambda > 0.

    Notes
    -----
    Two action uniforms per round: one decides exploration, the other picks the random arm.

    References
    ----------
    Sutton & Barto (2018), Sec. 2.2; Langford & Zhang (2007) (epsilon-greedy with a T^{2/3} schedule).
    """

    name: ClassVar[str] = "epsilon-greedy"
    uniforms_per_round: ClassVar[int] = 2
    SCHEDULES: ClassVar[tuple[str, ...]] = ("decay", "constant")
    parameter_constraints: ClassVar[ParameterConstraints] = {
        "schedule": [Options(SCHEDULES)], "explore_scale": [POSITIVE], "lam": [POSITIVE]}

    def __init__(self, *, explore_scale: float = 1.0, schedule: str = "decay", lam: float = 1.0) -> None:
        super().__init__()
        self._store_parameters(schedule=schedule, explore_scale=explore_scale, lam=lam)
        if schedule == "constant":      # a constant rate is a probability
            check_real("explore_scale", explore_scale, low=0.0, high=1.0, low_open=True)

    def _reset(self) -> None:
        spec = self._require_spec()
        self.epoch_ends = doubling_schedule(spec.horizon)
        self.epoch = 0
        self.gram = self.lam * np.eye(spec.dim)
        self.xty = np.zeros(spec.dim)
        self.theta_ = np.zeros(spec.dim)
        self.explore_ = self._rate(0)

    def _rate(self, seen: int) -> float:
        """Exploration rate of an epoch that starts after ``seen`` rounds."""
        if self.schedule == "constant":
            return self.explore_scale
        if seen == 0:                             # nothing seen yet: play uniformly
            return 1.0
        spec = self._require_spec()
        return min(1.0, self.explore_scale * (spec.dim / max(seen, 1)) ** (1 / 3))

    def _observe(self, x: np.ndarray, y: np.ndarray) -> None:
        self.gram += x.T @ x
        self.xty += x.T @ y
        if self.t + x.shape[0] == int(self.epoch_ends[self.epoch]):
            self.epoch += 1
            self.theta_ = np.linalg.solve(self.gram, self.xty)
            self.explore_ = self._rate(self.t + x.shape[0])

    def _probabilities(self, features: np.ndarray) -> np.ndarray:
        m, k = features.shape[:2]
        best = np.argmax(features @ self.theta_, axis=1)
        p = np.full((m, k), self.explore_ / k)
        p[np.arange(m), best] += 1.0 - self.explore_
        return p

    def _choose(self, features: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        k = features.shape[1]
        greedy = np.argmax(features @ self.theta_, axis=1)
        random_arm = np.minimum((uniforms[:, 1] * k).astype(np.int64), k - 1)
        return np.where(uniforms[:, 0] < self.explore_, random_arm, greedy)


register_agent("epsilon-greedy", EpsilonGreedyAgent, privacy="none",
               description="epsilon-greedy on a ridge fit of all past data, eps_j ~ (d/T_j)^{1/3} (non-private)")
