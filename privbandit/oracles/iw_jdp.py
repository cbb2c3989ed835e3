"""Information-weighted (IW) linear regression under joint (central) differential privacy.

In words: a curator first learns, privately, a weighting matrix W with F_DP(W) ~ I, where
F_DP(W) = E[W phi phi^T W / (1 + gamma ||W phi||)] + lambda W (`def:FJDP`). Each user's row then enters
the regression with weight 1 / (1 + gamma ||W phi||): a row's influence on any statistic is at most
1/gamma, whatever its norm, so the privacy noise is calibrated to 1/gamma instead of to the largest
possible ||phi|| = B. The estimate solves the information-weighted normal equations and carries the
confidence radius c * lambda * ||W phi||.

Three oracles live here:

- ``"spectral-dp"``, Spectral-Iteration-DP (`alg:W-JDP`): K stages of disjoint users; stage k streams its
  rows through W_k, H_k = mean W_k^{1/2} phi phi^T W_k^{1/2} / (1 + gamma ||W_k phi||) is released with
  SymPriv, F_k = W_k^{1/2} H~_k W_k^{1/2} + lambda W_k and W_{k+1} = sym(F_k^{-1/2} W_k). Memory O(d^2).
  Its Estimate has theta = 0 and width matrix W (a diagnostic oracle: tests and W* studies).
- ``"iw-regression-dp"``, IW-Regression-DP (`alg:JDP-linear-regression`): half the users learn W as above,
  the other half give psi = mean W phi y / (1 + gamma ||W phi||) and Psi = mean W phi phi^T / (...),
  released as ONE joint Gaussian on the concatenation (B psi, vec Psi); theta_hat = (Psi~ + lambda I)^{-1} psi~.
- ``"iw-fixed-p-dp"``, distribution-specific IW (`alg:JDP-linear-regression-fixed-p`): W is computed from
  the known distribution (or public samples) by the exact spectral iteration, all users give psi, and
  theta_hat = W psi~.

Privacy. Every stage uses disjoint users and releases one Gaussian at the full (epsilon, delta) (parallel
composition; `appdx:JDP-verify`, `lem:DP-composition`); every release is recorded in ``fit.ledger`` with
its row range. Sensitivities are L2 (Frobenius for matrices) under replacement of one row:

- H_k: each term has Frobenius norm phi^T W phi / (1 + gamma ||W phi||) <= B ||W phi|| / (1 + gamma ||W phi||)
  < B / gamma, so the mean over N rows has sensitivity 2B/(gamma N) (the paper's Delta = B/(gamma N)).
- (B psi, vec Psi): each term is ||W phi|| / (1 + gamma ||W phi||) * (B y, phi) in norm <= sqrt(2) B / gamma,
  so the mean over n rows has sensitivity 2 sqrt(2) B / (gamma n). (The paper releases psi at Delta =
  2/(gamma T) and Psi at 2B/(gamma T) separately, each at the full budget, which composes to more than
  (epsilon, delta); weighting psi by B gives the two the same ratio of noise to sensitivity.)
- psi alone (fixed p): sensitivity 2 / (gamma T).

The noise multiplier sigma / sensitivity comes from the privacy spec only (``calibration``: the exact
analytic Gaussian, or the paper's sigma_alpha); the constants choice moves lambda and gamma, hence the
sensitivity, never the multiplier.

References
----------
Source paper, `def:FJDP`, `alg:W-JDP`, `prop:JDP-W`, `alg:JDP-linear-regression`,
`thm:JDP-linear-regression-full`, `lem:hth-JDP-property`, `lem:JDP-cb-logA`,
`alg:JDP-linear-regression-fixed-p`, `prop:JDP-linear-regression-fixed-p`, `def:Guassian-channel`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from scipy import special

from .._validation import (
    POSITIVE,
    POSITIVE_INT,
    UNIT_OPEN,
    Array,
    Options,
    ParameterConstraints,
    check_array,
    check_choice,
    check_weights,
)
from ..infomatrix import f_dp, spectral_update, w_star
from ..linalg import psd_project, psd_sqrt, solve_regularized, symmetric_part
from ..privacy import GaussianMechanism, PrivacySpec, SymmetricGaussianMechanism
from ..privacy.calibration import CALIBRATION_METHODS, release_multiplier
from .base import CONSTANTS, EpochFit, Estimate, Oracle, freeze_arrays, read_only, stage_sizes_split
from .registry import register_oracle

# Defaults of the absolute constants, per regime. "theory" follows the source (see iw_parameters);
# "practical" was calibrated on coverage (>= 95% in every cell; docs/guide/oracles.md, "Measuring them").
THEORY = dict(c_lambda=8.0, c_gamma=8.0, c_width=10.0)
PRACTICAL = dict(c_lambda=1.0, c_gamma=2.0, c_width=2.0, n_stages=3)
# IW-Regression-DP's own practical c_lambda and c_width (the rest as PRACTICAL; spectral-dp and iw-glm-dp keep
# PRACTICAL), calibrated at d = 10 (every cell covered >= 96%, with a margin; docs/guide/oracles.md).
REGRESSION_PRACTICAL = dict(c_lambda=0.7, c_width=1.5)
#: The dimension of that calibration. gamma is set from the operator norm of the stage noise (~ sqrt(d) times its
#: per-entry sd), so the noise along one direction, relative to lambda, grows like 1 / sqrt(d) as d falls: below
#: d = 10 the practical width constant is scaled by sqrt(10 / d). At d >= 10 nothing changes.
CALIBRATION_DIM = 10


def regression_practical_width(dim: int) -> float:
    """IW-Regression-DP's practical width constant in dimension ``dim``: 1.5 sqrt(max(1, 10 / dim))."""
    return REGRESSION_PRACTICAL["c_width"] * math.sqrt(max(1.0, CALIBRATION_DIM / dim))
