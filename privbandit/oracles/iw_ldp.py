"""Information-weighted (IW) linear regression under local DP.

Three algorithms of `sec:LDP-linear`, each a :class:`~privbandit.oracles.base.LocalEpochFit`: every
user's row passes through a :class:`~privbandit.privacy.LocalRandomizer` whose statistic is fixed by
public parameters and earlier stages' releases, and aggregation keeps only running sums of the
randomized outputs.

1. Spectral-Iteration-LDP (`alg:U-LDP`) learns U with F_LDP(U) ~ I. From U_0 = I it runs K stages of
   N users; in stage k user t sends SymPriv(U_k^{1/2} phi phi^T U_k^{1/2} / ||U_k phi||) (Frobenius norm
   <= ||phi|| <= B, `lem:uxxu`), the learner averages them into H_k, sets
   F_k = U_k^{1/2} H_k U_k^{1/2} + lambda_k U_k with lambda_k = (2k+1)/(2K+1) lambda, and
   U_{k+1} = sym(F_k^{-1/2} U_k). U_k depends on earlier stages only. It is a building block (class
   :class:`SpectralLDPFit`, function :func:`learn_u_ldp`), not a regression oracle on its own.
2. IW-Regression-LDP (`alg:LDP-linear-regression`): the first half of the users learn U, the second
   half send psi_t = U phi y / ||U phi|| and Psi_t = U phi phi^T / ||U phi|| through one joint Gaussian
   channel; theta_hat = argmin_{||theta|| <= 1} ||(Psi_hat + lambda I) theta - psi_hat|| and
   |<phi, theta_hat - theta*>| <= c lambda ||U phi|| (`lem:L-LDP-solution`: c = 8).
3. Distribution-specific IW-LDP (`alg:LDP-linear-regression-fixed-p`): with U computed from a public
   sample of p (or learned privately from a fraction of the users), every user sends
   U phi y / ||U phi|| through the pure epsilon-LDP L2-ball channel and theta_hat = U psi_hat.

Constants. ``constants="theory"`` takes the source's choices (K = max(ceil(log log T), 12) stages,
lambda = C K s sqrt((d + log(K/confidence))/N) with the "large absolute constant" C set to 1, width
8 lambda ||U phi||), which give very wide intervals at simulable T. ``constants="practical"``
(default) takes K = 4, lambda = 2 s sqrt(d/N) + 1/sqrt(N), the size of the privatised H's error
(s the channel's per-entry noise std), and width 2 lambda ||U phi||, calibrated on isotropic,
heavy-tailed, spiky and rare-direction features to cover >= 95% of fresh features in every cell. The noise
scales come from the privacy spec and the sensitivities alone, never from ``constants``.

Privacy. Each user is in exactly one stage and sends one release: a symmetric Gaussian at Frobenius
sensitivity 2B (spectral stages), one Gaussian at L2 sensitivity 2 sqrt(1 + B) on the concatenation
(psi, Psi / sqrt(B)) (regression stage), or the pure epsilon L2-ball channel. All Gaussians use the
analytic calibration (Balle & Wang 2018) for (epsilon, delta); every release is in the fit's ledger.

References
----------
Source paper, `alg:U-LDP`, `prop:alg-U-LDP`, `alg:LDP-linear-regression`, `lem:L-LDP-solution`,
`thm:LDP-linear-regression-full`, `alg:LDP-linear-regression-fixed-p`,
`prop:LDP-linear-regression-upper-fixed-p`, `def:FLDP`, `lem:uxxu`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from scipy import optimize

from .._validation import (
    POSITIVE,
    POSITIVE_INT,
    UNIT_OPEN,
    Array,
    Options,
    ParameterConstraints,
    check_array,
    check_positive,
    check_weights,
)
from ..infomatrix import spectral_update, u_star
from ..linalg import psd_project, psd_sqrt, symmetric_part
from ..privacy import (
    GaussianMechanism,
    L2BallChannel,
    LocalRandomizer,
    PrivacySpec,
    SymmetricGaussianMechanism,
    analytic_noise_multiplier,
    l2_ball_channel_magnitude,
)
from ..privacy.randomizers import padded
from .base import (
    CONSTANTS,
    Constants,
    Estimate,
    LocalEpochFit,
    Oracle,
    stage_sizes_split,
    two_sided_quantile,
)
from .iw_jdp import IWRelease, warm_start
from .registry import register_oracle

__all__ = [
    "CONSTANTS", "IWFixedPLDP", "IWRegressionLDP", "SpectralLDPFit",
    "ball_least_squares", "learn_u_ldp", "spectral_lambda", "vector_norm",
]

PRACTICAL_STAGES = 4
"""K of the practical spectral iteration (the exact iteration reaches [1/2, 2] in about 3 steps)."""


def row_norms(ux: np.ndarray) -> np.ndarray:
    """The rows' L2 norms of a float64 ``ux`` (m, d): ``np.linalg.norm(ux, axis=1)`` without its dispatch."""
    return np.sqrt(np.add.reduce(ux * ux, axis=1))


