"""Link functions nu of generalized linear models: mean reward nu(<phi, theta*>) in [-1, 1].

Shared by the environments (which generate rewards) and the oracles (whose estimates predict them).

References
----------
Source paper, `def:GLM` (links with nu' >= mu_nu > 0), `appdx:proof-JDP-gen-linear`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ._validation import check_positive


@dataclass(frozen=True)
class Link:
    """A monotone link nu with derivative bounds on the range of linear predictors it is used on.

    Parameters
    ----------
    name : str
        A short name (``"identity"``, ``"logistic"``, or the user's).
    fn : callable
        nu, vectorised (ndarray -> ndarray), mapping into [-1, 1] on the predictors used.
    derivative : callable
        nu', vectorised.
    mu : float
        Lower bound mu_nu > 0 on nu' over the predictors |z| <= B ||theta*|| (`def:GLM`).
    lipschitz : float
        Upper bound L_nu on nu' (scales confidence widths from the predictor to the mean reward).
    """

    name: str
    fn: Callable[[np.ndarray], np.ndarray] = field(repr=False, compare=False)
    derivative: Callable[[np.ndarray], np.ndarray] = field(repr=False, compare=False)
    mu: float = 1.0
    lipschitz: float = 1.0

    def __post_init__(self) -> None:
        if not callable(self.fn) or not callable(self.derivative):
            raise TypeError("fn and derivative must be callables")
        object.__setattr__(self, "mu", check_positive("mu", self.mu))
        object.__setattr__(self, "lipschitz", check_positive("lipschitz", self.lipschitz))
        if self.mu > self.lipschitz:
            raise ValueError(f"mu must be <= lipschitz, got mu={self.mu:g}, lipschitz={self.lipschitz:g}")

    def __call__(self, z: np.ndarray) -> np.ndarray:
        """nu(z)."""
        return self.fn(np.asarray(z, dtype=float))

    @property
    def is_identity(self) -> bool:
        """Whether this is the identity link (linear rewards)."""
        return self.name == "identity"


def _identity(z: np.ndarray) -> np.ndarray:
    return np.asarray(z, dtype=float)


def _one(z: np.ndarray) -> np.ndarray:
    return np.ones_like(np.asarray(z, dtype=float))


def identity_link() -> Link:
    """nu(z) = z (linear bandits); mu = L = 1."""
    return Link("identity", _identity, _one, 1.0, 1.0)


@dataclass(frozen=True)
class _ScaledLogistic:
    scale: float

    def __call__(self, z: np.ndarray) -> np.ndarray:
        return np.tanh(0.5 * self.scale * np.asarray(z, dtype=float))


@dataclass(frozen=True)
class _ScaledLogisticDerivative:
    scale: float

    def __call__(self, z: np.ndarray) -> np.ndarray:
        return 0.5 * self.scale * _sech2(0.5 * self.scale * np.asarray(z, dtype=float))


def _sech2(a: np.ndarray) -> np.ndarray:
    """1 - tanh(a)^2 = 4 e^{-2|a|} / (1 + e^{-2|a|})^2, accurate in the tails (no cancellation, no overflow)."""
    e = np.exp(-2.0 * np.abs(a))
    return 4.0 * e / (1.0 + e) ** 2


def logistic_link(scale: float = 2.0, bound: float = 1.0) -> Link:
    """The logistic link mapped to [-1, 1]: nu(z) = 2 sigmoid(scale z) - 1 = tanh(scale z / 2).

    Parameters
    ----------
    scale : float
        Slope s > 0; nu'(0) = s/2.
    bound : float
        Largest |z| the link will see (B ||theta*||); mu = nu'(bound) = (s/2)(1 - tanh^2(s bound/2)).
    """
    scale = check_positive("scale", scale)
    bound = check_positive("bound", bound)
    mu = float(0.5 * scale * _sech2(np.float64(0.5 * scale * bound)))
    if not mu > 0:
        raise ValueError(f"scale * bound must be small enough that nu'(bound) > 0 in floating point (mu_nu > 0, "
                         f"def:GLM), got scale={scale:g}, bound={bound:g}")
    return Link("logistic", _ScaledLogistic(scale), _ScaledLogisticDerivative(scale), mu, 0.5 * scale)


LINKS = {"identity": identity_link, "logistic": logistic_link}
"""Named link constructors."""


def make_link(link: str | Link, **kwargs) -> Link:
    """A :class:`Link` from a name in :data:`LINKS` or a Link (returned as is).

    Parameters
    ----------
    link : str or Link
        A name in :data:`LINKS` or a Link.
    **kwargs
        The link's parameters (e.g. its slope bounds).
    """
    if isinstance(link, Link):
        return link
    if link not in LINKS:
        raise ValueError(f"link must be one of {tuple(LINKS)} or a Link, got {link!r}")
    return LINKS[link](**kwargs)
