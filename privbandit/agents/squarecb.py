"""SquareCB with an offline regression oracle per epoch: inverse-gap weighting (`alg:square-cb`).

The algorithm in words. Epochs follow the doubling schedule. Epoch j plays with the estimate f_j
fitted on epoch j-1's data (f_0 = 0): for a context x let a_hat = argmax_a f_j(x, a) and

    p(a) = 1 / (K + gamma_j (f_j(x, a_hat) - f_j(x, a)))   for a != a_hat,   p(a_hat) = 1 - sum_{a != a_hat} p(a).

(The source prints f(x_t, a_t) - f(x_t, a) in the denominator; a_t is the action being sampled, so
the gap to the greedy action a_hat_t is meant, as in Foster & Rakhlin 2020.) This is exactly Vowpal
Wabbit's ``--squarecb`` rule (cb_explore_adf_squarecb: costs = -rewards, the greedy action is the first
index of the lowest cost, pmf = 1/(K + gamma (cost_a - min cost)), the rest on the greedy action).

The learning rate. `thm:square-cb` takes gamma_0 = 1 and gamma_j = sqrt(K) / E_{delta'}(N_{j-1}) with
E the oracle's L2 rate on the N_{j-1} rows that produced f_j and delta' = delta_conf / (2 J^2):

- DP-SGD (`alg:JDP-improper-GD`, joint DP):
  E(N) = (log N log(1/delta') / N)^{1/4} + (sigma_alpha log(1/delta') / N)^{1/3};
- LDP clipped SGD (`alg:LDP-improper-GD`): E(N) = (sigma_alpha^2 log(N/delta') / N)^{1/6};
- a non-private oracle: E(N) = sqrt(d / N) (least squares);
- IW-Regression-DP (`alg:JDP-linear-regression`, joint DP): E(N) = sqrt(d (1 + gamma_N B / lambda_N) log(1/delta') / N)
  with the fit's own lambda_N, gamma_N (public functions of N, d, B and the budget; :func:`iw_l2_rate`);

with sigma_alpha = 4 sqrt(log(2.5/delta)) / epsilon. ``gamma_scale`` multiplies this (the rates hold
up to constants). ``gamma_schedule="vw"`` instead uses VW's gamma = gamma_scale * t^gamma_exponent
with t the number of rounds seen before the epoch (VW defaults 10 and 1/2).

``gamma_schedule="calibrated"`` keeps the theorem's form gamma_j = gamma_scale sqrt(K / err_j) with err_j the
oracle's mean squared error calibrated on measurements (:func:`calibrated_error`; the agents guide,
``docs/guide/agents.md``, "SquareCB") instead of the theorem's (1 - delta') rate, which with constants 1 is far
above the measured error and keeps gamma near uniform play. err_j reads only public values: the epoch's size,
d, K, B, the budget, and the fit's lambda and gamma (IW-Regression-DP), fixed before it saw a row. The registered
``squarecb-jdp-iw-cal`` uses it with ``gamma_scale`` = :data:`CALIBRATED_GAMMA_SCALE`; the other agents take it
as keyword arguments, e.g. ``make_agent("squarecb-dpsgd", epsilon=1.0, gamma_schedule="calibrated", gamma_scale=30.0)``.

Privacy: the agent sees data only through the oracle fits (one per epoch, disjoint users), so it is
JDP (LDP) when the oracle is DP (LDP).

References
----------
Source paper, `alg:square-cb`, `thm:square-cb`, `appdx:square-cb`, `thm:regret-dim-free`;
Foster & Rakhlin (2020); Simchi-Levi & Xu (2020); Vowpal Wabbit ``cb_explore_adf_squarecb``.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable, Sequence
from typing import ClassVar, NamedTuple

import numpy as np

from .._validation import POSITIVE, UNIT_OPEN, Interval, IsCallable, Options, ParameterConstraints, check_positive
from ..oracles.base import Estimate
from ..privacy.calibration import paper_sigma_alpha
from ._oracle_arg import register_variant
from .policy import PolicyAgent

__all__ = ["CALIBRATED_ERROR_CONSTANTS", "CALIBRATED_GAMMA_SCALE", "GAMMA_SCHEDULES", "IW_RATE_ORACLES",
           "SquareCBAgent", "calibrated_error", "inverse_gap_weighting", "iw_l2_rate", "l2_rate"]

GAMMA_SCHEDULES = ("paper", "vw", "calibrated")
IW_RATE_ORACLES = ("iw-regression-dp",)
"""Oracles whose paper-schedule rate is :func:`iw_l2_rate` (from the fit's lambda and gamma), not :func:`l2_rate`."""


def inverse_gap_weighting(predictions: np.ndarray, gamma: float | np.ndarray) -> np.ndarray:
    """SquareCB's action distribution for predicted rewards (m, K), exactly as VW's ``--squarecb``.

    Parameters
    ----------
    predictions : ndarray (m, K)
        Predicted rewards f(x, a).
    gamma : float or ndarray (m,)
        Learning rate gamma >= 0.

    Returns
    -------
    ndarray (m, K)
        p(a) = 1/(K + gamma (f(a_hat) - f(a))) for a != a_hat, the rest on a_hat, where a_hat is the
        lowest index among the maximisers.

    References
    ----------
    Source paper, `alg:square-cb`; Foster & Rakhlin (2020), eq. (IGW).
    """
    f = np.asarray(predictions, dtype=float)
    if f.ndim != 2:
        raise ValueError(f"predictions must have shape (m, K), got {f.shape}")
    g = np.asarray(gamma, dtype=float)
    if np.any(~np.isfinite(g)) or np.any(g < 0):
        raise ValueError(f"gamma must be finite and >= 0, got {gamma!r}")
    return _igw(f, g)


def _igw(f: np.ndarray, g: float | np.ndarray) -> np.ndarray:
    """:func:`inverse_gap_weighting` for checked input: float predictions (m, K), finite gamma >= 0."""
    m, k = f.shape
    best = np.argmax(f, axis=1)
    gap = f[np.arange(m), best][:, None] - f
    p = 1.0 / (k + np.reshape(g, (-1, 1)) * gap)
    p[np.arange(m), best] = 0.0
    p[np.arange(m), best] = 1.0 - p.sum(axis=1)
    return p


def l2_rate(model: str, n: int, *, dim: int, epsilon: float = 1.0, delta: float = 1e-5,
            confidence: float = 0.05) -> float:
    """The oracle's L2 error rate E_delta'(N) used by `thm:square-cb` (constants 1).

    Parameters
    ----------
    model : {"none", "jdp", "ldp"}
        The oracle's privacy model (DP-SGD for "jdp", LDP clipped SGD for "ldp", least squares otherwise).
    n : int
        Rows that produced the estimate.
    dim : int
        Feature dimension (used by the non-private rate only).
    epsilon, delta : float
        The privacy budget (sigma_alpha = 4 sqrt(log(2.5/delta))/epsilon).
    confidence : float
        delta' in the rate (the statistical failure probability, never the privacy delta).

    References
    ----------
    Source paper, `appdx:square-cb` (proofs of `thm:regret-dim-free` (1) and (2)).
    """
    n = max(int(n), 2)
    if model == "none":
        return math.sqrt(dim / n)
    sig = paper_sigma_alpha(epsilon, delta)
    if model == "jdp":
        return (math.log(n) * math.log(1 / confidence) / n) ** 0.25 + (sig * math.log(1 / confidence) / n) ** (1 / 3)
    if model == "ldp":
        return (sig ** 2 * math.log(n / confidence) / n) ** (1 / 6)
    raise ValueError(f"model must be one of ('none', 'jdp', 'ldp'), got {model!r}")


def iw_l2_rate(n: int, *, dim: int, lam: float, gamma: float, bound: float = 1.0, confidence: float = 0.05) -> float:
    """IW-Regression-DP's L2 error rate E_delta'(N) for `thm:square-cb` (constants 1).

    ``thm:JDP-linear-regression-full`` (1) bounds the squared loss by (log(1/delta')/N) ||Sigma^{1/2} W*||_F^2, and
    ||Sigma^{1/2} W*||_F^2 = E||W* phi||^2 <= d (1 + gamma B / lambda): F_DP(W*) = I (`def:FJDP`) gives
    E[||W* phi||^2 / (1 + gamma ||W* phi||)] = tr(I - lambda W*) <= d and lambda W* <= I, so ||W* phi|| <= B / lambda.
    Hence E(N) = sqrt(d (1 + gamma B / lambda) log(1/delta') / N).

    Parameters
    ----------
    n, dim, confidence
        As for :func:`l2_rate`.
    lam, gamma : float
        lambda and gamma of that fit (> 0; the oracle's ``Estimate.info``).
    bound : float
        B, the bound on ||phi||.

    References
    ----------
    Source paper, `thm:JDP-linear-regression-full` (1), `def:FJDP`, `asmp:L2-regression`, `thm:square-cb`.
    """
    n = max(int(n), 2)
    lam = check_positive("lam", lam)
    gamma = check_positive("gamma", gamma)
    return math.sqrt(dim * (1.0 + gamma * bound / lam) * math.log(1 / confidence) / n)


CALIBRATED_ERROR_CONSTANTS: dict[str, float] = {"iw": 0.25, "jdp": 0.15, "ldp": 2.5, "none": 2.0}
"""c of :func:`calibrated_error` per rate ("iw": :func:`iw_l2_rate`, else the :func:`l2_rate` model): the largest
measured error / E0^2 over rare-direction, heavy-tailed and spiky (d = K = 10, epsilon 1, N = 2^12..2^16 rows
of uniform play, 2 seeds each), rounded up (``python scripts/bench_squarecb.py --errors --seeds 2``)."""

CALIBRATED_GAMMA_SCALE: float = 30.0
"""gamma_scale of the registered calibrated agents, tuned on regret on rare-direction, heavy-tailed and spiky
at T = 2^18, 6 seeds, among 10, 30 and 100 (``python scripts/bench_squarecb.py --scales 10,100``)."""


def calibrated_error(kind: str, n: int, *, dim: int, epsilon: float = 1.0, delta: float = 1e-5,
                     lam: float | None = None, gamma: float | None = None, bound: float = 1.0) -> float:
    """The calibrated mean squared error c * E0(N)^2 of an oracle's fit on N rows (public quantities only).

    E0 is the rate of :func:`l2_rate` (``kind`` "none", "jdp", "ldp") or :func:`iw_l2_rate` (``kind`` "iw",
    with the fit's ``lam`` and ``gamma``) without the union-bound factor log(1/delta'), and c is
    :data:`CALIBRATED_ERROR_CONSTANTS` [kind].

    Parameters
    ----------
    kind : {"iw", "jdp", "ldp", "none"}
        Which rate.
    n, dim, epsilon, delta
        As for :func:`l2_rate`.
    lam, gamma, bound : float
        As for :func:`iw_l2_rate` (``kind="iw"`` only; public functions of N, d, B and the budget).

    References
    ----------
    Source paper, `thm:square-cb`, `appdx:square-cb`, `thm:JDP-linear-regression-full`.
    """
    if kind not in CALIBRATED_ERROR_CONSTANTS:
        raise ValueError(f"kind must be one of {tuple(CALIBRATED_ERROR_CONSTANTS)}, got {kind!r}")
    e = 1.0 / math.e     # log(1/confidence) = 1: the rate without its union-bound factor
    if kind == "iw":
        if lam is None or gamma is None:
            raise ValueError("kind='iw' needs the fit's lam and gamma")
        rate = iw_l2_rate(n, dim=dim, lam=lam, gamma=gamma, bound=bound, confidence=e)
    elif kind == "ldp":    # the LDP rate's log(N / delta') keeps its log N
        n = max(int(n), 2)
        rate = (paper_sigma_alpha(epsilon, delta) ** 2 * math.log(n) / n) ** (1 / 6)
    else:
        rate = l2_rate(kind, n, dim=dim, epsilon=epsilon, delta=delta, confidence=e)
    return CALIBRATED_ERROR_CONSTANTS[kind] * rate ** 2


class IGWLaw(NamedTuple):
    """What SquareCB's policy plays on: the latest release and the epoch's gamma."""

    estimate: Estimate
    gamma: float


class SquareCBAgent(PolicyAgent):
    """SquareCB: inverse-gap weighting around the latest epoch's regression estimate.

    Parameters
    ----------
    oracle : Oracle or str
        The regression oracle (instance or registered name, e.g. ``"dp-sgd"``, ``"ldp-sgd"``, ``"ridge"``,
        ``"iw-regression-dp"``).
    epsilon, delta, model, oracle_kwargs :
        Privacy budget, model and hyperparameters when the oracle is given by name.
    gamma_schedule : {"paper", "vw", "calibrated"}
        `thm:square-cb`'s gamma_j = gamma_scale sqrt(K) / E(N_{j-1}), VW's gamma_scale t^gamma_exponent, or
        gamma_scale sqrt(K / err_j) with err_j the oracle's calibrated error (:func:`calibrated_error`).
    gamma_scale : float
        Multiplier of gamma (> 0).
    gamma_exponent : float
        Exponent of VW's schedule (in [0, 1]).
    confidence : float
        delta_conf of `thm:square-cb` (statistical failure probability, in (0, 1)); delta' = delta_conf/(2 J^2).
    rate : callable, optional
        ``rate(n, dim) -> E(n)`` replacing the oracle's rate for the paper schedule (e.g. a calibrated rate).
        Without it: :func:`iw_l2_rate` for the oracles in :data:`IW_RATE_ORACLES`, :func:`l2_rate` otherwise.
    first_epoch, growth : int, float
        The epoch schedule (default the paper's doubling).

    Attributes
    ----------
    estimate : IGWLaw or None
        What the policy plays on: the latest release and gamma_j, from public values (the schedule, the
        budget, the fit's lambda and gamma); None (uniform play) before the first release.

    References
    ----------
    Source paper, `alg:square-cb`, `thm:square-cb`.
    """

    name: ClassVar[str] = "squarecb"
    default_oracle: ClassVar[str] = "ridge"
    privacy_model: ClassVar[str | None] = None     # the oracle's (the registered variants declare it)
    parameter_constraints: ClassVar[ParameterConstraints] = {
        "gamma_schedule": [Options(GAMMA_SCHEDULES)], "gamma_scale": [POSITIVE],
        "gamma_exponent": [Interval(numbers.Real, 0.0, 1.0)], "confidence": [UNIT_OPEN],
        "rate": [None, IsCallable("rate(n, dim) -> float")]}
    gamma_schedule: str = "paper"
    gamma_scale: float = 1.0
    gamma_exponent: float = 0.5
    confidence: float = 0.05
    rate: Callable[[int, int], float] | None = None

    @property
    def gamma(self) -> float | None:
        """gamma_j of the current epoch (None before the first release: uniform play)."""
        return None if self.estimate is None else self.estimate.gamma

    def combine(self, estimates: Sequence[Estimate]) -> IGWLaw | None:
        """The latest release and its gamma_j (`thm:square-cb`), from public values only."""
        if not estimates:
            return None
        spec, j, estimate = self._require_spec(), len(estimates) - 1, estimates[-1]
        end = int(self.epoch_ends[j])
        if self.gamma_schedule == "vw":
            return IGWLaw(estimate, self.gamma_scale * float(end) ** self.gamma_exponent)
        n = end - (int(self.epoch_ends[j - 1]) if j else 0)      # the epoch's rows (public)
        conf = self.confidence / (2 * len(self.epoch_ends) ** 2)
        if self.gamma_schedule == "calibrated":
            err = self._calibrated_error(n, estimate)
        elif self.rate is not None:
            err = float(self.rate(n, spec.dim))
        elif self.oracle.name in IW_RATE_ORACLES:
            err = iw_l2_rate(n, dim=spec.dim, lam=estimate.info["lam"], gamma=estimate.info["gamma"],
                             bound=spec.bound, confidence=conf)
        else:
            p = self.privacy     # (the non-private rate reads neither epsilon nor delta)
            err = l2_rate(p.model, n, dim=spec.dim, epsilon=p.epsilon, delta=p.delta, confidence=conf)
        if not (err > 0 and math.isfinite(err)):
            raise ValueError(f"the L2 rate must be finite and > 0, got {err!r}")
        if self.gamma_schedule == "calibrated":     # err is a squared error
            err = math.sqrt(err)
        gamma = self.gamma_scale * math.sqrt(spec.n_arms) / err
        if not math.isfinite(gamma):
            raise ValueError(f"gamma must be finite and >= 0, got {gamma!r} (the L2 rate {err!r} is too small)")
        return IGWLaw(estimate, gamma)

    def _calibrated_error(self, n: int, estimate: Estimate) -> float:
        """:func:`calibrated_error` of this epoch's fit: public sizes, budget and the fit's lambda, gamma."""
        spec, p = self._require_spec(), self.privacy
        if self.oracle.name in IW_RATE_ORACLES:
            return calibrated_error("iw", n, dim=spec.dim, lam=estimate.info["lam"], gamma=estimate.info["gamma"],
                                    bound=spec.bound)
        return calibrated_error(p.model, n, dim=spec.dim, epsilon=p.epsilon, delta=p.delta)   # model "none": no budget

    def policy(self, features: np.ndarray, estimate: IGWLaw) -> np.ndarray:
        """Inverse-gap weighting with gamma_j around the predictions nu(<phi, theta>) of the latest release."""
        latest = estimate.estimate     # (on features the agent has checked: Estimate.mean would check them again)
        return _igw(latest.link(features @ latest.theta), estimate.gamma)


_factory = functools.partial(register_variant, SquareCBAgent)   # (name, oracle name, model, description, ...)


CALIBRATED = dict(gamma_schedule="calibrated", gamma_scale=CALIBRATED_GAMMA_SCALE)

_factory("squarecb-nonprivate", "ridge", "none", "SquareCB with non-private ridge (alg:square-cb, reference)",
         counterpart="squarecb-dpsgd")
_factory("squarecb-dpsgd", "dp-sgd", "jdp", "joint-DP SquareCB with DP-SGD (alg:square-cb, alg:JDP-improper-GD)")
_factory("squarecb-jdp-iw", "iw-regression-dp", "jdp",
         "joint-DP SquareCB with IW-Regression-DP (alg:square-cb, alg:JDP-linear-regression, alg:W-JDP)")
_factory("squarecb-ldp-sgd", "ldp-sgd", "ldp",
         "local-DP SquareCB with LDP clipped SGD (alg:square-cb, alg:LDP-improper-GD)")
_factory("squarecb-jdp-iw-cal", "iw-regression-dp", "jdp",
         "joint-DP SquareCB with IW-Regression-DP, gamma from the oracle's calibrated error (alg:square-cb)",
         **CALIBRATED)