# The fixed-p radius is a per-phi interval that is nearly tight on the spiky family, where a miss on a
# heavy atom costs a whole cell's coverage: c_width = 1.5 leaves the slack that keeps every cell >= 95%.
FIXED_P_PRACTICAL = dict(c_gamma=1.0, c_width=1.5)


@dataclass(frozen=True)
class IWParameters:
    """The resolved parameters of one IW fit.

    Attributes
    ----------
    lam, gamma : float
        lambda and gamma of F_DP.
    n_stages : int
        K, the number of spectral stages.
    c_width : float
        The width is c_width * lambda * ||W phi||.
    """

    lam: float
    gamma: float
    n_stages: int
    c_width: float


#: lambda and gamma an IW fit accepts: outside it W = F^(-1/2) (~ lambda^(-1/2)) and its products overflow.
PARAMETER_RANGE: tuple[float, float] = (1e-100, 1e100)


def iw_parameters(n_rounds: int, dim: int, bound: float, multiplier: float, *, constants: str, confidence: float,
                  w_fraction: float = 0.5, c_lambda: float | None = None, c_gamma: float | None = None,
                  c_width: float | None = None, n_stages: int | None = None, mu: float = 1.0,
                  sens_scale: float | None = None) -> IWParameters:
    """lambda, gamma, K and the width constant of an IW oracle fitted on ``n_rounds`` rows.

    ``constants="theory"`` (`thm:JDP-linear-regression-full`, `eq:JDP-linear-regression-parameters`,
    `lem:JDP-cb-logA`, `thm:JDP-L1-regression`), with sigma_alpha = 2 * multiplier (the paper's noise scale
    per unit of Delta = sensitivity/2), delta_c = ``confidence`` and T = n_rounds::

        K      = max(ceil(log log T), 4)
        lambda = c_lambda * sqrt(d log(2/delta_c) / T) / mu           (c_lambda = 8: 8 lambda dominates the
                                                                       16 sqrt(d log(2/delta_c)/T) term of
                                                                       lem:hth-JDP-property (3), so 10 lambda covers)
        gamma  = c_gamma * K * (sigma_alpha * B' * sqrt(d + log(K/delta_c)) + log(K/delta_c)) / (lambda T)
        width  = c_width * lambda * ||W phi||,  c_width = 10 (lem:JDP-cb-logA; 8 L_nu for GLMs)

    with B' = B (linear) or B + 1/mu (GLM, ``sens_scale``). The source leaves C "a large absolute constant";
    c_gamma = 8 is privbandit's reading.

    ``constants="practical"`` (calibrated on the four benchmark families, d = 10, epsilon in {0.1, 1}, as the
    oracles guide's "Measuring them" describes, ``docs/guide/oracles.md``): K = 3,
    lambda = c_lambda sqrt(d/T) / mu with c_lambda = 1, and
    gamma = c_gamma * multiplier * B' * sqrt(d) / (lambda N) with N = w_fraction T / K the stage size and
    c_gamma = 2, so the SymPriv noise of a stage has operator norm about 2 sqrt(d) * multiplier * 2B/(gamma N)
    = 2 lambda / c_gamma = lambda (H~ is then projected onto the PSD cone, so F_k >= lambda W_k); width
    constant c_width = 2. IW-Regression-DP overrides c_lambda and c_width (``REGRESSION_PRACTICAL``).
    """
    check_choice("constants", constants, CONSTANTS)
    table = THEORY if constants == "theory" else PRACTICAL
    c_lambda = table["c_lambda"] if c_lambda is None else c_lambda
    c_gamma = table["c_gamma"] if c_gamma is None else c_gamma
    c_width = table["c_width"] if c_width is None else c_width
    b_eff = bound if sens_scale is None else sens_scale
    t = max(int(n_rounds), 1)
    if constants == "theory":
        k = max(math.ceil(math.log(max(math.log(max(t, 3)), 1.0))), 4) if n_stages is None else n_stages
        lam = c_lambda * math.sqrt(dim * math.log(2.0 / confidence) / t) / mu
        log_k = math.log(k / confidence)
        gamma = c_gamma * k * (2.0 * multiplier * b_eff * math.sqrt(dim + log_k) + log_k) / (lam * t)
    else:
        k = PRACTICAL["n_stages"] if n_stages is None else n_stages
        lam = c_lambda * math.sqrt(dim / t) / mu
        # the nominal stage size, not floored at one row: in tiny epochs (t < K / w_fraction) a floor made
        # gamma too small for the regression release, whose noise then exceeded lambda and wrecked theta
        n_stage = w_fraction * t / k
        gamma = c_gamma * multiplier * b_eff * math.sqrt(dim) / (lam * n_stage)
    gamma = max(gamma, 1e-12)
    for label, value in (("lambda", lam), ("gamma", gamma)):
        if not PARAMETER_RANGE[0] <= value <= PARAMETER_RANGE[1]:
            raise ValueError(
                f"{label} = {value:g} (constants={constants!r}, c_lambda={c_lambda:g}, c_gamma={c_gamma:g}, "
                f"confidence={confidence:g}, n_rounds={n_rounds}) is outside [{PARAMETER_RANGE[0]:g}, "
                f"{PARAMETER_RANGE[1]:g}], where W ~ lambda^(-1/2) and the weights 1/(1 + gamma ||W phi||) stay "
                "finite in floating point: choose moderate c_lambda / c_gamma overrides")
    return IWParameters(lam=float(lam), gamma=float(gamma), n_stages=int(k), c_width=float(c_width))


