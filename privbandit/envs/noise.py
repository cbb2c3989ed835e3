"""Reward noise: draws rewards in [-1, 1] whose mean is exactly the arm's expected reward m, for all K
arms of every round (common random numbers across agents).

References
----------
Source paper, `example:ill-condition-p` (Rad(<x, theta>) labels), `def:linear-model` (|y| <= 1),
`def:GLM` (E[y | x] = nu(<x, theta*>)).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._validation import check_positive

__all__ = ["NOISES", "ClippedGaussianNoise", "RademacherNoise", "RewardNoise", "make_noise"]


class RewardNoise(abc.ABC):
    """Draws rewards in [-1, 1] with given means."""

    name: ClassVar[str] = ""

    @abc.abstractmethod
    def sample(self, means: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Rewards with E r = means, same shape as means (each mean in [-1, 1])."""


@dataclass(frozen=True)
class RademacherNoise(RewardNoise):
    """r in {-1, 1} with P(r = 1) = (1 + m) / 2 (one uniform per arm and round), the paper's
    y | phi ~ Rad(<phi, theta*>)."""

    name: ClassVar[str] = "rademacher"

    def sample(self, means: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        u = rng.random(means.shape)
        return np.where(u < 0.5 * (1.0 + means), 1.0, -1.0)


@dataclass(frozen=True)
class ClippedGaussianNoise(RewardNoise):
    """r = m + clip(sigma z, -(1 - |m|), 1 - |m|), z ~ N(0, 1): symmetric, mean-preserving, in [-1, 1].

    The clipping interval is the widest one symmetric about m inside [-1, 1] (clipping to [-1, 1]
    directly would bias the mean).

    Parameters
    ----------
    scale : float
        sigma > 0 before clipping.
    """

    name: ClassVar[str] = "gaussian"

    scale: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("noise_scale", self.scale))

    def sample(self, means: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        z = rng.standard_normal(means.shape)
        z *= self.scale
        room = 1.0 - np.abs(means)
        np.clip(z, -room, room, out=z)
        z += means
        return np.clip(z, -1.0, 1.0, out=z)  # only rounding can leave [-1, 1]


NOISES: dict[str, type[RewardNoise]] = {"rademacher": RademacherNoise, "gaussian": ClippedGaussianNoise}
"""The named reward noises."""


def make_noise(noise: str | RewardNoise, *, scale: Any = 0.5) -> RewardNoise:
    """A reward noise by name ("rademacher" or "gaussian" with sigma = ``scale``), or a RewardNoise as is.

    Parameters
    ----------
    noise : str or RewardNoise
        ``"rademacher"`` or ``"gaussian"``, or a RewardNoise (returned as is).
    scale : float
        sigma of the Gaussian noise.
    """
    if isinstance(noise, RewardNoise):
        return noise
    if noise == "rademacher":
        return RademacherNoise()
    if noise == "gaussian":
        return ClippedGaussianNoise(scale)
    raise ValueError(f"noise must be one of ('rademacher', 'gaussian') or a RewardNoise, got {noise!r}")
