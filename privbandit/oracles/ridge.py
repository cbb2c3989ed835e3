"""Non-private ridge regression (OLS as lambda -> 0) with a confidence ellipsoid.

theta_hat = (X^T X + lambda I)^{-1} X^T y, V = X^T X + lambda I, and the width is
beta ||phi||_{V^{-1}} with one of two radii (``constants``, the convention of the IW oracles):

- ``"theory"``: with probability 1 - confidence, for every phi at once,
  |<phi, theta_hat - theta*>| <= beta ||phi||_{V^{-1}} with
  beta = sigma_noise sqrt(2 log(1/confidence) + log det(V/lambda)) + sqrt(lambda) S
  (Abbasi-Yadkori, Pal & Szepesvari 2011, Thm 2), S >= ||theta*|| and sigma_noise the sub-Gaussian
  scale of the reward noise (1 for rewards in [-1, 1]). log det(V/lambda) grows like d log(T/(d lambda)),
  so at d = 10 beta is about 10: far wider than the error of a fixed phi.
- ``"practical"`` (default): the per-phi radius beta = c_width sigma_noise + sqrt(lambda) S. For a fixed
  phi, <phi, theta_hat - theta*> = phi^T V^{-1} X^T eta - lambda phi^T V^{-1} theta* has a noise part of
  standard deviation <= sigma_noise ||phi||_{V^{-1}} (rewards in [-1, 1]: variance <= 1) and a bias
  <= sqrt(lambda) S ||phi||_{V^{-1}}; c_width = 2 (about the two-sided 95% Gaussian quantile) was
  calibrated on the coverage of fresh phi (>= 95% in every cell; the oracles guide, ``docs/guide/oracles.md``,
  "Measuring them").

Streams in O(d^2) memory: only X^T X and X^T y are kept.

References
----------
Source paper, `ssec:OLS` and `tab:comp` (the non-private reference); Abbasi-Yadkori et al. (2011).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._validation import POSITIVE, UNIT_OPEN, Options, ParameterConstraints
from ..linalg import psd_inv_sqrt
from .base import CONSTANTS, EpochFit, Estimate, Oracle
from .registry import register_oracle

PRACTICAL_WIDTH = 2.0
"""Default c_width of the practical radius c_width sigma_noise + sqrt(lambda) S (calibrated, see module)."""


class RidgeFit(EpochFit):
    """Streaming sufficient statistics of ridge regression."""

    oracle: Ridge

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.gram = np.zeros((self.dim, self.dim))
        self.xty = np.zeros(self.dim)

    def _add_rows(self, stage: int, start: int, x: np.ndarray, y: np.ndarray) -> None:
        self.gram += x.T.dot(x)
        self.xty += x.T.dot(y)

    def current(self) -> Estimate:
        """The ridge estimate of every row added so far; the fit stays open for more rows.

        Non-private only (ridge has no release to protect): a pooled fit over a whole run reads it at
        each epoch end (``EliminationAgent(pooling="ridge")``).
        """
        return self._estimate()

    def _estimate(self) -> Estimate:
        cfg = self.oracle
        v = self.gram + cfg.lam * np.eye(self.dim)
        theta = np.linalg.solve(v, self.xty)
        beta = cfg.radius(v)
        return Estimate(theta, self.link, psd_inv_sqrt(v), beta * cfg.width_multiplier / self.link.mu,
                        info={"lam": cfg.lam, "beta": beta, "constants": cfg.constants, "n": self.n_seen})


@register_oracle
@dataclass(frozen=True)
class Ridge(Oracle):
    """Non-private ridge regression / OLS with a calibrated or the Abbasi-Yadkori confidence ellipsoid.

    Parameters
    ----------
    privacy : PrivacySpec
        Must be non-private.
    lam : float
        Ridge regularizer lambda > 0.
    constants : {"practical", "theory"}
        The radius beta of the width beta ||phi||_{V^{-1}}: ``"practical"`` (default) the per-phi
        c_width sigma_noise + sqrt(lambda) S; ``"theory"`` the Abbasi-Yadkori radius (valid for all phi at
        once with probability 1 - confidence). See the module docstring.
    confidence : float
        Failure probability of the theory ellipsoid, in (0, 1) (not a privacy parameter; unused by the
        practical radius).
    noise_scale : float
        Sub-Gaussian scale of the reward noise (1 for rewards in [-1, 1]).
    norm_bound : float
        S >= ||theta*||.
    c_width : float, optional
        The practical radius' noise constant (default :data:`PRACTICAL_WIDTH` = 2); only with
        ``constants="practical"``.
    width_multiplier : float
        Multiplies the radius of either regime (1 = as defined above).

    Notes
    -----
    For a GLM link the radius is divided by mu_nu (a standard GLM-UCB correction).

    References
    ----------
    Source paper, `ssec:OLS`, `tab:comp`.

    Examples
    --------
    >>> import numpy as np
    >>> from privbandit.oracles import make_oracle
    >>> from privbandit.oracles.checks import synthetic_rows
    >>> x, y = synthetic_rows(dim=3, n=2000)          # rows with ||x|| < 1, E y = <x, theta*>

    >>> est = make_oracle("ridge").fit(x, y)
    >>> est.theta.shape, est.width(x[:5]).shape        # theta_hat and each row's confidence radius
    ((3,), (5,))
    >>> low, high = est.bounds(x[:5])
    >>> truth = x[:5] @ (np.ones(3) / np.sqrt(3))      # theta* of synthetic_rows
    >>> bool(np.all((low <= truth) & (truth <= high)))
    True
    """

    lam: float = 1.0
    constants: str = "practical"
    confidence: float = 0.05
    noise_scale: float = 1.0
    norm_bound: float = 1.0
    c_width: float | None = None
    width_multiplier: float = 1.0

    name: ClassVar[str] = "ridge"
    privacy_models: ClassVar[tuple[str, ...]] = ("none",)
    fit_class: ClassVar[type[EpochFit]] = RidgeFit
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **Oracle.parameter_constraints, "lam": [POSITIVE], "constants": [Options(CONSTANTS)],
        "confidence": [UNIT_OPEN], "noise_scale": [POSITIVE], "norm_bound": [POSITIVE],
        "width_multiplier": [POSITIVE], "c_width": [None, POSITIVE]}

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.c_width is not None and self.constants != "practical":
            raise ValueError("c_width sets the practical radius: it needs constants='practical', "
                             f"got constants={self.constants!r}")

    def radius(self, v: np.ndarray) -> float:
        """beta of the width beta ||phi||_{V^{-1}} for the regularised Gram matrix ``v`` = X^T X + lambda I."""
        bias = math.sqrt(self.lam) * self.norm_bound
        if self.constants == "practical":
            c = PRACTICAL_WIDTH if self.c_width is None else self.c_width
            return c * self.noise_scale + bias
        _, logdet = np.linalg.slogdet(v / self.lam)
        return self.noise_scale * math.sqrt(2.0 * math.log(1.0 / self.confidence) + logdet) + bias