def _op_norm(a: np.ndarray) -> float:
    return float(np.max(np.abs(np.linalg.eigvalsh(symmetric_part(a)))))


def iw_weights(wx: np.ndarray, gamma: float) -> np.ndarray:
    """The information weights 1 / (1 + gamma ||W phi||) of rows ``wx`` = (W phi_t)_t, shape (m,)."""
    sq = np.add.reduce(wx * wx, axis=1)                 # np.linalg.norm(wx, axis=1), squared
    return 1.0 / (1.0 + gamma * np.sqrt(sq))


@dataclass(frozen=True)
class _IWOracle(Oracle):
    """Shared fields of the IW oracles (documented on each oracle)."""

    privacy: PrivacySpec = field(default_factory=PrivacySpec)
    constants: str = "practical"
    confidence: float = 0.05
    calibration: str = "analytic"
    c_lambda: float | None = None
    c_gamma: float | None = None
    c_width: float | None = None
    n_stages: int | None = None
    lam: float | None = None
    gamma: float | None = None

    privacy_models: ClassVar[tuple[str, ...]] = ("jdp",)
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **Oracle.parameter_constraints, "constants": [Options(CONSTANTS)],
        "calibration": [Options(CALIBRATION_METHODS)], "confidence": [UNIT_OPEN], "c_lambda": [None, POSITIVE],
        "c_gamma": [None, POSITIVE], "c_width": [None, POSITIVE], "lam": [None, POSITIVE],
        "gamma": [None, POSITIVE], "n_stages": [None, POSITIVE_INT]}

    def multiplier(self, n_releases: int = 1) -> float:
        """sigma / sensitivity of each release when ``n_releases`` releases touch the same rows."""
        return release_multiplier(self.privacy.epsilon, self.privacy.delta, self.calibration, n_releases)

    def parameters(self, n_rounds: int, dim: int, bound: float, *, w_fraction: float = 0.5, mu: float = 1.0,
                   sens_scale: float | None = None, n_releases: int = 1, c_gamma: float | None = None,
                   c_lambda: float | None = None, c_width: float | None = None) -> IWParameters:
        """lambda, gamma, K, c_width for a fit on ``n_rounds`` rows (explicit ``lam``/``gamma`` win;
        ``c_gamma``, ``c_lambda``, ``c_width`` are subclass defaults used when the user gave none)."""
        p = iw_parameters(n_rounds, dim, bound, self.multiplier(n_releases), constants=self.constants,
                          confidence=self.confidence, w_fraction=w_fraction,
                          c_lambda=self.c_lambda if self.c_lambda is not None else c_lambda,
                          c_gamma=self.c_gamma if self.c_gamma is not None else c_gamma,
                          c_width=self.c_width if self.c_width is not None else c_width,
                          n_stages=self.n_stages, mu=mu, sens_scale=sens_scale)
        lam = p.lam if self.lam is None else float(self.lam)
        gamma = p.gamma if self.gamma is None else float(self.gamma)
        return IWParameters(lam=lam, gamma=gamma, n_stages=p.n_stages, c_width=p.c_width)


