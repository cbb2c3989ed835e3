"""IW-Vector-LDP: every user sends one vector, (psi, Gram statistic), through the pure epsilon-LDP L2-ball channel.

IW-Regression-LDP (`alg:LDP-linear-regression`, :mod:`.iw_ldp`) spends each user's budget on a Gaussian: its
spectral users send SymPriv of a d x d matrix and its regression users the concatenation (psi, Psi / sqrt(B))
at L2 sensitivity 2 sqrt(1 + B). At epsilon 1 and delta 1e-5 the analytic Gaussian's per-coordinate sd is 2 z R
(z ~ 3.7) for a statistic of norm R, while the L2-ball channel of Duchi, Jordan and Wainwright (2013), already in
the library for `alg:LDP-linear-regression-fixed-p`, has per-coordinate variance M^2 / D <= (pi / 2) R^2 /
tanh(epsilon / 2)^2 (about 2.7 R per coordinate) whatever the dimension D: the study ``docs/guide/ldp_cost.md``
measured 0.060x the variance for psi. This oracle therefore privatizes **one d + d(d+1)/2 vector per user**
through that channel, and no user is spent on U alone:

- **The statistic.** With U public (the warm start, U_0 = I in the first epoch) and v = U^{1/2} phi,

      s(phi, y) = (psi, c svec(H)),   psi = U phi y / ||U phi||,   H = v v^T / ||U phi||   (0 at U phi = 0),

  where svec lists H's diagonal and sqrt(2) times its upper off-diagonal entries (so ||svec H|| = ||H||_F) and
  c = 1 / sqrt(B). ||psi|| <= |y| <= 1 and ||H||_F = ||v||^2 / ||U phi|| <= ||phi|| <= B (`lem:uxxu`), so
  ||s|| <= sqrt(1 + c^2 B^2) = sqrt(1 + B) =: R for every U; the scale c = 1/sqrt(B) is the one IW-Regression-LDP
  gives Psi (it minimises the summed noise of psi's and H's solve terms at ||theta*|| <= 1).
- **The randomizer.** :class:`~privbandit.privacy.LocalRandomizer` clips phi to B and y to [-1, 1], evaluates s,
  projects it onto the ball of radius R (a no-op on valid rows) and releases Z = L2BallChannel(epsilon, D, R)(s):
  every output has norm M = R sqrt(pi) Gamma((D+1)/2) / (tanh(epsilon/2) Gamma(D/2)), E[Z | s] = s and
  E[Z Z^T | s] = (M^2 / D) I, so every coordinate's noise has variance at most M^2 / D. Each user is
  (epsilon, 0)-LDP, one release each: no budget split (psi and H share the one channel; c plays the split's part).
- **Post-processing.** The server keeps the sum of the outputs. Their mean gives psi_hat (an unbiased estimate of
  U A theta* with A = E[phi phi^T / ||U phi||] for linear rewards) and H_hat (of U^{1/2} A U^{1/2}); the Gram in
  original coordinates is A_hat = U^{-1/2} H_hat U^{-1/2}. The fit solves IW-Regression-LDP's last step on
  (Psi_hat, psi_hat) with Psi_hat = U^{1/2} H_hat U^{-1/2} (the symmetric version of its U phi phi^T / ||U phi||),
  and takes one step of Spectral-Iteration-LDP (`alg:U-LDP`, K = 1) from the same H_hat:
  U_next = sym(F^{-1/2} U), F = U^{1/2} psd(H_hat) U^{1/2} + (lambda / 3) U, the next epoch's public U. The U
  the users use comes from earlier epochs' outputs only, as in the paper's own stages.

Constants: lambda = :func:`~privbandit.oracles.iw_ldp.spectral_lambda` of the epoch's users at H's per-entry noise
sd M / (c sqrt(D)); the width is IW-Regression-LDP's c_w lambda ||U phi|| (c_w = 2 practical, 8 theory).

References
----------
Source paper, `alg:LDP-linear-regression`, `alg:U-LDP`, `lem:uxxu`, `lem:L-LDP-solution`,
`alg:LDP-linear-regression-fixed-p` (the L2-ball channel on psi), `def:LDP`; Duchi, Jordan and Wainwright,
"Local privacy and statistical minimax rates" (FOCS 2013), the L2-ball channel
(:class:`~privbandit.privacy.L2BallChannel`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._validation import POSITIVE, ParameterConstraints
from ..infomatrix import spectral_update
from ..linalg import psd_project, symmetric_part
from ..privacy import L2BallChannel, LocalRandomizer
from ..privacy.randomizers import padded
from .base import Estimate, SummingLocalFit, freeze_arrays
from .iw_jdp import warm_start
from .iw_ldp import IWRegressionLDP, ball_least_squares, inverse_norms, row_norms, spectral_lambda
from .registry import register_oracle

__all__ = ["IWVectorLDP", "VectorIWStatistic", "VectorLDPRelease", "svec", "svec_size", "unsvec"]


def svec_size(dim: int) -> int:
    """d (d + 1) / 2, the length of :func:`svec` of a d x d symmetric matrix."""
    return dim * (dim + 1) // 2


def svec(mats: np.ndarray) -> np.ndarray:
    """The diagonal, then sqrt(2) times the strictly upper entries (row-major), of symmetric (..., d, d) matrices:
    an isometry from the Frobenius norm to the L2 norm."""
    d = mats.shape[-1]
    iu = np.triu_indices(d, 1)
    diag = np.diagonal(mats, axis1=-2, axis2=-1)
    return np.concatenate([diag, math.sqrt(2.0) * mats[..., iu[0], iu[1]]], axis=-1)


def unsvec(vec: np.ndarray, dim: int) -> np.ndarray:
    """The symmetric d x d matrix whose :func:`svec` is ``vec`` (d (d + 1) / 2,)."""
    out = np.diag(vec[:dim]).astype(float)
    iu = np.triu_indices(dim, 1)
    off = vec[dim:] / math.sqrt(2.0)
    out[iu] = off
    out[iu[1], iu[0]] = off
    return out


@dataclass(frozen=True)
class VectorIWStatistic:
    """phi, y -> (U phi y / ||U phi||, scale svec(U^{1/2} phi_r phi_r^T U^{1/2} / ||U phi_r||)), 0 at U phi = 0.

    phi_r = phi min(1, r / ||phi||) is phi shrunk to the Gram radius r (``radius``; infinite: phi itself). psi
    reads only U phi's direction, so it is the same for phi and phi_r; the Gram statistic of phi_r is that of phi
    times min(1, r / ||phi||). Norm <= sqrt(1 + scale^2 min(r, ||phi||)^2): ||psi|| <= |y| and
    ||H||_F = ||U^{1/2} phi_r||^2 / ||U phi_r|| <= ||phi_r|| (`lem:uxxu`).
    """

    u: np.ndarray
    u_half: np.ndarray
    scale: float
    radius: float = math.inf

    def __call__(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        inv = inverse_norms(row_norms(x @ self.u))
        psi = (x @ self.u) * (inv * y)[:, None]
        vx = x @ self.u_half
        shrink = np.minimum(1.0, self.radius * inverse_norms(row_norms(x))) if math.isfinite(self.radius) else 1.0
        big_h = (vx * (inv * shrink)[:, None])[:, :, None] * vx[:, None, :]
        return np.concatenate([psi, self.scale * svec(big_h)], axis=1)


@dataclass(frozen=True)
class VectorLDPRelease:
    """What one IW-Vector-LDP fit's server holds, with the public parameters needed to post-process it.

    Every entry is a function of the means of the users' channel outputs and of public parameters fixed before
    the users arrived: agents may compute anything from it (pooling epochs, widths).

    Attributes
    ----------
    weighting : ndarray (d, d)
        The public U the users' statistics used (named as :class:`~privbandit.oracles.iw_jdp.IWRelease`'s).
    u_next : ndarray (d, d)
        One spectral step from U on H_hat (`alg:U-LDP`): the next epoch's warm start.
    psi : ndarray (d,) or None
        psi_hat, the mean of the randomized U phi y / ||U phi|| (None without users).
    gram : ndarray (d, d) or None
        H_hat, the mean of the randomized U^{1/2} phi phi^T U^{1/2} / ||U phi|| (symmetric, not projected).
    n : int
        The number of users that reported.
    lam : float
        lambda of the fit.
    noise_sd_psi, noise_sd_gram : float
        Upper bounds on the sd of the privacy noise of every entry of psi_hat and of H_hat's diagonal (its
        off-diagonal entries' is noise_sd_gram / sqrt(2)): sqrt(M^2 / (D n)) and that over c.
    bound : float
        The feature bound B of the fit.

    References
    ----------
    Source paper, `alg:LDP-linear-regression`, `alg:U-LDP`.
    """

    weighting: np.ndarray
    u_next: np.ndarray
    psi: np.ndarray | None
    gram: np.ndarray | None
    n: int
    lam: float
    noise_sd_psi: float
    noise_sd_gram: float
    bound: float

    def __post_init__(self) -> None:
        freeze_arrays(self, "weighting", "u_next", "psi", "gram")


class IWVectorLDPFit(SummingLocalFit):
    """One stage: every user sends (psi, c svec H) through the L2-ball channel; the server sums the outputs."""

    oracle: IWVectorLDP

    def __init__(self, *args) -> None:
        super().__init__(*args)
        cfg, d = self.oracle, self.dim
        self.u, self._u_half = warm_start(cfg.initial_u, d, name="initial_u")
        # The Gram radius r <= B: the Gram statistic of phi shrunk to r, whose norm is at most r (psi is unchanged).
        self.gram_radius = self.bound if cfg.gram_radius is None else min(cfg.gram_radius, self.bound)
        self.scale = 1.0 / math.sqrt(self.gram_radius)
        self.size = d + svec_size(d)
        radius = padded(math.sqrt(1.0 + self.scale ** 2 * self.gram_radius ** 2))
        self._channel = L2BallChannel(cfg.privacy.epsilon, self.size, radius)
        statistic = VectorIWStatistic(self.u.copy(), self._u_half.copy(), self.scale,
                                      math.inf if self.gram_radius >= self.bound else self.gram_radius)
        self._randomizer_ = LocalRandomizer(statistic, radius, self._channel, self.bound)
        self._sum = np.zeros(self.size)
        # The per-coordinate noise sd of one user's output: Cov(Z | s) = (M^2/D) I - s s^T <= (M^2/D) I.
        self.user_sd = self._channel.magnitude / math.sqrt(self.size)
        self.lam = cfg.lam if cfg.lam is not None else spectral_lambda(
            self.n_rounds, d, self.user_sd / self.scale, 1, cfg.constants, cfg.confidence)

    def _estimate(self) -> Estimate:
        cfg, d = self.oracle, self.dim
        n = self._count
        mean = self._sum / max(n, 1)
        psi_hat = mean[:d]
        h_hat = unsvec(mean[d:], d) / self.scale
        if n > 0:
            f = self._u_half @ psd_project(h_hat) @ self._u_half + (self.lam / 3.0) * self.u
            u_next = spectral_update(self.u, symmetric_part(f))
            u_inv_half = np.linalg.inv(self._u_half)
            psi_mat = self._u_half @ h_hat @ u_inv_half
            theta = ball_least_squares(psi_mat + self.lam * np.eye(d), psi_hat)
        else:
            u_next, theta = self.u, np.zeros(d)
        root = math.sqrt(n) if n > 0 else 1.0
        sd = self.user_sd / root if n > 0 else 0.0
        # As IW-Regression-LDP's: an epoch cut short (result() before n_rounds rows) widens the interval.
        level = (2.0 * self.user_sd / self.scale * math.sqrt(d) + self.user_sd * math.sqrt(d) + 1.0) / root
        lam_eff = max(self.lam, level) if n < self.n_rounds else self.lam
        c = cfg.width_constant
        release = VectorLDPRelease(weighting=self.u, u_next=u_next, psi=psi_hat if n > 0 else None,
                                   gram=h_hat if n > 0 else None, n=int(n), lam=self.lam, noise_sd_psi=sd,
                                   noise_sd_gram=sd / self.scale, bound=self.bound)
        return Estimate(theta, self.link, self.u, c * lam_eff,
                        info=dict(lam=self.lam, width_constant=c, users=n, magnitude=self._channel.magnitude,
                                  channel_dim=self.size, constants=cfg.constants),
                        release=release)


@register_oracle
@dataclass(frozen=True)
class IWVectorLDP(IWRegressionLDP):
    """IW-Vector-LDP: IW least squares from one pure epsilon-LDP L2-ball report of (psi, Gram statistic) per user.

    Parameters
    ----------
    privacy : PrivacySpec
        Local DP; every user spends epsilon once, through the pure epsilon-LDP L2-ball channel (delta is not
        used: the fit is (epsilon, 0)-LDP).
    constants : {"practical", "theory"}
        The width constant (2 or 8) and lambda's form (:func:`~privbandit.oracles.iw_ldp.spectral_lambda`).
    lam, width_multiplier, confidence
        As in :class:`~privbandit.oracles.iw_ldp.IWRegressionLDP`.
    initial_u : ndarray (d, d), optional
        The public U the users use (a symmetric positive definite matrix; the identity by default): an agent
        passes the previous epoch's ``release.u_next``.
    gram_radius : float, optional
        r > 0, public and fixed before the run: the Gram statistic H is computed from phi shrunk to norm at most
        r, so its norm bound is r instead of B and the channel's radius sqrt(1 + r) instead of sqrt(1 + B), with
        c = 1 / sqrt(r) (default None, or any r >= B: no row is shrunk). psi is unchanged (it reads only
        U phi's direction). The fit then estimates the least-squares solution for the Gram of the shrunk rows:
        where the norm of phi is independent of its direction (the heavy-tailed family), that is theta* times a
        scalar >= 1, which ranks the arms as theta* does.

    Notes
    -----
    The configuration is IW-Regression-LDP's (a subclass: the same fields, width constants and warm start);
    its ``stages`` and ``u_fraction`` are unused: no user learns U alone, U's step comes from every user's H
    report. Sensitivity: the statistic's norm is at most
    R = sqrt(1 + c^2 min(r, B)^2) = sqrt(1 + min(r, B)) for every U and every row clipped to B, the channel's
    input radius; the channel is (epsilon, 0)-DP
    for any two inputs in its ball and unbiased.

    References
    ----------
    Source paper, `alg:LDP-linear-regression`, `alg:U-LDP`, `lem:uxxu`, `lem:L-LDP-solution`; Duchi, Jordan and
    Wainwright (2013).

    Examples
    --------
    >>> from privbandit.oracles import make_oracle
    >>> from privbandit.oracles.checks import synthetic_rows
    >>> x, y = synthetic_rows(dim=3, n=2000)
    >>> fit = make_oracle("iw-vector-ldp", epsilon=1.0, delta=1e-5).start(2000, dim=3, rng=1)
    >>> fit.add(x, y)
    >>> fit.result().release.n, fit.ledger.summary()[0]["mechanism"]
    (2000, 'l2-ball')
    """

    gram_radius: float | None = None

    name: ClassVar[str] = "iw-vector-ldp"
    fit_class: ClassVar[type] = IWVectorLDPFit
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **IWRegressionLDP.parameter_constraints, "gram_radius": [None, POSITIVE]}
