"""Local randomizers: the only path a raw record takes inside local-DP code.

A local randomizer is fixed *before* it sees data: a public statistic s(phi, y) (which may depend on
outputs already released, e.g. the spectral iterate U_k, but never on raw records), a radius R that
bounds ||s|| on the whole input domain, and a channel. Calling it on a batch privatizes every row
independently:

1. features are clipped to norm B and rewards to [-1, 1] (:mod:`.clipping`);
2. the statistic is evaluated and *projected* onto the ball of radius R in the channel's norm (L1 for a
   Laplace channel, whose sensitivity is an L1 diameter; L2, Frobenius for matrices, otherwise), with a
   warning if that changed anything, so the channel's sensitivity 2R holds by construction whatever the
   statistic does;
3. the channel adds its noise; only the noisy rows leave the randomizer.

References
----------
Source paper, `def:LDP` (sequential mechanisms), `alg:U-LDP`, `alg:LDP-linear-regression`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._validation import as_generator, check_positive, check_rows
from .calibration import CalibrationMethod
from .clipping import ClippingWarning, clip_features, clip_rewards, scale_to_ball
from .mechanisms import (
    GaussianMechanism,
    L2BallChannel,
    LaplaceMechanism,
    MechanismEntry,
    SymmetricGaussianMechanism,
)

Statistic = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""A public map from clipped rows (features (m, d), rewards (m,)) to per-row statistics (m, ...)."""


RADIUS_SLACK = 1e-9
"""Relative slack on declared statistic radii: a bound that holds exactly in real arithmetic can be
exceeded by rounding (e.g. ||U phi / ||U phi|| || = 1 + 1e-16); the channels are calibrated to the padded
radius, so the projection never fires on valid data and privacy is exact for the padded radius."""


def padded(radius: float) -> float:
    """``radius`` * (1 + RADIUS_SLACK): a declared radius that rounding on valid rows cannot exceed."""
    return radius * (1.0 + RADIUS_SLACK)


_INSIDE = 1.0 - 1e-12
"""Rows whose computed norm is at most radius * _INSIDE are inside the ball in any rounding of the norm
(its relative error is ~d * 2^-53), so :func:`project_rows` returns them without the projection."""


def clearly_inside(stats: np.ndarray, radius: float, ord: int = 2) -> bool:
    """Whether every row (flattened over trailing axes) of ``stats`` is finite with L``ord`` norm (2 or 1)
    at most radius (1 - 1e-12): the rows :func:`project_rows` returns as they are, and finite.

    A NaN or inf entry makes its row's sum of squares or of absolute values NaN or inf, which fails the
    comparison whenever the limit is finite; with an infinite limit (radius^2 overflows) this is False.
    """
    inside = radius * _INSIDE
    limit = inside * inside if ord == 2 else inside     # on the squared L2 norm, or on the L1 norm
    if not limit < math.inf:
        return False
    flat = stats.reshape(stats.shape[0], -1)
    sizes = np.einsum("ij,ij->i", flat, flat) if ord == 2 else np.abs(flat).sum(axis=1)
    return np.count_nonzero(sizes <= limit) == sizes.size


