"""Empirical privacy audits: estimate delta at a target epsilon from samples on neighbouring inputs.

A mechanism M is (epsilon, delta)-DP iff for every pair of neighbouring datasets D, D' and every set S,
P[M(D) in S] - e^epsilon P[M(D') in S] <= delta (the hockey-stick divergence). An audit runs the mechanism
many times on one chosen pair (D, D') and looks for a set S that violates this:

1. every output is reduced to one number t by a projection (the likelihood-ratio direction of a
   Gaussian mechanism, estimated as the difference of the two output means, or a test statistic the
   caller chooses);
2. on a *selection* half of the draws, the half-line S = {t > tau} or {t <= tau} (both orders D/D' and
   D'/D) with the largest lower confidence bound on the hockey-stick value is chosen;
3. on the independent *evaluation* half, the hockey-stick value of that one set is estimated with
   Clopper-Pearson intervals on both probabilities, giving a lower confidence bound ``delta_lower``.

``delta_lower > delta`` is statistical evidence (at the stated confidence) that the mechanism is *not*
(epsilon, delta)-DP; a correct mechanism fails this check with probability at most 1 - confidence.
For a Gaussian mechanism with isotropic noise the likelihood ratio is monotone in the projection on the
mean difference, so half-lines are the optimal sets and the audit loses little power. An audit can
refute a privacy claim, never prove one: it only looks at one pair (D, D') (choose the pair at the
declared sensitivity) and one family of sets.

References
----------
Source paper, `def:JDP`, `def:LDP`, `def:Guassian-channel`. Auditing by hypothesis testing: Jagielski,
Ullman & Oprea (2020); Nasr et al. (2021).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._validation import as_generator, check_int, check_real
from .spec import check_epsilon

Sampler = Callable[[int, np.random.Generator], np.ndarray]
"""``run(n, rng) -> outputs (n, ...)``: n independent runs of the mechanism on one fixed dataset."""

Projection = Callable[[np.ndarray], np.ndarray]
"""``project(outputs (n, ...)) -> (n,)``: a fixed 1-D test statistic of the outputs."""


@dataclass(frozen=True)
class AuditResult:
    """The outcome of :func:`audit_delta`.

    Attributes
    ----------
    epsilon : float
        The target epsilon.
    delta_hat : float
        Plug-in hockey-stick value of the chosen set on the evaluation half (clipped at 0).
    delta_lower, delta_upper : float
        One-sided lower and upper confidence bounds, each at level ``confidence``, on that set's
        hockey-stick value (Clopper-Pearson on both probabilities, Bonferroni-combined). ``delta_lower``
        is therefore also a lower confidence bound on the mechanism's true delta(epsilon); it may be
        negative (no evidence of any leak).
    confidence : float
        Confidence level of each bound.
    n_draws : int
        Draws per dataset (half of them select the set, half evaluate it).
    threshold : float
        The chosen tau.
    side : {"above", "below"}
        S = {t > tau} or {t <= tau}.
    order : {"D,D'", "D',D"}
        Which dataset plays P in P(S) - e^eps Q(S).

    References
    ----------
    Source paper, `def:JDP`, `def:LDP` (the (epsilon, delta) inequality being tested).
    """

    epsilon: float
    delta_hat: float
    delta_lower: float
    delta_upper: float
    confidence: float
    n_draws: int
    threshold: float
    side: str
    order: str

    def violates(self, delta: float) -> bool:
        """Whether the audit refutes (epsilon, delta)-DP at its confidence: ``delta_lower > delta``."""
        return bool(self.delta_lower > delta)


def clopper_pearson(k: np.ndarray, n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper-Pearson bounds at level ``1 - alpha`` each for k successes in n trials.

    Returns
    -------
    lower, upper : ndarray
        P[p < lower] <= alpha and P[p > upper] <= alpha.

    References
    ----------
    Clopper & Pearson (1934); used by :func:`audit_delta` to bound the probabilities in `def:JDP`.
    """
    # imported here, not at the top: scipy.stats costs ~1 s and `import privbandit` needs none of it
    from scipy import stats

    k = np.asarray(k, dtype=float)
    lower = np.where(k > 0, stats.beta.ppf(alpha, np.maximum(k, 1e-300), n - k + 1), 0.0)
    upper = np.where(k < n, stats.beta.ppf(1 - alpha, k + 1, np.maximum(n - k, 1e-300)), 1.0)
    return lower, upper