class SpectralStagesFit(EpochFit):
    """A fit whose first ``n_w_stages`` stages run the private spectral iteration of `alg:W-JDP`.

    Subclasses call :meth:`_init_spectral` in ``__init__``; a two-phase subclass (``w_fraction`` < 1) has one
    regression stage after the W stages, whose rows go to its ``_add_regression_rows(x, y)`` and whose end to its
    ``_close_regression_stage(stage)``. Per stage k the fit keeps W_k, W_k^{1/2} and the running sum of H_k:
    O(d^2) memory.
    """

    def _init_spectral(self, params: IWParameters, w_fraction: float, initial_w: np.ndarray | None = None) -> None:
        """Plan ``params.n_stages`` W stages on the first ``w_fraction`` of the rows, then (``w_fraction`` < 1)
        one regression stage on the rest; W starts at ``initial_w`` (:func:`warm_start`)."""
        self.params = params
        k = self.n_w_stages = params.n_stages
        regression = [1.0 - w_fraction] if w_fraction < 1.0 else []
        self.stage_sizes = stage_sizes_split(self.n_rounds, [w_fraction / k] * k + regression)
        self.w, self._w_half = warm_start(initial_w, self.dim)
        self._h_sum = np.zeros((self.dim, self.dim))
        self.trace: list[dict[str, float]] = []

    def _add_rows(self, stage: int, start: int, x: np.ndarray, y: np.ndarray) -> None:
        if stage >= self.n_w_stages:
            return self._add_regression_rows(x, y)
        wx = x.dot(self.w)
        half = x.dot(self._w_half)
        weights = iw_weights(wx, self.params.gamma)
        self._h_sum += (half * weights[:, None]).T.dot(half)

    def _close_stage(self, stage: int) -> None:
        if stage >= self.n_w_stages:
            return self._close_regression_stage(stage)
        start, stop = self.stage_range(stage)
        n = stop - start
        if n == 0:  # an empty stage releases nothing and leaves W unchanged
            return
        lam, gamma = self.params.lam, self.params.gamma
        sens = 2.0 * self.bound / (gamma * n)
        mech = SymmetricGaussianMechanism(sensitivity=sens, sigma=self.oracle.multiplier() * sens)
        h_noisy = self._release(mech, symmetric_part(self._h_sum / n), start, stop, f"H stage {stage}")
        # H is PSD, so projecting H~ onto the PSD cone (post-processing) only moves it closer; it keeps
        # F_k >= lambda W_k > 0, so a noisy stage can never blow W up through a near-zero eigenvalue.
        h_noisy = psd_project(h_noisy)
        f = symmetric_part(self._w_half @ h_noisy @ self._w_half + lam * self.w)
        vals = np.linalg.eigvalsh(f)
        self.trace.append(dict(stage=stage, f_min=float(vals[0]), f_max=float(vals[-1]), noise_sd=mech.sigma))
        self.w = spectral_update(self.w, f)
        self._w_half = psd_sqrt(self.w)
        self._h_sum = np.zeros((self.dim, self.dim))

    def _info(self) -> dict:
        """The Estimate's diagnostics of the W stages (public: lambda, gamma, K and the trace)."""
        p = self.params
        return dict(lam=p.lam, gamma=p.gamma, n_stages=p.n_stages, trace=list(self.trace))


# --------------------------------------------------------------------------------------------------
# Spectral-Iteration-DP


class SpectralDPFit(SpectralStagesFit):
    """All rows go to the K stages of `alg:W-JDP`."""

    oracle: SpectralDP

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        cfg = self.oracle
        self._init_spectral(cfg.parameters(self.n_rounds, self.dim, self.bound, w_fraction=1.0), 1.0)

    def _estimate(self) -> Estimate:
        return Estimate(np.zeros(self.dim), self.link, self.w, 1.0, info=self._info())


@register_oracle
@dataclass(frozen=True)
class SpectralDP(_IWOracle):
    """Spectral-Iteration-DP: learn W with F_DP(W) ~ I privately (`alg:W-JDP`); theta = 0, width matrix W.

    Parameters
    ----------
    privacy : PrivacySpec
        Joint DP budget per user (each stage's users spend it once).
    constants : {"practical", "theory"}
        Parameter regime of :func:`iw_parameters` (all rows count as W rows: w_fraction = 1).
    confidence : float
        Statistical failure probability used by the theory constants (not a privacy parameter).
    calibration : {"analytic", "paper"}
        Gaussian calibration of the noise multiplier.
    c_lambda, c_gamma, c_width, n_stages, lam, gamma : optional
        Overrides of the regime's constants, of K and of lambda and gamma.

    Notes
    -----
    SymPriv at Frobenius sensitivity 2B/(gamma N) per stage of N users (the paper's Delta = B/(gamma N)).

    References
    ----------
    Source paper, `alg:W-JDP`, `prop:JDP-W`, `prop:spec-converge-JDP`, `appdx:JDP-verify`.
    """

    name: ClassVar[str] = "spectral-dp"
    fit_class: ClassVar[type[EpochFit]] = SpectralDPFit


# --------------------------------------------------------------------------------------------------
# IW-Regression-DP