def project_rows(stats: np.ndarray, radius: float, ord: int = 2) -> np.ndarray:
    """Scale each row (flattened over trailing axes) of ``stats`` into the L``ord`` ball (2 or 1) of ``radius``.

    Rows clearly inside (norm <= radius (1 - 1e-12), the common case) are returned
    as they are, which is what the projection returns for them; the rest take
    :func:`~privbandit.privacy.clipping.scale_to_ball`.

    Parameters
    ----------
    stats : ndarray
        (n, ...) rows of statistics.
    radius : float
        The ball's radius.
    ord : int
        The norm: 2 or 1.
    """
    if clearly_inside(stats, radius, ord):     # False for NaN and overflow: the exact path
        return stats
    out, over = scale_to_ball(stats.reshape(stats.shape[0], -1), radius, ord)
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
        Bound R on the statistic's norm over the input domain, in the channel's norm: ||s||_1 for a
        :class:`~privbandit.privacy.LaplaceMechanism` (whose sensitivity is L1), ||s||_2 (Frobenius for
        matrices) otherwise. Rows are projected onto that ball, so the channel's sensitivity, in its own
        norm, is 2R.
    channel : GaussianMechanism, SymmetricGaussianMechanism, LaplaceMechanism or L2BallChannel
        The noise. A Gaussian's L2 or a Laplace's L1 ``sensitivity`` must be at least 2R; an L2-ball
        channel's radius at least R.
    feature_bound : float
        B: features are clipped to norm B first.

    Notes
    -----
    ``__call__`` checks and clips the rows and ends in ``_privatize``: a subclass that changes how records are
    privatized overrides that one method.

    References
    ----------
    Source paper, `def:LDP`.
    """

    statistic: Statistic
    radius: float
    channel: GaussianMechanism | SymmetricGaussianMechanism | LaplaceMechanism | L2BallChannel
    feature_bound: float = 1.0

    def __post_init__(self) -> None:
        for name in ("radius", "feature_bound"):
            value = getattr(self, name)
            if not (type(value) is float and 0.0 < value < math.inf):     # (a positive finite float is kept as is)
                object.__setattr__(self, name, check_positive(name, value))
        if isinstance(self.channel, L2BallChannel):
            if self.channel.radius < self.radius * (1 - 1e-12):
                raise ValueError(f"the L2-ball channel's radius {self.channel.radius:g} is below the statistic's "
                                 f"radius {self.radius:g}")
        elif self.channel.sensitivity < 2 * self.radius * (1 - 1e-12):
            raise ValueError(f"the channel's {self.norm} sensitivity {self.channel.sensitivity:g} is below the "
                             f"{self.norm} diameter 2 * radius = {2 * self.radius:g} of the statistic's ball: the "
                             "release would not be private")
        object.__setattr__(self, "_ord", 1 if self.norm == "L1" else 2)    # the projection's norm, set once

    @property
    def norm(self) -> str:
        """The norm of ``radius`` and of the channel's sensitivity: ``"L1"`` for a Laplace channel, else ``"L2"``."""
        return "L1" if isinstance(self.channel, LaplaceMechanism) else "L2"

    @classmethod
    def gaussian(cls, statistic: Statistic, radius: float, epsilon: float, delta: float, *,
                 symmetric: bool = False, feature_bound: float = 1.0,
                 method: CalibrationMethod = "analytic") -> LocalRandomizer:
        """A Gaussian randomizer calibrated for (epsilon, delta) at L2 sensitivity 2 * radius."""
        kind = SymmetricGaussianMechanism if symmetric else GaussianMechanism
        channel = kind.calibrated(epsilon, delta, 2.0 * check_positive("radius", radius), method)
        return cls(statistic, radius, channel, feature_bound)

    def __call__(self, features: np.ndarray, rewards: np.ndarray, rng=None) -> np.ndarray:
        """Privatize each row; returns the noisy statistics (m, ...). Raw rows never leave this call.

        Features are clipped to ``feature_bound`` and rewards to [-1, 1] (with a
        :class:`~privbandit.privacy.ClippingWarning` when a row changes); the statistic gets copies.
        """
        x, y = check_rows(features, rewards, finite=False)     # the clips refuse NaN and inf
        return self._privatize(clip_features(x, self.feature_bound), clip_rewards(y), rng)

    def _privatize(self, x: np.ndarray, y: np.ndarray, rng) -> np.ndarray:
        """The statistic, its checks and projection, and the channel's release, on clipped rows.

        Rows clearly inside the ball (:func:`clearly_inside`, which also certifies them finite) need no
        projection; the rest take the finiteness check and :func:`project_rows`. The channel's ``release``
        adds the noise (every release goes through it, so a :class:`~privbandit.privacy.replay.ReleaseTape`
        records local releases too).
        """
        stats = np.asarray(self.statistic(x, y), dtype=float)
        if stats.shape[0] != x.shape[0]:
            raise ValueError(f"the statistic must return one row per record, got shape {stats.shape}")
        rng = as_generator(rng)
        if isinstance(self.channel, L2BallChannel):
            stats = project_rows(self._finite(stats), self.radius, self._ord)
            return self.channel.release(stats.reshape(stats.shape[0], -1), rng).reshape(stats.shape)
        if not clearly_inside(stats, self.radius, self._ord):      # (clearly inside certifies them finite)
            stats = project_rows(self._finite(stats), self.radius, self._ord)
        return self.channel.release(stats, rng)

    @staticmethod
    def _finite(stats: np.ndarray) -> np.ndarray:
        if not np.all(np.isfinite(stats)):
            raise ValueError("the statistic returned NaN or inf on clipped rows; it must be finite on the whole "
                             "input domain (e.g. define its value at phi = 0)")
        return stats

    def ledger_entry(self) -> MechanismEntry:
        """The channel as the ledger records it (one local release per record)."""
        return self.channel.ledger_entry()