def _flatten(outputs: np.ndarray, n: int, name: str) -> np.ndarray:
    out = np.asarray(outputs, dtype=float)
    if out.ndim == 0 or out.shape[0] != n:
        raise ValueError(f"{name} must return an array with one row per draw (n={n}), got shape {out.shape}")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} returned NaN or inf")
    return out.reshape(n, -1)


def _counts_above(sorted_t: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    return sorted_t.size - np.searchsorted(sorted_t, thresholds, side="right")


def audit_delta(run_d: Sampler, run_d_prime: Sampler, epsilon: float, *, n_draws: int = 100_000,
                rng=None, project: Projection | np.ndarray | None = None, confidence: float = 0.95,
                n_thresholds: int = 256) -> AuditResult:
    """Estimate delta(epsilon) of a mechanism on one neighbouring pair, with a confidence interval.

    Parameters
    ----------
    run_d, run_d_prime : callable
        ``run(n, rng) -> outputs (n, ...)``: n independent releases of the mechanism on D and on D'.
        Vectorise them: the audit calls each once with ``n = n_draws``.
    epsilon : float
        The target epsilon, > 0.
    n_draws : int
        Draws per dataset (>= 1000; use >= 1e5 to see deltas of order 1e-3).
    rng : seed or numpy Generator
        The only randomness; two independent streams are spawned for D and D'.
    project : None, callable or ndarray
        The 1-D statistic. ``None``: the raw output if it is a scalar, else the projection on the
        difference of the two output means estimated on the selection half (the likelihood-ratio
        direction of a Gaussian mechanism with isotropic noise). A callable maps outputs (n, ...) to
        (n,); an array is a fixed direction for the flattened outputs.
    confidence : float
        Confidence level in (0, 1) of each reported bound.
    n_thresholds : int
        Number of candidate thresholds (quantiles of the pooled selection statistics).

    Returns
    -------
    AuditResult

    References
    ----------
    Source paper, `def:JDP`, `def:LDP`, `def:Guassian-channel`.
    """
    epsilon = check_epsilon(epsilon)
    n_draws = check_int("n_draws", n_draws, low=1000)
    confidence = check_real("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    n_thresholds = check_int("n_thresholds", n_thresholds, low=2)
    rng_p, rng_q = as_generator(rng).spawn(2)
    raw_p = np.asarray(run_d(n_draws, rng_p))
    raw_q = np.asarray(run_d_prime(n_draws, rng_q))
    half = n_draws // 2
    t_p, t_q = _statistic(raw_p, raw_q, n_draws, half, project)
    alpha = (1.0 - confidence) / 2.0  # Bonferroni over the two probabilities
    e_eps = math.exp(epsilon)
    tau, side, order = _select_set(t_p[:half], t_q[:half], e_eps, alpha, n_thresholds)
    delta_hat, delta_lower, delta_upper = _evaluate_set(t_p[half:], t_q[half:], tau, side, order, e_eps, alpha)
    return AuditResult(
        epsilon=epsilon,
        delta_hat=delta_hat,
        delta_lower=delta_lower,
        delta_upper=delta_upper,
        confidence=confidence,
        n_draws=n_draws,
        threshold=tau,
        side=side,
        order=order,
    )


def _statistic(raw_p: np.ndarray, raw_q: np.ndarray, n_draws: int, half: int,
               project: Projection | np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Step 1 of :func:`audit_delta`: reduce every output to one number t (see its ``project``).

    The default direction (the difference of the two output means) is estimated on the selection half,
    the first ``half`` draws, only.
    """
    out_p = _flatten(raw_p, n_draws, "run_d")
    out_q = _flatten(raw_q, n_draws, "run_d_prime")
    if out_p.shape != out_q.shape:
        raise ValueError(f"run_d and run_d_prime must return outputs of the same shape, got {raw_p.shape} "
                         f"and {raw_q.shape}")
    if callable(project):
        t_p = np.asarray(project(raw_p), dtype=float).reshape(-1)
        t_q = np.asarray(project(raw_q), dtype=float).reshape(-1)
        if t_p.shape != (n_draws,) or t_q.shape != (n_draws,):
            raise ValueError(f"project must return one number per draw, got shapes {t_p.shape}, {t_q.shape}")
        return t_p, t_q
    if project is not None:
        direction = np.asarray(project, dtype=float).reshape(-1)
        if direction.shape != (out_p.shape[1],):
            raise ValueError(f"project must have {out_p.shape[1]} entries (the flattened output), got "
                             f"{direction.shape}")
    elif out_p.shape[1] == 1:
        direction = np.ones(1)
    else:
        direction = out_p[:half].mean(axis=0) - out_q[:half].mean(axis=0)
        if not np.any(direction):
            direction = np.eye(out_p.shape[1])[0]
    return out_p @ direction, out_q @ direction


def _select_set(t_p: np.ndarray, t_q: np.ndarray, e_eps: float, alpha: float,
                n_thresholds: int) -> tuple[float, str, str]:
    """Step 2 of :func:`audit_delta`, on the selection half: the half-line (either side, either order)
    with the best lower bound on the hockey-stick value. Returns (tau, side, order)."""
    half = t_p.size
    sp, sq = np.sort(t_p), np.sort(t_q)
    thresholds = np.unique(np.quantile(np.concatenate([sp, sq]), np.linspace(0.0, 1.0, n_thresholds)))
    above_p, above_q = _counts_above(sp, thresholds), _counts_above(sq, thresholds)
    cand = {  # (side, order): (counts of the P set, counts of the Q set)
        ("above", "D,D'"): (above_p, above_q),
        ("below", "D,D'"): (half - above_p, half - above_q),
        ("above", "D',D"): (above_q, above_p),
        ("below", "D',D"): (half - above_q, half - above_p),
    }
    best = (-math.inf, 0.0, "above", "D,D'")
    for (side, order), (k_a, k_b) in cand.items():
        lo_a, _ = clopper_pearson(k_a, half, alpha)
        _, up_b = clopper_pearson(k_b, half, alpha)
        score = lo_a - e_eps * up_b
        i = int(np.argmax(score))
        if score[i] > best[0]:
            best = (float(score[i]), float(thresholds[i]), side, order)
    return best[1], best[2], best[3]


def _evaluate_set(t_p: np.ndarray, t_q: np.ndarray, tau: float, side: str, order: str, e_eps: float,
                  alpha: float) -> tuple[float, float, float]:
    """Step 3 of :func:`audit_delta`, on the evaluation half: the chosen set's hockey-stick value with
    Clopper-Pearson intervals. Returns (delta_hat, delta_lower, delta_upper)."""
    n_ev = t_p.size
    in_p = np.count_nonzero(t_p > tau) if side == "above" else np.count_nonzero(t_p <= tau)
    in_q = np.count_nonzero(t_q > tau) if side == "above" else np.count_nonzero(t_q <= tau)
    k_a, k_b = (in_p, in_q) if order == "D,D'" else (in_q, in_p)
    lo_a, up_a = clopper_pearson(k_a, n_ev, alpha)
    lo_b, up_b = clopper_pearson(k_b, n_ev, alpha)
    return (float(max(0.0, k_a / n_ev - e_eps * k_b / n_ev)), float(lo_a - e_eps * up_b),
            float(max(0.0, up_a - e_eps * lo_b)))
