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

DOMAIN_GRID = 1025
"""Points of the grid on [-domain, domain] on which a :class:`Link` is checked when it is made."""

DERIVATIVE_TOLERANCE = 1e-9
"""Relative slack of the check mu <= nu' <= L on the grid (rounding of nu' at the ends)."""


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
        Lower bound mu_nu > 0 on nu' over the domain (`def:GLM`).
    lipschitz : float
        Upper bound L_nu on nu' over the domain (scales confidence widths from the predictor to the mean reward).
    domain : float
        The largest |z| the link is used on, B S for features ||phi|| <= B and ||theta*|| <= S: the predictors
        of an env (B ||theta*||, at most 1 for the identity link) and the GLM agents' working rows
        (``norm_bound`` S, 1 by default) clipped there. Default 1 (B = S = 1); :func:`logistic_link` sets it
        to its ``bound``. The link's bounds mu and L are claims about [-domain, domain].

    Raises
    ------
    ValueError
        When made, the link is checked on a grid of :data:`DOMAIN_GRID` points of [-domain, domain]: ``fn`` and
        ``derivative`` must be vectorised (an array of the grid's shape out), finite (no NaN or inf), and
        mu <= nu' <= L (to a relative :data:`DERIVATIVE_TOLERANCE`); the error names the first point that
        fails. A grid cannot see between its points: a link is the user's claim, this check catches the
        mistakes that show on it (a NaN region, a wrong mu or L) before any user's data reaches the link.
        That nu maps into [-1, 1] is checked by the env, which knows its predictors' range.
    """

    name: str
    fn: Callable[[np.ndarray], np.ndarray] = field(repr=False, compare=False)
    derivative: Callable[[np.ndarray], np.ndarray] = field(repr=False, compare=False)
    mu: float = 1.0
    lipschitz: float = 1.0
    domain: float = field(default=1.0, repr=False)

    def __post_init__(self) -> None:
        if not callable(self.fn) or not callable(self.derivative):
            raise TypeError("fn and derivative must be callables")
        object.__setattr__(self, "mu", check_positive("mu", self.mu))
        object.__setattr__(self, "lipschitz", check_positive("lipschitz", self.lipschitz))
        object.__setattr__(self, "domain", check_positive("domain", self.domain))
        if self.mu > self.lipschitz:
            raise ValueError(f"mu must be <= lipschitz, got mu={self.mu:g}, lipschitz={self.lipschitz:g}")
        self._check_on_domain()

    def _check_on_domain(self) -> None:
        """The grid check of the class docstring."""
        z = np.linspace(-self.domain, self.domain, DOMAIN_GRID)
        where = f"on its domain |z| <= {self.domain:g}"
        for part, values in (("fn", self.fn(z.copy())), ("derivative", self.derivative(z.copy()))):
            values = np.asarray(values, dtype=float)
            if values.shape != z.shape:
                raise ValueError(f"link {self.name!r}: {part} must be vectorised (an array of the input's shape "
                                 f"out), got shape {values.shape} for input of shape {z.shape}")
            bad = ~np.isfinite(values)
            if bad.any():
                raise ValueError(f"link {self.name!r}: {part} is not finite {where} ({int(bad.sum())} of "
                                 f"{z.size} grid points, first at z = {z[bad.argmax()]:g}: {values[bad.argmax()]})")
            if part == "derivative":
                off = ((values < self.mu * (1 - DERIVATIVE_TOLERANCE))
                       | (values > self.lipschitz * (1 + DERIVATIVE_TOLERANCE)))
                if off.any():
                    raise ValueError(f"link {self.name!r}: its derivative {where} ranges over "
                                     f"[{values.min():g}, {values.max():g}], outside [mu, lipschitz] = "
                                     f"[{self.mu:g}, {self.lipschitz:g}] (first at z = {z[off.argmax()]:g}); "
                                     "declare the bounds that hold there, or a smaller domain")

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
        Largest |z| the link will see (B ||theta*||), its ``domain``; mu = nu'(bound) = (s/2)(1 - tanh^2(s bound/2)).
    """
    scale = check_positive("scale", scale)
    bound = check_positive("bound", bound)
    mu = float(0.5 * scale * _sech2(np.float64(0.5 * scale * bound)))
    if not mu > 0:
        raise ValueError(f"scale * bound must be small enough that nu'(bound) > 0 in floating point (mu_nu > 0, "
                         f"def:GLM), got scale={scale:g}, bound={bound:g}")
    return Link("logistic", _ScaledLogistic(scale), _ScaledLogisticDerivative(scale), mu, 0.5 * scale, domain=bound)


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