class IWRegressionDPFit(SpectralStagesFit):
    """Stages 0..K-1 learn W; stage K streams psi and Psi (O(d^2) memory)."""

    oracle: IWRegressionDP

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        cfg = self.oracle
        own = dict(REGRESSION_PRACTICAL, c_width=regression_practical_width(self.dim)) \
            if cfg.constants == "practical" else {}
        params = cfg.parameters(self.n_rounds, self.dim, self.bound, w_fraction=cfg.w_fraction, **own)
        self._init_spectral(params, cfg.w_fraction, cfg.initial_w)
        self._psi = np.zeros(self.dim)
        self._psi_mat = np.zeros((self.dim, self.dim))
        self._released: tuple[np.ndarray, np.ndarray] | None = None

    def _add_regression_rows(self, x: np.ndarray, y: np.ndarray) -> None:
        wx = x.dot(self.w)
        u = wx * iw_weights(wx, self.params.gamma)[:, None]
        self._psi += u.T.dot(y)
        self._psi_mat += u.T.dot(x)

    def _close_regression_stage(self, stage: int) -> None:
        start, stop = self.stage_range(stage)
        n = stop - start
        if n == 0:
            return
        d, b = self.dim, self.bound
        sens = 2.0 * math.sqrt(2.0) * b / (self.params.gamma * n)
        mech = GaussianMechanism(sensitivity=sens, sigma=self.oracle.multiplier() * sens)
        joint = np.concatenate([b * self._psi / n, (self._psi_mat / n).ravel()])
        out = self._release(mech, joint, start, stop, "(psi, Psi)")
        self._released = (out[:d] / b, out[d:].reshape(d, d))
        self._noise = (mech.sigma / b, mech.sigma)

    def _public_release(self) -> IWRelease:
        """What this fit released (W, psi~, Psi~) with the public parameters that go with it."""
        p, cfg = self.params, self.oracle
        n = self.stage_sizes[-1] if self._released is not None else 0
        psi, psi_mat = self._released if self._released is not None else (None, None)
        sd_psi, sd_mat = self._noise if self._released is not None else (0.0, 0.0)
        return IWRelease(weighting=self.w, psi=psi, psi_mat=psi_mat, n=int(n), lam=p.lam, gamma=p.gamma,
                         noise_sd_psi=float(sd_psi), noise_sd_Psi=float(sd_mat), n_stages=self.n_w_stages,
                         fraction=cfg.w_fraction, bound=self.bound)

    def _estimate(self) -> Estimate:
        p = self.params
        info = dict(self._info(), w=self.w.copy())
        release = self._public_release()
        if self._released is None:  # no regression users (tiny epoch): theta = 0 and the trivial radius ||phi||
            return Estimate(np.zeros(self.dim), self.link, np.eye(self.dim), 1.0 / self.link.mu,
                            info=dict(info, fallback="no regression rows"), release=release)
        psi, psi_mat = self._released
        theta = solve_regularized(psi_mat, psi, p.lam)
        info.update(noise_sd_psi=self._noise[0], noise_sd_Psi=self._noise[1])
        return Estimate(theta, self.link, self.w, p.c_width * p.lam / self.link.mu, info=info, release=release)


def check_initial_w(initial_w: Any, dim: int, name: str = "initial_w") -> np.ndarray:
    """A warm start W as a read-only float array (d, d), or a ValueError naming the argument ``name``.

    W must be symmetric positive definite (an earlier fit's released W is: ``sym(F^{-1/2} W)`` with F > 0;
    so is IW-Regression-LDP's U).
    """
    w = check_array(name, initial_w, shape=(dim, dim))
    if not np.allclose(w, w.T, rtol=1e-10, atol=1e-12 * float(np.max(np.abs(w), initial=1.0))):
        raise ValueError(f"{name} must be a symmetric positive definite (d, d) matrix; it is not symmetric")
    if not float(np.linalg.eigvalsh(symmetric_part(w))[0]) > 0:
        raise ValueError(f"{name} must be a symmetric positive definite (d, d) matrix; its smallest eigenvalue "
                         "is <= 0")
    return read_only(symmetric_part(w))


def warm_start(initial: Any, dim: int, name: str = "initial_w") -> tuple[np.ndarray, np.ndarray]:
    """The first iterate of a spectral iteration and its square root: the identity (the paper's start) when
    ``initial`` is None, else the public warm start ``initial`` (checked by :func:`check_initial_w`)."""
    if initial is None:
        return np.eye(dim), np.eye(dim)
    w = check_initial_w(initial, dim, name)
    return w, psd_sqrt(w)


