"""Feature maps phi(x, a): from a round's context to the K per-arm feature vectors the agent sees
(``"shared"``, the paper's linear contextual bandit, or ``"disjoint"``, one parameter block per arm).

References
----------
Source paper, `sec:intro-cb` (phi : X x A -> B(1), f*(x, a) = nu(<phi(x, a), theta*>)).
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._validation import as_generator, check_int

__all__ = ["FEATURE_MAPS", "DisjointFeatures", "FeatureMap", "SharedFeatures", "make_feature_map"]


@dataclass(frozen=True)
class FeatureMap(abc.ABC):
    """Maps contexts (n, context_arms, context_dim) to features (n, K, d).

    Parameters
    ----------
    n_arms : int
        K >= 1.
    dim : int
        Feature dimension d >= 1.
    """

    name: ClassVar[str] = ""

    n_arms: int
    dim: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_arms", check_int("n_arms", self.n_arms, low=1))
        object.__setattr__(self, "dim", check_int("dim", self.dim, low=1))

    @property
    @abc.abstractmethod
    def context_shape(self) -> tuple[int, int]:
        """(arms, dim) of one round's context, as the context family must draw it."""

    @abc.abstractmethod
    def features(self, contexts: np.ndarray) -> np.ndarray:
        """Features (n, K, d) of contexts (n, *context_shape)."""

    @abc.abstractmethod
    def predictor(self, contexts: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Linear predictors <phi(x, a), theta> of every round and arm, shape (n, K)."""

    @abc.abstractmethod
    def predictor_bound(self, theta: np.ndarray, bound: float) -> float:
        """sup |<phi, theta>| over all features of norm <= bound this map can produce."""

    @abc.abstractmethod
    def second_moment(self, context_moment: np.ndarray) -> np.ndarray:
        """Uniform-policy E[phi phi^T] (d, d) from the context family's second moment."""

    @abc.abstractmethod
    def atoms(self, points: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Uniform-policy feature atoms and probabilities from the context family's atoms."""

    @abc.abstractmethod
    def draw_theta(self, family: Any, rng: Any, norm: float) -> np.ndarray:
        """theta* of the given norm, with the direction the context family suggests."""


@dataclass(frozen=True)
class SharedFeatures(FeatureMap):
    """phi(x, a) = x_a: the family draws K feature vectors in R^d per round; one theta* in R^d."""

    name: ClassVar[str] = "shared"

    @property
    def context_shape(self) -> tuple[int, int]:
        return (self.n_arms, self.dim)

    def features(self, contexts: np.ndarray) -> np.ndarray:
        return contexts

    def predictor(self, contexts: np.ndarray, theta: np.ndarray) -> np.ndarray:
        n, k, d = contexts.shape
        return (contexts.reshape(n * k, d) @ theta).reshape(n, k)

    def predictor_bound(self, theta: np.ndarray, bound: float) -> float:
        return bound * float(np.linalg.norm(theta))

    def second_moment(self, context_moment: np.ndarray) -> np.ndarray:
        return np.array(context_moment, dtype=float)

    def atoms(self, points: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.array(points, dtype=float), np.array(probs, dtype=float)

    def draw_theta(self, family: Any, rng: Any, norm: float) -> np.ndarray:
        return norm * family.theta_direction(as_generator(rng))


@dataclass(frozen=True)
class DisjointFeatures(FeatureMap):
    """phi(x, a) = e_a (x) x: one context x in R^{d/K} per round, one parameter block per arm.

    theta* = (theta_1, ..., theta_K) stacks the blocks, so <phi(x, a), theta*> = <x, theta_a>, and
    ||phi(x, a)|| = ||x||, so the feature bound carries over. Requires d to be a multiple of K.
    """

    name: ClassVar[str] = "disjoint"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.dim % self.n_arms:
            raise ValueError(f"dim must be a multiple of n_arms for the 'disjoint' feature map (d = K * context "
                             f"dimension), got dim={self.dim}, n_arms={self.n_arms}")

    @property
    def block(self) -> int:
        """Context dimension d / K."""
        return self.dim // self.n_arms

    @property
    def context_shape(self) -> tuple[int, int]:
        return (1, self.block)

    def features(self, contexts: np.ndarray) -> np.ndarray:
        n, k, b = contexts.shape[0], self.n_arms, self.block
        out = np.zeros((n, k, k, b))
        idx = np.arange(k)
        out[:, idx, idx, :] = contexts[:, 0, None, :]
        return out.reshape(n, k, k * b)

    def predictor(self, contexts: np.ndarray, theta: np.ndarray) -> np.ndarray:
        return contexts[:, 0, :] @ theta.reshape(self.n_arms, self.block).T

    def predictor_bound(self, theta: np.ndarray, bound: float) -> float:
        return bound * float(np.max(np.linalg.norm(theta.reshape(self.n_arms, self.block), axis=1)))

    def second_moment(self, context_moment: np.ndarray) -> np.ndarray:
        return np.kron(np.eye(self.n_arms), np.asarray(context_moment, dtype=float)) / self.n_arms

    def atoms(self, points: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pts = np.asarray(points, dtype=float)
        m, k = pts.shape[0], self.n_arms
        out = np.zeros((k, m, k, self.block))
        idx = np.arange(k)
        out[idx, :, idx, :] = pts[None, :, :]
        return out.reshape(k * m, self.dim), np.tile(np.asarray(probs, dtype=float), k) / k

    def draw_theta(self, family: Any, rng: Any, norm: float) -> np.ndarray:
        gen = as_generator(rng)
        blocks = np.stack([family.theta_direction(gen) for _ in range(self.n_arms)])
        return (norm / math.sqrt(self.n_arms)) * blocks.reshape(-1)


FEATURE_MAPS: dict[str, type[FeatureMap]] = {"shared": SharedFeatures, "disjoint": DisjointFeatures}
"""The named feature maps."""


def make_feature_map(name: str | FeatureMap, *, n_arms: int, dim: int) -> FeatureMap:
    """A feature map by name ("shared" or "disjoint"), or a FeatureMap checked against K and d.

    Parameters
    ----------
    name : str or FeatureMap
        ``"shared"`` or ``"disjoint"``, or a FeatureMap to check.
    n_arms, dim : int
        K arms and the dimension d of the feature vectors.
    """
    if isinstance(name, FeatureMap):
        if (name.n_arms, name.dim) != (n_arms, dim):
            raise ValueError(f"feature_map has n_arms={name.n_arms}, dim={name.dim}; the env has n_arms={n_arms}, "
                             f"dim={dim}")
        return name
    if not isinstance(name, str):
        raise TypeError(f"feature_map must be a name in {tuple(FEATURE_MAPS)} or a FeatureMap, "
                        f"got {type(name).__name__}")
    if name not in FEATURE_MAPS:
        raise ValueError(f"feature_map must be one of {tuple(FEATURE_MAPS)}, got {name!r}")
    return FEATURE_MAPS[name](n_arms=n_arms, dim=dim)
