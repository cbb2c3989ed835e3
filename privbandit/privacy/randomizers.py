"""Local randomizers: the only path a raw record takes inside local-DP code.

A local randomizer is fixed *before* it sees data: a public statistic s(phi, y) (which may depend on
outputs already released, e.g. the spectral iterate U_k, but never on raw records), a radius R that
bounds ||s|| on the whole input domain, and a channel. Calling it on a batch privatizes every row
independently:

1. features are clipped to norm B and rewards to [-1, 1] (:mod:`.clipping`);
2. the statistic is evaluated and *projected* onto the ball of radius R (a warning if that changed
   anything), so the channel's sensitivity 2R holds by construction whatever the statistic does;
3. the channel adds its noise; only the noisy rows leave the randomizer.

References
----------
Source paper, `def:LDP` (sequential mechanisms), `alg:U-LDP`, `alg:LDP-linear-regression`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .._validation import as_generator, check_positive, check_rows
from .calibration import CalibrationMethod
from .clipping import ClippingWarning, clip_features, clip_rewards, scale_to_ball
from .mechanisms import GaussianMechanism, L2BallChannel, MechanismEntry, SymmetricGaussianMechanism

Statistic = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""A public map from clipped rows (features (m, d), rewards (m,)) to per-row statistics (m, ...)."""


RADIUS_SLACK = 1e-9
"""Relative slack on declared statistic radii: a bound that holds exactly in real arithmetic can be
exceeded by rounding (e.g. ||U phi / ||U phi|| || = 1 + 1e-16); the channels are calibrated to the padded
radius, so the projection never fires on valid data and privacy is exact for the padded radius."""


def padded(radius: float) -> float:
    """``radius`` * (1 + RADIUS_SLACK): a declared radius that rounding on valid rows cannot exceed."""
    return radius * (1.0 + RADIUS_SLACK)


def project_rows(stats: np.ndarray, radius: float) -> np.ndarray:
    """Project each row (flattened over trailing axes) of ``stats`` onto the L2 ball of ``radius``."""
    flat = stats.reshape(stats.shape[0], -1)
    out, over = scale_to_ball(flat, radius)
    if not np.any(over):
        return stats
    warnings.warn(f"{int(over.sum())} local statistic(s) exceeded the declared radius {radius:g} and were "
                  f"projected before the channel", ClippingWarning, stacklevel=3)
    return out.reshape(stats.shape)


@dataclass(frozen=True)
class LocalRandomizer:
    """Privatize each record of a batch independently through a public statistic and a channel.

    Parameters
    ----------
    statistic : callable
        s(features (m, d), rewards (m,)) -> (m, ...) per-row statistics; public (fixed before data).
    radius : float
        Bound R on ||s(phi, y)|| (Frobenius for matrices) over the input domain; rows are projected
        onto that ball, so the channel's L2 sensitivity is 2R.
    channel : GaussianMechanism, SymmetricGaussianMechanism or L2BallChannel
        The noise. A Gaussian's ``sensitivity`` must be at least 2R; an L2-ball channel's radius R.
    feature_bound : float
        B: features are clipped to norm B first.

    References
    ----------
    Source paper, `def:LDP`.
    """

    statistic: Statistic
    radius: float
    channel: GaussianMechanism | SymmetricGaussianMechanism | L2BallChannel
    feature_bound: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "radius", check_positive("radius", self.radius))
        object.__setattr__(self, "feature_bound", check_positive("feature_bound", self.feature_bound))
        if isinstance(self.channel, L2BallChannel):
            if self.channel.radius < self.radius * (1 - 1e-12):
                raise ValueError(f"the L2-ball channel's radius {self.channel.radius:g} is below the statistic's "
                                 f"radius {self.radius:g}")
        elif self.channel.sensitivity < 2 * self.radius * (1 - 1e-12):
            raise ValueError(f"the channel's sensitivity {self.channel.sensitivity:g} is below 2 * radius = "
                             f"{2 * self.radius:g}: the release would not be private")

    @classmethod
    def gaussian(cls, statistic: Statistic, radius: float, epsilon: float, delta: float, *,
                 symmetric: bool = False, feature_bound: float = 1.0,
                 method: CalibrationMethod = "analytic") -> "LocalRandomizer":
        """A Gaussian randomizer calibrated for (epsilon, delta) at L2 sensitivity 2 * radius."""
        kind = SymmetricGaussianMechanism if symmetric else GaussianMechanism
        channel = kind.calibrated(epsilon, delta, 2.0 * check_positive("radius", radius), method)
        return cls(statistic, radius, channel, feature_bound)

    def __call__(self, features: np.ndarray, rewards: np.ndarray, rng=None) -> np.ndarray:
        """Privatize each row; returns the noisy statistics (m, ...). Raw rows never leave this call."""
        x, y = check_rows(features, rewards)
        x = clip_features(x, self.feature_bound)
        y = clip_rewards(y)
        stats = np.asarray(self.statistic(x, y), dtype=float)
        if stats.shape[0] != x.shape[0]:
            raise ValueError(f"the statistic must return one row per record, got shape {stats.shape}")
        if not np.all(np.isfinite(stats)):
            raise ValueError("the statistic returned NaN or inf on clipped rows; it must be finite on the whole "
                             "input domain (e.g. define its value at phi = 0)")
        stats = project_rows(stats, self.radius)
        rng = as_generator(rng)
        if isinstance(self.channel, L2BallChannel):
            return self.channel.release(stats.reshape(stats.shape[0], -1), rng).reshape(stats.shape)
        return self.channel.release(stats, rng)

    def ledger_entry(self) -> MechanismEntry:
        """The channel as the ledger records it (one local release per record)."""
        return self.channel.ledger_entry()