@dataclass(frozen=True)
class IWRelease:
    """What one importance-weighted regression fit released, with the public parameters needed to post-process it:
    IW-Regression-DP's curator (`alg:W-JDP`, `alg:JDP-linear-regression`) or IW-Regression-LDP's server
    (`alg:U-LDP`, `alg:LDP-linear-regression`).

    An agent may compute anything from these (pooling epochs, other widths): they are the fit's releases (the
    weighting, a post-processing of its stages' releases; psi and Psi, the means of the regression users' noisy
    statistics) and public parameters fixed before the fit saw a row. Nothing here depends on raw rows otherwise.

    Attributes
    ----------
    weighting : ndarray (d, d)
        The weighting matrix the regression users' statistics used: W (joint DP) or U (local DP).
    psi, psi_mat : ndarray (d,) and (d, d), or None
        psi = mean W phi y / (1 + gamma ||W phi||) and Psi = mean W phi phi^T / (...) plus the one joint Gaussian
        (joint DP), or the means of the randomized U phi y / ||U phi|| and U phi phi^T / ||U phi|| (local DP); as
        released (Psi is not symmetrised); None when the fit had no regression users.
    n : int
        The number of regression users (rows of the means); 0 when there were none.
    lam : float
        lambda of the fit.
    noise_sd_psi, noise_sd_Psi : float
        The sd of the privacy noise of every entry of psi and of Psi (0.0 when nothing was released).
    n_stages : int
        The number of stages that learnt the weighting.
    fraction : float
        The share of the epoch's users that learnt the weighting.
    bound : float
        The feature bound B of the fit.
    gamma : float or None
        IW-Regression-DP's gamma of the weights 1 / (1 + gamma ||W phi||); None for IW-Regression-LDP, whose
        statistics are unit directions U phi / ||U phi|| times y or phi^T.

    References
    ----------
    Source paper, `alg:W-JDP`, `alg:JDP-linear-regression`, `alg:U-LDP`, `alg:LDP-linear-regression`.
    """

    weighting: np.ndarray
    psi: np.ndarray | None
    psi_mat: np.ndarray | None
    n: int
    lam: float
    noise_sd_psi: float
    noise_sd_Psi: float
    n_stages: int
    fraction: float
    bound: float
    gamma: float | None = None

    def __post_init__(self) -> None:
        freeze_arrays(self, "weighting", "psi", "psi_mat")


@dataclass(frozen=True)
class TwoPhaseIWOracle(_IWOracle):
    """The base of the two-phase IW oracles (:class:`IWRegressionDP`, :class:`~privbandit.oracles.glm_jdp.IWGLMDP`):
    the first ``w_fraction`` of an epoch's users learn W and the rest give the regression statistics."""

    w_fraction: float = 0.5

    parameter_constraints: ClassVar[ParameterConstraints] = {**_IWOracle.parameter_constraints,
                                                             "w_fraction": [UNIT_OPEN]}


@register_oracle
@dataclass(frozen=True)
class IWRegressionDP(TwoPhaseIWOracle):
    """IW-Regression-DP: private W on half the users, private (psi, Psi) on the other half.

    theta_hat = (Psi~ + lambda I)^{-1} psi~, width c * lambda * ||W phi|| (divided by mu_nu for a GLM link,
    where this linear oracle is a misspecified fit). Practical constants: ``REGRESSION_PRACTICAL``
    (c_lambda = 0.7, c_width = 1.5, calibrated at d = 10 and scaled by sqrt(10 / d) below it:
    :func:`regression_practical_width`) on top of ``PRACTICAL`` (c_gamma = 2, K = 3). An explicit ``c_width``
    is used as given.

    Parameters
    ----------
    privacy, constants, confidence, calibration, c_lambda, c_gamma, c_width, n_stages, lam, gamma
        As for :class:`SpectralDP` (the noise multiplier does not depend on ``constants``).
    w_fraction : float
        Share of the epoch's users that learn W (the paper's 1/2).
    initial_w : ndarray (d, d), optional
        A warm start: the spectral iteration starts from this symmetric positive definite W instead of
        W_1 = I (default, the paper's). It must be public, e.g. the W an earlier fit released; an agent
        passes it per epoch with ``dataclasses.replace(oracle, initial_w=...)``. With ``n_stages`` and
        ``w_fraction`` it must be fixed before the epoch's users arrive.

    Notes
    -----
    Privacy: W stages as in :class:`SpectralDP`; the regression users' (B psi, vec Psi) is ONE Gaussian at L2
    sensitivity 2 sqrt(2) B / (gamma n). Every user is in exactly one release, at the full (epsilon, delta).
    Both bounds hold for every PSD W (||W phi|| / (1 + gamma ||W phi||) < 1/gamma), so a warm start from a
    released W changes which public matrix weights the rows, not the sensitivities.

    The Estimate carries what was released, :class:`IWRelease` (``estimate.release``), so that agents can
    post-process it (e.g. pool epochs: :class:`~privbandit.agents.pooled.PooledReleases`).

    References
    ----------
    Source paper, `alg:JDP-linear-regression`, `thm:JDP-linear-regression-full`, `lem:hth-JDP-property`,
    `lem:JDP-cb-logA` (width 10 lambda ||W phi||).

    Examples
    --------
    >>> from privbandit.oracles import make_oracle
    >>> from privbandit.oracles.checks import synthetic_rows
    >>> x, y = synthetic_rows(dim=3, n=2000)          # rows with ||x|| < 1, E y = <x, theta*>

    >>> oracle = make_oracle("iw-regression-dp", epsilon=1.0, delta=1e-5)
    >>> fit = oracle.start(2000, dim=3, rng=1)        # one epoch: 2000 users, d = 3, B = 1
    >>> fit.stage_sizes                               # three stages learn W, then one regresses
    (333, 333, 333, 1001)
    >>> fit.add(x, y)
    >>> fit.result().theta.shape
    (3,)
    >>> fit.ledger.n_records, round(fit.ledger.guarantee(1e-5), 6)   # every user spent (1, 1e-5)
    (2000, 1.0)
    """

    initial_w: np.ndarray | None = field(default=None, compare=False, repr=False)

    name: ClassVar[str] = "iw-regression-dp"
    fit_class: ClassVar[type[EpochFit]] = IWRegressionDPFit
    parameter_constraints: ClassVar[ParameterConstraints] = {**TwoPhaseIWOracle.parameter_constraints,
                                                             "initial_w": [None, Array(ndim=2)]}


