"""Agents that need no regression oracle: uniform random play (the floor every learner must beat)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from .base import Agent, register_agent


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


register_agent("uniform", UniformAgent, description="uniform random arm every round (no learning)")
