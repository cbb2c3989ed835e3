"""Sufficient-statistics perturbation (SSP) of OLS/ridge, central model, and its shared solve helpers.

In words: with z = (phi, y) in R^{d+1}, ||z|| <= L = sqrt(B^2 + 1), OLS needs only the augmented second
moment S = sum_t z_t z_t^T, whose top-left block is X^T X and whose last column is X^T y. SSP releases S
once with SymPriv (a symmetric Gaussian matrix) and solves the ridge system on the noisy blocks. One joint
release of S covers X^T X and X^T y together, so each user spends (epsilon, delta) exactly once.

Sensitivity: under replacement of one row, ||z z^T - z' z'^T||_F^2 = ||z||^4 + ||z'||^4 - 2 <z, z'>^2
<= 2 L^4, so the Frobenius sensitivity of S is sqrt(2) L^2 (and the upper triangle, which carries the
noise, moves by no more).

The noise is calibrated to the largest possible norm L, whatever the data's norms: this is what the paper
shows to be wasteful when most features are small (`ssec:OLS`, `lem:OLS-fail`), and why it is the baseline.

The helpers :func:`augmented_second_moment`, :func:`noise_operator_bound` and :func:`ssp_estimate` take a
noisy augmented matrix and the standard deviation of its entries' noise, so a local-DP SSP (each user
perturbing z z^T, summed) reuses them with its own noise level.

References
----------
Source paper, `def:SSP`, `ssec:OLS`, `lem:OLS-fail`, `tab:comp`; Shariff & Sheffet (2018) for the
regularisation shift that keeps the noisy Gram matrix positive definite.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._validation import POSITIVE, UNIT_OPEN, Options, ParameterConstraints
from ..linalg import symmetric_part
from ..links import Link
from ..privacy import PrivacySpec, SymmetricGaussianMechanism
from ..privacy.calibration import CALIBRATION_METHODS, release_multiplier
from .base import EpochFit, Estimate, Oracle
from .registry import register_oracle

__all__ = ["SSP", "augmented_second_moment", "noise_operator_bound", "ssp_estimate"]


def augmented_second_moment(features: np.ndarray, rewards: np.ndarray) -> np.ndarray:
    """sum_t z_t z_t^T with z_t = (phi_t, y_t), shape (d+1, d+1)."""
    z = np.concatenate([features, rewards[:, None]], axis=1)
    return z.T @ z


def noise_operator_bound(noise_sd: float, dim: int, confidence: float) -> float:
    """A bound, holding with probability >= 1 - confidence, on ||Z||_op of a symmetric (dim x dim) Gaussian
    matrix with i.i.d. N(0, noise_sd^2) entries on and above the diagonal.

    ||Z||_op <= noise_sd (2 sqrt(dim) + sqrt(2) sqrt(2 log(2/confidence))): the expected norm is about
    2 sqrt(dim) noise_sd (semicircle edge), and the norm is sqrt(2) noise_sd-Lipschitz in the independent
    entries, so Gaussian concentration bounds the excess.
    """
    return float(noise_sd * (2.0 * math.sqrt(dim) + math.sqrt(2.0) * math.sqrt(2.0 * math.log(2.0 / confidence))))


def ssp_estimate(aug_noisy: np.ndarray, noise_sd: float, *, link: Link, lam: float = 1.0, confidence: float = 0.05,
                 noise_scale: float = 1.0, norm_bound: float = 1.0, width_multiplier: float = 1.0,
                 info: dict | None = None) -> Estimate:
    """Ridge on a noisy augmented second moment, with a confidence ellipsoid that accounts for the noise.

    Parameters
    ----------
    aug_noisy : ndarray (d+1, d+1)
        sum z z^T plus symmetric noise whose entries have standard deviation ``noise_sd``.
    noise_sd : float
        Per-entry noise standard deviation of ``aug_noisy`` (>= 0; 0 gives plain ridge).
    link : Link
        The link of the Estimate.
    lam : float
        Ridge regularizer lambda > 0 (on top of the noise shift).
    confidence : float
        Failure probability of the radius (split in three: noise operator norm, X^T y noise, reward noise).
    noise_scale : float
        Sub-Gaussian scale of the reward noise.
    norm_bound : float
        S >= ||theta*||.
    width_multiplier : float
        Multiplies the radius.
    info : dict, optional
        Extra diagnostics.

    Notes
    -----
    With nu = :func:`noise_operator_bound` (noise_sd, d, conf/3) and rho = 2 nu + lambda, the solver uses
    V = G~ + rho I (eigenvalues floored at lambda), theta_hat = V^{-1} b~. On the event ||Z_G|| <= nu,
    G + (nu + lambda) I <= V, and theta_hat - theta* = V^{-1} (X^T eta + z_b - (Z_G + rho I) theta*) gives
    |<phi, theta_hat - theta*>| <= beta ||phi||_{V^{-1}} with
    beta = sigma sqrt(2 log(3/conf) + log det(V / (nu + lambda)))
    + (noise_sd (sqrt(d) + sqrt(2 log(3/conf))) + (rho + nu) S) / sqrt(nu + lambda).
    """
    aug = symmetric_part(np.asarray(aug_noisy, dtype=float))
    d = aug.shape[0] - 1
    conf3 = confidence / 3.0
    nu = noise_operator_bound(noise_sd, d, conf3) if noise_sd > 0 else 0.0
    rho = 2.0 * nu + lam
    gram, xty = aug[:d, :d], aug[:d, d]
    vals, vecs = np.linalg.eigh(gram + rho * np.eye(d))
    vals = np.maximum(vals, lam)
    theta = vecs @ ((vecs.T @ xty) / vals)
    base = nu + lam
    logdet = float(np.sum(np.log(np.maximum(vals / base, 1e-300))))
    lg = math.log(3.0 / confidence)
    beta = (noise_scale * math.sqrt(max(2.0 * lg + logdet, 0.0))
            + (noise_sd * (math.sqrt(d) + math.sqrt(2.0 * lg)) + (rho + nu) * norm_bound) / math.sqrt(base))
    v_inv_half = (vecs / np.sqrt(vals)) @ vecs.T
    extra = dict(lam=lam, rho=rho, noise_bound=nu, beta=beta, noise_sd=noise_sd)
    extra.update(info or {})
    return Estimate(theta, link, v_inv_half, beta * width_multiplier / link.mu, info=extra)


class SSPFit(EpochFit):
    """Streams S = sum z z^T (O(d^2)); one SymPriv release at the end."""

    oracle: SSP

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._aug = np.zeros((self.dim + 1, self.dim + 1))
        self._noise_sd = 0.0

    def _add_rows(self, stage: int, start: int, x: np.ndarray, y: np.ndarray) -> None:
        self._aug += augmented_second_moment(x, y)

    def _close_stage(self, stage: int) -> None:
        start, stop = self.stage_range(stage)
        sens = math.sqrt(2.0) * (self.bound ** 2 + 1.0)
        mult = release_multiplier(self.oracle.privacy.epsilon, self.oracle.privacy.delta, self.oracle.calibration)
        mech = SymmetricGaussianMechanism(sensitivity=sens, sigma=mult * sens)
        self._aug = self._release(mech, symmetric_part(self._aug), start, stop, "[X y]^T [X y]")
        self._noise_sd = mech.sigma

    def _estimate(self) -> Estimate:
        cfg = self.oracle
        return ssp_estimate(self._aug, self._noise_sd, link=self.link, lam=cfg.lam, confidence=cfg.confidence,
                            noise_scale=cfg.noise_scale, norm_bound=cfg.norm_bound,
                            width_multiplier=cfg.width_multiplier, info=dict(n=self.n_seen))


@register_oracle
@dataclass(frozen=True)
class SSP(Oracle):
    """Sufficient-statistics perturbation of OLS (central): SymPriv on sum (phi, y)(phi, y)^T, then ridge.

    Parameters
    ----------
    privacy : PrivacySpec
        Joint DP budget per user; one release at Frobenius sensitivity sqrt(2) (B^2 + 1).
    lam, confidence, noise_scale, norm_bound, width_multiplier : float
        As in :func:`ssp_estimate` (``confidence`` is not a privacy parameter).
    calibration : {"analytic", "paper"}
        Gaussian calibration.

    References
    ----------
    Source paper, `def:SSP`, `ssec:OLS`, `lem:OLS-fail`.
    """

    privacy: PrivacySpec = field(default_factory=PrivacySpec)
    lam: float = 1.0
    confidence: float = 0.05
    noise_scale: float = 1.0
    norm_bound: float = 1.0
    width_multiplier: float = 1.0
    calibration: str = "analytic"

    name: ClassVar[str] = "ssp"
    privacy_models: ClassVar[tuple[str, ...]] = ("jdp",)
    fit_class: ClassVar[type[EpochFit]] = SSPFit
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **Oracle.parameter_constraints, "lam": [POSITIVE], "confidence": [UNIT_OPEN], "noise_scale": [POSITIVE],
        "norm_bound": [POSITIVE], "width_multiplier": [POSITIVE], "calibration": [Options(CALIBRATION_METHODS)]}