# --------------------------------------------------------------------------------------------------
# Distribution-specific IW-Regression-DP


class IWFixedPFit(EpochFit):
    """One stage: psi streamed with the public W."""

    oracle: IWFixedPDP

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        cfg = self.oracle
        if cfg.features.shape[1] != self.dim:
            raise ValueError(f"the oracle's distribution has dimension {cfg.features.shape[1]}, "
                             f"the fit was started with dim={self.dim}")
        self.lam, self.gamma = cfg.lam_gamma(self.n_rounds)
        self.w, self.f_residual = cfg.weighting(self.n_rounds)
        self._psi = np.zeros(self.dim)
        self._noise_sd = 0.0

    def _add_rows(self, stage: int, start: int, x: np.ndarray, y: np.ndarray) -> None:
        wx = x.dot(self.w)
        self._psi += (wx * iw_weights(wx, self.gamma)[:, None]).T.dot(y)

    def _close_stage(self, stage: int) -> None:
        start, stop = self.stage_range(stage)
        n = stop - start
        sens = 2.0 / (self.gamma * n)
        mech = GaussianMechanism(sensitivity=sens, sigma=self.oracle.multiplier() * sens)
        self._psi = self._release(mech, self._psi / n, start, stop, "psi")
        self._noise_sd = mech.sigma

    def _estimate(self) -> Estimate:
        cfg = self.oracle
        theta = self.w @ self._psi
        scale = cfg.width_scale(self.n_rounds, self.lam, self.gamma, self._noise_sd, self.f_residual,
                                float(np.linalg.eigvalsh(self.w)[0]))
        return Estimate(theta, self.link, self.w, scale / self.link.mu,
                        info=dict(lam=self.lam, gamma=self.gamma, f_residual=self.f_residual,
                                  noise_sd_psi=self._noise_sd))