def inverse_norms(norms: np.ndarray) -> np.ndarray:
    """1 / norms, 0 where a norm is 0."""
    return np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)


def vector_norm(v: np.ndarray) -> float:
    """``np.linalg.norm(v)`` of a float64 vector (its formula, sqrt(v . v)) without its dispatch."""
    return math.sqrt(v.dot(v))


def unit_directions(ux: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows U phi / ||U phi|| (0 where U phi = 0) and the norms ||U phi||."""
    norms = row_norms(ux)
    return ux * inverse_norms(norms)[:, None], norms


def ball_least_squares(a: np.ndarray, b: np.ndarray, radius: float = 1.0) -> np.ndarray:
    """argmin_{||theta|| <= radius} ||A theta - b|| (a trust-region subproblem, solved exactly).

    With A = P diag(s) Q^T, the minimiser is Q diag(s / (s^2 + mu)) P^T b for the smallest mu >= 0
    that puts it in the ball (mu = 0 and the minimum-norm least-squares solution when that is inside).

    References
    ----------
    Source paper, `alg:LDP-linear-regression` (the last step), `lem:L-LDP-solution` (b).
    """
    a = check_array("a", a, ndim=2)
    b = check_array("b", b, shape=(a.shape[0],))
    radius = check_positive("radius", radius)
    p, s, qt = np.linalg.svd(a, full_matrices=False)
    c = p.T @ b
    tol = (s[0] if s.size else 0.0) * max(a.shape) * np.finfo(float).eps
    inv = np.divide(1.0, s, out=np.zeros_like(s), where=s > tol)
    theta0 = qt.T @ (inv * c)
    if np.linalg.norm(theta0) <= radius:
        return theta0

    def excess(mu: float) -> float:
        return float(np.linalg.norm(s * c / (s * s + mu)) - radius)

    hi = float(np.linalg.norm(s * c)) / radius + 1e-300
    lo = hi * 1e-15
    if excess(lo) <= 0:  # the "hard case": the solution sits on the smallest singular direction
        return theta0 * (radius / np.linalg.norm(theta0))
    mu = optimize.brentq(excess, lo, hi, xtol=1e-14 * hi, rtol=1e-12)
    theta = qt.T @ (s * c / (s * s + mu))
    norm = np.linalg.norm(theta)
    return theta if norm <= radius else theta * (radius / norm)


def spectral_lambda(n_stage: int, dim: int, noise_std: float, stages: int, constants: str,
                    confidence: float) -> float:
    """lambda of Spectral-Iteration-LDP for stages of ``n_stage`` users and per-entry noise ``noise_std``.

    theory: K s sqrt((d + log(K / confidence)) / N) (`prop:alg-U-LDP` with C = 1);
    practical: 2 s sqrt(d / N) + 1 / sqrt(N), about the operator norm of H_k's error (privacy noise plus
    sampling).
    """
    n = max(int(n_stage), 1)
    if constants == "theory":
        return stages * noise_std * math.sqrt((dim + math.log(stages / confidence)) / n)
    return 2.0 * noise_std * math.sqrt(dim / n) + 1.0 / math.sqrt(n)


def theory_stage_count(n_users: int) -> int:
    """K = max(ceil(log log T), 12) (`thm:LDP-linear-regression-full`)."""
    t = max(int(n_users), 3)
    return max(int(math.ceil(math.log(math.log(t)))), 12)


@dataclass(frozen=True)
class SpectralStatistic:
    """phi -> U^{1/2} phi phi^T U^{1/2} / ||U phi|| (0 at phi = 0); Frobenius norm <= ||phi|| (`lem:uxxu`)."""

    u: np.ndarray
    u_half: np.ndarray

    def __call__(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        inv = inverse_norms(row_norms(x @ self.u))
        vx = x @ self.u_half
        return (vx * inv[:, None])[:, :, None] * vx[:, None, :]


@dataclass(frozen=True)
class IWRegressionStatistic:
    """phi, y -> (psi, scale * vec(Psi)) with psi = U phi y/||U phi||, Psi = U phi phi^T/||U phi||.

    ||psi|| <= |y| <= 1 and ||Psi||_F = ||phi|| <= B, so the concatenation has norm <= sqrt(1 + scale^2 B^2).
    """

    u: np.ndarray
    scale: float

    def __call__(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        dirs, _ = unit_directions(x @ self.u)
        psi = dirs * y[:, None]
        big_psi = dirs[:, :, None] * x[:, None, :]
        return np.concatenate([psi, self.scale * big_psi.reshape(x.shape[0], -1)], axis=1)


@dataclass(frozen=True)
class WeightedLabelStatistic:
    """phi, y -> U phi y / ||U phi|| (norm <= 1), the statistic of `alg:LDP-linear-regression-fixed-p`."""

    u: np.ndarray

    def __call__(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        dirs, _ = unit_directions(x @ self.u)
        return dirs * y[:, None]


class SpectralLDPFit(LocalEpochFit):
    """A local fit whose first ``n_spectral_stages`` stages run Spectral-Iteration-LDP (`alg:U-LDP`).

    Subclasses call :meth:`_start_spectral` (or, setting ``stage_sizes`` themselves, :meth:`_init_spectral`) in
    ``__init__`` and write ``_later_randomizer(stage)`` (and, to release something when one closes,
    ``_close_stage``, handing the spectral stages to ``super()``) for the later stages
    (``stage >= n_spectral_stages``); the later stages' randomized outputs are summed into ``_sum`` (which a
    subclass creates, zero, in the outputs' shape) and counted in ``_count``, as in
    :class:`~privbandit.oracles.base.SummingLocalFit`.

    Attributes
    ----------
    u : ndarray (d, d)
        The current iterate U_k (U_K after the spectral stages).
    lam : float
        lambda = lambda_K, the final regulariser.
    trace : list of dict
        Per stage: lambda_k, the extreme eigenvalues of F_k, and how many users it had.
    """

    n_spectral_stages: int = 0
    _sum: np.ndarray
    _count: int = 0

    def _init_spectral(self, n_stages: int, lam: float, initial_u: np.ndarray | None = None) -> None:
        self.n_spectral_stages = n_stages
        self.lam = lam
        self.lams = tuple((2 * k + 1) / (2 * n_stages + 1) * lam for k in range(n_stages))
        self.u, self._u_half = warm_start(initial_u, self.dim, name="initial_u")
        self._sym_radius = padded(self.bound)
        sens = 2.0 * self._sym_radius
        z = analytic_noise_multiplier(self.oracle.privacy.epsilon, self.oracle.privacy.delta)
        self._sym_channel = SymmetricGaussianMechanism(sensitivity=sens, sigma=z * sens)
        self._h_sum = np.zeros((self.dim, self.dim))
        self._h_count = 0
        self.trace: list[dict] = []

    def _randomizer(self, stage: int) -> LocalRandomizer:
        """SymPriv on U_k^{1/2} phi phi^T U_k^{1/2} in the spectral stages (the subclass's ``_later_randomizer``
        after them)."""
        if stage >= self.n_spectral_stages:
            return self._later_randomizer(stage)
        return LocalRandomizer(SpectralStatistic(self.u.copy(), self._u_half.copy()), self._sym_radius,
                               self._sym_channel, self.bound)

    def _absorb(self, stage: int, outputs: np.ndarray) -> None:
        if stage < self.n_spectral_stages:
            self._h_sum += outputs.sum(axis=0)
            self._h_count += outputs.shape[0]
        else:
            self._sum += outputs.sum(axis=0)
            self._count += outputs.shape[0]

    def _close_stage(self, stage: int) -> None:
        """The spectral update U_k -> U_{k+1} when a spectral stage closes (a later stage releases nothing here)."""
        if stage >= self.n_spectral_stages:
            return
        lam_k = self.lams[stage]
        if self._h_count > 0:
            h = psd_project(self._h_sum / self._h_count)
            f = self._u_half @ h @ self._u_half + lam_k * self.u
            vals = np.linalg.eigvalsh(symmetric_part(f))
            self.u = spectral_update(self.u, f)
            self._u_half = psd_sqrt(self.u)
            self.trace.append(dict(stage=stage, lam=lam_k, f_min=float(vals[0]), f_max=float(vals[-1]),
                                   users=self._h_count))
        else:
            self.trace.append(dict(stage=stage, lam=lam_k, f_min=float("nan"), f_max=float("nan"), users=0))
        self._h_sum = np.zeros((self.dim, self.dim))
        self._h_count = 0

    def _start_spectral(self, u_fraction: float, initial_u: np.ndarray | None = None) -> tuple[int, float]:
        """The first ``u_fraction`` of the users learn U (from two users on, at least one and all but one unless
        ``u_fraction`` is 1) in K spectral stages, the rest form one last stage: sets ``stage_sizes``, calls
        :meth:`_init_spectral` and returns (the number n_u of spectral users, the noise multiplier z)."""
        cfg = self.oracle
        n_u = int(math.floor(self.n_rounds * u_fraction))
        if u_fraction < 1.0 and self.n_rounds >= 2:
            n_u = min(max(n_u, 1), self.n_rounds - 1)
        z = analytic_noise_multiplier(cfg.privacy.epsilon, cfg.privacy.delta)
        k = cfg.stages if cfg.stages is not None else (theory_stage_count(2 * n_u) if cfg.constants == "theory"
                                                       else PRACTICAL_STAGES)
        k = max(1, min(k, max(n_u, 1)))
        lam = cfg.lam if cfg.lam is not None else spectral_lambda(max(n_u // k, 1), self.dim, z * 2.0 * self.bound,
                                                                  k, cfg.constants, cfg.confidence)
        self.stage_sizes = stage_sizes_split(n_u, [1.0 / k] * k) + (self.n_rounds - n_u,)
        self._init_spectral(k, lam, initial_u)
        return n_u, z


def learn_u_ldp(features: np.ndarray, *, epsilon: float, delta: float, bound: float = 1.0,
                constants: Constants = "practical", stages: int | None = None, lam: float | None = None,
                confidence: float = 0.05, rng: Any = None) -> tuple[np.ndarray, float, list[dict], Any]:
    """Run Spectral-Iteration-LDP alone on a feature sample (every user in one stage).

    Parameters
    ----------
    features : ndarray (n, d)
        The users' features (clipped to ``bound`` before the channel).
    epsilon, delta : float
        The local budget of every user.
    bound : float
        B.
    constants : {"practical", "theory"}
        Choice of K and lambda (see the module docstring).
    stages, lam : optional
        Override K and lambda.
    confidence : float
        The failure probability in the theory lambda.
    rng : seed or Generator

    Returns
    -------
    u : ndarray (d, d)
        U_K.
    lam : float
        lambda_K.
    trace : list of dict
        Per stage lambda_k and the extreme eigenvalues of F_k.
    ledger : PrivacyLedger
        One local release per user.

    References
    ----------
    Source paper, `alg:U-LDP`, `prop:alg-U-LDP`.
    """
    x = check_array("features", features, ndim=2, allow_empty=False)
    oracle = _SpectralStagesOnly(PrivacySpec("ldp", epsilon, delta), constants=constants, stages=stages, lam=lam,
                                 confidence=confidence)
    fit = oracle.start(x.shape[0], dim=x.shape[1], bound=bound, rng=rng)
    fit.add(x, np.zeros(x.shape[0]))
    fit.result()
    return fit.u, fit.lam, fit.trace, fit.ledger


class IWRegressionLDPFit(SpectralLDPFit):
    """Streaming fit of IW-Regression-LDP: K spectral stages, then one regression stage."""

    oracle: IWRegressionLDP

    def __init__(self, *args) -> None:
        super().__init__(*args)
        cfg = self.oracle
        _, z = self._start_spectral(cfg.u_fraction, cfg.initial_u)
        self.scale = 1.0 / math.sqrt(self.bound)
        radius = padded(math.sqrt(1.0 + self.scale ** 2 * self.bound ** 2))
        self._reg_radius = radius
        self._reg_channel = GaussianMechanism(sensitivity=2.0 * radius, sigma=z * 2.0 * radius)
        self._sum = np.zeros(self.dim + self.dim * self.dim)      # the randomized (psi, Psi / sqrt(B)), summed

    def _later_randomizer(self, stage: int) -> LocalRandomizer:
        return LocalRandomizer(IWRegressionStatistic(self.u.copy(), self.scale), self._reg_radius,
                               self._reg_channel, self.bound)

    def _estimate(self) -> Estimate:
        cfg, d = self.oracle, self.dim
        n = self._count
        mean = self._sum / max(n, 1)
        psi_hat = mean[:d]
        big_psi_hat = mean[d:].reshape(d, d) / self.scale
        theta = ball_least_squares(big_psi_hat + self.lam * np.eye(d), psi_hat) if n > 0 else np.zeros(d)
        # The error level of the regression stage for the users it actually had: lambda is planned from
        # the spec, so a stage cut short (result() before n_rounds rows) widens the interval instead.
        s_reg = self._reg_channel.sigma
        level = (2.0 * s_reg / self.scale * math.sqrt(d) + s_reg * math.sqrt(d) + 1.0) / math.sqrt(max(n, 1))
        lam_eff = max(self.lam, level) if n < self.stage_sizes[-1] else self.lam
        c = cfg.width_constant
        return Estimate(theta, self.link, self.u, c * lam_eff,
                        info=dict(lam=self.lam, width_constant=c, stages=self.n_spectral_stages,
                                  regression_users=n, spectral_trace=list(self.trace), psi_hat=psi_hat,
                                  constants=cfg.constants),
                        release=self._public_release(psi_hat, big_psi_hat, n))

    def _public_release(self, psi_hat: np.ndarray, big_psi_hat: np.ndarray, n: int) -> IWRelease:
        """What the server holds after aggregating the randomized outputs, with its public parameters."""
        s_reg = self._reg_channel.sigma
        root = math.sqrt(n) if n > 0 else 1.0
        return IWRelease(weighting=self.u, psi=psi_hat if n > 0 else None, psi_mat=big_psi_hat if n > 0 else None,
                         n=int(n), lam=self.lam, noise_sd_psi=s_reg / root if n > 0 else 0.0,
                         noise_sd_Psi=s_reg / self.scale / root if n > 0 else 0.0,
                         n_stages=self.n_spectral_stages, fraction=self.oracle.u_fraction, bound=self.bound)


@dataclass(frozen=True)
class SpectralLDPOracle(Oracle):
    """The configuration the spectral LDP oracles share (IW-Regression-LDP, distribution-specific IW-LDP,
    IW-GLM-LDP): the first ``u_fraction`` of an epoch's users learn U with Spectral-Iteration-LDP, the others
    answer the regression's (or the SGD's) queries.

    Parameters
    ----------
    privacy : PrivacySpec
        Local DP; every user spends (epsilon, delta) once.
    constants : {"practical", "theory"}
        The source's constants (``"theory"``) or calibrated ones (default).
    stages : int, optional
        K, the number of spectral stages (default: 4 practical, max(ceil(log log T), 12) theory).
    lam : float, optional
        lambda (default from ``constants``: see :func:`spectral_lambda`).
    width_multiplier : float, optional
        Sets (IW-Regression-LDP) or multiplies (fixed p, GLM) the width constant.
    u_fraction : float
        Fraction of the epoch's users that learn U, in (0, 1): the paper's N = T/2 (1/2, the default); both
        steps need users, so neither 0 nor 1.
    confidence : float
        Statistical failure probability (lambda in theory, the width); not a privacy parameter.

    References
    ----------
    Source paper, `alg:LDP-linear-regression` (N = T/2), `alg:U-LDP`.
    """

    constants: Constants = "practical"
    stages: int | None = None
    lam: float | None = None
    width_multiplier: float | None = None
    u_fraction: float = 0.5
    confidence: float = 0.05

    parameter_constraints: ClassVar[ParameterConstraints] = {
        **Oracle.parameter_constraints, "constants": [Options(CONSTANTS)], "confidence": [UNIT_OPEN],
        "stages": [None, POSITIVE_INT], "lam": [None, POSITIVE], "width_multiplier": [None, POSITIVE],
        "u_fraction": [UNIT_OPEN]}


@register_oracle
@dataclass(frozen=True)
class IWRegressionLDP(SpectralLDPOracle):
    """IW-Regression-LDP: locally private information-weighted least squares.

    Parameters
    ----------
    privacy, constants, stages, lam, u_fraction, confidence
        As in :class:`SpectralLDPOracle` (``constants`` also sets the width constant).
    width_multiplier : float, optional
        c in the width c lambda ||U phi|| (default 8 theory, 2 practical).
    initial_u : ndarray (d, d), optional
        A public warm start of the spectral iteration, a symmetric positive definite U instead of U_0 = I (the
        default, the paper's): as ``initial_w`` of :class:`~privbandit.oracles.IWRegressionDP`.

    Notes
    -----
    Sensitivities: spectral users, Frobenius norm <= B, so 2B; regression users, the concatenation
    (psi, Psi / sqrt(B)) has norm <= sqrt(1 + B), so 2 sqrt(1 + B) (the scaling 1/sqrt(B) minimises the
    summed noise variance of psi_hat and Psi_hat). One Gaussian on the concatenation spends (epsilon,
    delta) once instead of splitting the budget between psi and Psi. Both bounds hold for every U (the
    statistics are normalised by ||U phi||), so a warm start from a released U changes which public matrix
    the users' statistics use, not the sensitivities.

    The Estimate carries what the server holds, an :class:`~privbandit.oracles.iw_jdp.IWRelease`
    (``estimate.release``), so that agents can post-process it (e.g. pool epochs:
    :class:`~privbandit.agents.pooled.PooledReleases`).

    References
    ----------
    Source paper, `alg:LDP-linear-regression`, `alg:U-LDP`, `lem:L-LDP-solution`,
    `thm:LDP-linear-regression-full`.

    Examples
    --------
    >>> from privbandit.oracles import make_oracle
    >>> from privbandit.oracles.checks import synthetic_rows
    >>> x, y = synthetic_rows(dim=3, n=2000)          # rows with ||x|| < 1, E y = <x, theta*>

    >>> fit = make_oracle("iw-regression-ldp", epsilon=1.0, delta=1e-5).start(2000, dim=3, rng=1)
    >>> fit.add(x, y)                                 # each row is randomized, by its user, right here
    >>> fit.result().theta.shape
    (3,)
    >>> sorted({r["kind"] for r in fit.ledger.summary()}), round(fit.ledger.guarantee(1e-5), 6)
    (['local'], 1.0)
    """

    initial_u: np.ndarray | None = field(default=None, compare=False, repr=False)

    name: ClassVar[str] = "iw-regression-ldp"
    privacy_models: ClassVar[tuple[str, ...]] = ("ldp",)
    fit_class: ClassVar[type] = IWRegressionLDPFit
    parameter_constraints: ClassVar[ParameterConstraints] = {**SpectralLDPOracle.parameter_constraints,
                                                             "initial_u": [None, Array(ndim=2)]}

    PRACTICAL_WIDTH: ClassVar[float] = 2.0
    THEORY_WIDTH: ClassVar[float] = 8.0

    @property
    def width_constant(self) -> float:
        """c in c lambda ||U phi||."""
        if self.width_multiplier is not None:
            return self.width_multiplier
        return self.THEORY_WIDTH if self.constants == "theory" else self.PRACTICAL_WIDTH


@dataclass(frozen=True)
class _SpectralStagesOnly(IWRegressionLDP):
    """IW-Regression-LDP's fit with every user in the spectral stages (``u_fraction`` = 1, no regression
    stage): what :func:`learn_u_ldp` runs. Not an oracle of its own (not registered)."""

    u_fraction: float = 1.0

    parameter_constraints: ClassVar[ParameterConstraints] = {
        **IWRegressionLDP.parameter_constraints, "u_fraction": [Options((1.0,))]}


class IWFixedPLDPFit(SpectralLDPFit):
    """Fit of the distribution-specific IW-LDP: U from a public sample (or private stages), then psi."""

    oracle: IWFixedPLDP

    def __init__(self, *args) -> None:
        super().__init__(*args)
        cfg = self.oracle
        eps = cfg.privacy.epsilon
        if cfg.public_features is not None:
            pub = np.asarray(cfg.public_features, dtype=float)
            if pub.shape[1] != self.dim:
                raise ValueError(f"public_features must have {self.dim} columns (the dimension d), got shape "
                                 f"{pub.shape}")
            n_psi = self.n_rounds
            self.stage_sizes = (n_psi,)
            lam = cfg.lam if cfg.lam is not None else 1.0 / (eps * math.sqrt(n_psi))
            self._init_spectral(0, lam)
            self.u = u_star(np.minimum(1.0, self.bound / np.maximum(np.linalg.norm(pub, axis=1, keepdims=True),
                                                                     1e-300)) * pub,
                            cfg.public_weights, lam=lam, tol=1e-9, max_iter=300).matrix
        else:
            self._start_spectral(cfg.u_fraction)
        self._ball = L2BallChannel(eps, self.dim, padded(1.0))
        self._sum = np.zeros(self.dim)      # the randomized U phi y / ||U phi||, summed

    def _later_randomizer(self, stage: int) -> LocalRandomizer:
        return LocalRandomizer(WeightedLabelStatistic(self.u.copy()), padded(1.0), self._ball, self.bound)

    def _estimate(self) -> Estimate:
        cfg, d = self.oracle, self.dim
        n = max(self._count, 1)
        psi_hat = self._sum / n
        theta = self.u @ psi_hat
        mag = l2_ball_channel_magnitude(cfg.privacy.epsilon, d, padded(1.0))
        spread = math.sqrt((mag * mag / d + 1.0) / n)
        if cfg.constants == "theory":
            c = 2.0 * self.lam + spread / math.sqrt(cfg.confidence)
        else:
            c = self.lam + two_sided_quantile(cfg.confidence) * spread
        if cfg.width_multiplier is not None:
            c *= cfg.width_multiplier
        return Estimate(theta, self.link, self.u, c,
                        info=dict(lam=self.lam, psi_users=self._count, magnitude=mag,
                                  spectral_trace=list(self.trace), public=cfg.public_features is not None))


@register_oracle
@dataclass(frozen=True)
class IWFixedPLDP(SpectralLDPOracle):
    """Distribution-specific IW-LDP with the pure epsilon-LDP L2-ball channel.

    With ``public_features`` (a sample or atoms of p, optionally ``public_weights``), U solves
    F_LDP(U) = I on it with lambda = 1/(epsilon sqrt(T)) and every user sends U phi y / ||U phi||
    through the L2-ball channel (Duchi, Jordan & Wainwright 2013): the whole epoch is (epsilon, 0)-LDP.
    Without a public sample, the first ``u_fraction`` of the users learn U with Spectral-Iteration-LDP
    ((epsilon, delta)-LDP for them) and the rest use the pure channel.

    Parameters
    ----------
    privacy, stages, width_multiplier, confidence
        As in :class:`SpectralLDPOracle` (``width_multiplier`` multiplies the width constant).
    constants : {"practical", "theory"}
        Width constants: theory 2 lambda + sqrt((M^2/d + 1)/(n confidence)) (Chebyshev on
        `prop:LDP-linear-regression-upper-fixed-p`); practical lambda + z sqrt((M^2/d + 1)/n) with the
        normal quantile z at ``confidence`` (M the channel's output norm).
    lam : float, optional
        lambda of the private spectral stages (without a public sample); lambda of U* otherwise.
    u_fraction : float
        As in :class:`SpectralLDPOracle`, when there is no public sample (unused with one).
    public_features : ndarray (n, d), optional
        A public sample of p (rows clipped to B).
    public_weights : ndarray (n,), optional
        Probabilities of the public atoms.

    Notes
    -----
    Sensitivity: ||U phi y / ||U phi|| || <= 1, the channel's input ball; the channel is (epsilon, 0)-DP
    for any two inputs in it and unbiased, with E[Z Z^T] = (M^2/d) I.

    References
    ----------
    Source paper, `alg:LDP-linear-regression-fixed-p`, `prop:LDP-linear-regression-upper-fixed-p`;
    Duchi, Jordan & Wainwright (2013).
    """

    public_features: np.ndarray | None = field(default=None, compare=False, repr=False)
    public_weights: np.ndarray | None = field(default=None, compare=False, repr=False)

    name: ClassVar[str] = "iw-fixed-p-ldp"
    privacy_models: ClassVar[tuple[str, ...]] = ("ldp",)
    fit_class: ClassVar[type] = IWFixedPLDPFit
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **SpectralLDPOracle.parameter_constraints,
        "public_features": [None, Array(ndim=2, allow_empty=False)], "public_weights": [None, Array(ndim=1)]}

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.public_features is not None:
            pub = np.asarray(self.public_features, dtype=np.float64)    # checked: finite, non-empty, 2-D
            object.__setattr__(self, "public_features", pub)
            if self.public_weights is not None:
                check_weights("public_weights", self.public_weights, pub.shape[0])      # one per atom
                object.__setattr__(self, "public_weights", np.asarray(self.public_weights, dtype=np.float64))
        elif self.public_weights is not None:
            raise ValueError("public_weights needs public_features")