@register_oracle
@dataclass(frozen=True)
class IWFixedPDP(_IWOracle):
    """Distribution-specific IW-Regression-DP: W from the known p (or public samples), theta_hat = W psi~.

    Parameters
    ----------
    privacy : PrivacySpec
        Joint DP budget per user.
    features : ndarray (n, d)
        Atoms of the known feature distribution p, or public samples from it (public: no privacy cost).
        The default, the 8 standard basis vectors with equal mass (so d = 8), is for smoke tests only:
        pass the real distribution.
    weights : ndarray (n,), optional
        Probabilities of the atoms (uniform when omitted).
    constants : {"practical", "theory"}
        ``"theory"``: lambda = 1/sqrt(T), gamma = sqrt(log(1/delta)/(epsilon^2 T)) (the algorithm's line 1) and the
        rigorous Bernstein + Gaussian radius below; ``"practical"``: the same lambda, gamma = c_gamma z / sqrt(T)
        with z the noise multiplier (c_gamma = 1 by default), and Gaussian quantiles in the radius, times
        c_width = 1.5 (calibrated with the benchmark).
    confidence : float
        Failure probability of the radius for one fixed phi (not a privacy parameter).
    norm_bound : float
        S >= ||theta*||.
    tol : float
        ||F_DP(W) - I||_op tolerance of the exact spectral iteration (the algorithm asks for
        min(lambda lambda_min(W), 1)).

    With public samples (``weights`` omitted) the residual ||F - I|| in the radius also carries the
    sample's estimated sampling error (half the distance between the F of its even and odd rows), since
    F under p itself is not available.

    Notes
    -----
    Privacy: psi has L2 sensitivity 2/(gamma T) (the paper's Delta = 1/(gamma T)); one Gaussian release.
    Width: theta_hat - theta* = W (psi~ - E psi) + (W E psi - theta*), and with F = F_DP(W),
    W E psi - theta* = W (F - I) W^{-1} theta* - lambda W theta*. For a fixed phi, Bernstein (terms bounded by
    ||W phi||/gamma, variance <= ||W phi||^2 / T since E[w w^T] <= F - lambda W <= I) and the Gaussian tail give
    |<phi, theta_hat - theta*>| <= c ||W phi|| with
    c = S (lambda + ||F - I|| / lambda_min(W)) + sqrt(2 log(4/conf) / T) + 4 log(4/conf) / (3 gamma T)
    + sigma sqrt(2 log(4/conf)) (theory), or with the Gaussian quantile q = Phi^{-1}(1 - conf/2)
    c = S (lambda + ||F - I|| / lambda_min(W)) + q sqrt(1/T + sigma^2) (practical).

    References
    ----------
    Source paper, `alg:JDP-linear-regression-fixed-p`, `prop:JDP-linear-regression-fixed-p`.
    """

    features: np.ndarray = field(default_factory=lambda: np.eye(8), compare=False, repr=False)
    weights: np.ndarray | None = field(default=None, compare=False, repr=False)
    norm_bound: float = 1.0
    tol: float = 1e-9

    name: ClassVar[str] = "iw-fixed-p-dp"
    fit_class: ClassVar[type[EpochFit]] = IWFixedPFit
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **_IWOracle.parameter_constraints, "features": [Array(ndim=2, allow_empty=False)],
        "weights": [None, Array(ndim=1)], "norm_bound": [POSITIVE], "tol": [POSITIVE]}

    def __post_init__(self) -> None:
        super().__post_init__()
        x = read_only(self.features)      # checked: a finite, non-empty 2-D array
        object.__setattr__(self, "features", x)
        if self.weights is not None:
            object.__setattr__(self, "weights", read_only(check_weights("weights", self.weights, x.shape[0])))
        object.__setattr__(self, "_cache", {})

    def lam_gamma(self, n_rounds: int) -> tuple[float, float]:
        """(lambda, gamma) for an epoch of ``n_rounds`` users."""
        t = max(n_rounds, 1)
        lam = (self.c_lambda or 1.0) / math.sqrt(t) if self.lam is None else self.lam
        if self.gamma is not None:
            return float(lam), float(self.gamma)
        if self.constants == "theory":
            gamma = (self.c_gamma or 1.0) * math.sqrt(math.log(1.0 / self.privacy.delta)
                                                       / (self.privacy.epsilon ** 2 * t))
        else:
            gamma = (self.c_gamma or FIXED_P_PRACTICAL["c_gamma"]) * self.multiplier() / math.sqrt(t)
        return float(lam), float(max(gamma, 1e-12))

    def weighting(self, n_rounds: int) -> tuple[np.ndarray, float]:
        """(W, ||F_DP(W) - I||_op) for ``n_rounds`` users (cached: it depends only on public quantities)."""
        lam, gamma = self.lam_gamma(n_rounds)
        key = (lam, gamma)
        cache = self.__dict__["_cache"]
        if key not in cache:
            res = w_star(self.features, self.weights, gamma=gamma, lam=lam, tol=self.tol, max_iter=500)
            w = res.matrix
            resid = _op_norm(f_dp(w, self.features, self.weights, gamma=gamma, lam=lam) - np.eye(w.shape[0]))
            if self.weights is None and self.features.shape[0] >= 4:
                # Public samples, not p itself: F_DP(W) under p differs from the sample's by its sampling
                # error, estimated from the two halves (each half deviates from the whole by about half
                # their difference, and the whole from p by about as much again).
                f_even = f_dp(w, self.features[0::2], gamma=gamma, lam=lam)
                f_odd = f_dp(w, self.features[1::2], gamma=gamma, lam=lam)
                resid += _op_norm(f_even - f_odd) / 2.0
            if len(cache) > 64:
                cache.clear()
            cache[key] = (w, resid)
        w, resid = cache[key]
        return w.copy(), resid

    def width_scale(self, n_rounds: int, lam: float, gamma: float, noise_sd: float, f_residual: float,
                    w_min: float) -> float:
        """The radius constant c of |<phi, theta_hat - theta*>| <= c ||W phi|| (see Notes)."""
        t = max(n_rounds, 1)
        conf = self.confidence
        bias = self.norm_bound * (lam + f_residual / max(w_min, 1e-300))
        if self.constants == "theory":
            lg = math.log(4.0 / conf)
            return bias + math.sqrt(2 * lg / t) + 4 * lg / (3 * gamma * t) + noise_sd * math.sqrt(2 * lg)
        q = float(special.ndtri(1.0 - conf / 2.0))
        return (self.c_width or FIXED_P_PRACTICAL["c_width"]) * (bias + q * math.sqrt(1.0 / t + noise_sd ** 2))
