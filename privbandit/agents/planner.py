"""The planner of action elimination (`alg:plan`): stacked releases, bounds, elimination tests, survivors.

For a batch of contexts x and the released estimates (f_tau, b_tau) of the past epochs tau, in order,
A_0 = A and

    A_tau = {a in A_{tau-1} : f_tau(x, a) + b_tau(x, a) >= max_{a' in A} (f_tau(x, a') - b_tau(x, a'))}.

The estimates are stacked once per epoch (:class:`EstimateStack`: one (mK, d) x (d, J (d + 1)) product gives
every epoch's mean and radius), all epochs' tests run in one vectorised pass (contexts whose tests conflict
are replayed epoch by epoch), and estimates whose test provably keeps every arm (:func:`can_eliminate`)
may be skipped. The agents of :mod:`.elimination` play on the survivors.

References
----------
Source paper, `alg:plan`, `eq:eliminate`, `alg:batch-cb-JDP`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ..oracles.base import Estimate

__all__ = ["ELIMINATION_TOLERANCE", "EstimateStack", "best_arms", "can_eliminate", "eliminate_all",
           "stack_estimates", "stacked_bounds", "stacked_survivors", "surviving_actions", "uniform_over"]

_FEW = 256            # arrays this small take numpy's reductions (one call) instead of one pass per arm
_TIE = 1e-12          # scores this close to the best are ties (broken by the agent's uniform)
ELIMINATION_TOLERANCE = 1e-12   # slack of the elimination test (surviving_actions' default)


@dataclasses.dataclass(frozen=True)
class EstimateStack:
    """Released estimates stacked for the batch planner (built once per epoch: they are fixed within one).

    ``basis`` is [theta_1 ... theta_J | M_1^T ... M_J^T] (d, J (d + 1)), so one (mK, d) x (d, J (d + 1))
    product gives every epoch's predictor <phi, theta_tau> and M_tau phi; ``scale`` (J, 1) holds L_nu c_tau.
    """

    estimates: tuple[Estimate, ...]
    basis: np.ndarray
    scale: np.ndarray
    identity: bool          # every link is the identity (the predictor is the mean)


def stack_estimates(estimates: Sequence[Estimate]) -> EstimateStack:
    """Stack released estimates (at least one) for :func:`_bounds`."""
    ests = tuple(estimates)
    basis = np.concatenate([np.stack([e.theta for e in ests], axis=1)] + [e.width_matrix.T for e in ests], axis=1)
    scale = np.array([e.link.lipschitz * e.width_scale for e in ests])[:, None]
    return EstimateStack(ests, basis, scale, all(e.link.is_identity for e in ests))


def stacked_bounds(stack: EstimateStack, x: np.ndarray, width_cap: float) -> tuple[np.ndarray, np.ndarray]:
    """Every stacked epoch's mean and capped radius, (J, m, K) each, for features ``x`` (m, K, d)."""
    m, k, d = x.shape
    n, n_est = m * k, len(stack.estimates)
    proj = x.reshape(n, d) @ stack.basis
    mphi = proj[:, n_est:].reshape(n, n_est, d)
    width = np.einsum("njd,njd->jn", mphi, mphi)         # ||M phi||^2, then in place: min(L c ||M phi||, cap)
    np.sqrt(width, out=width)
    np.multiply(stack.scale, width, out=width)
    np.minimum(width, width_cap, out=width)
    if stack.identity:              # the identity link returns its argument: one C-ordered copy of the view
        mean = np.ascontiguousarray(proj[:, :n_est].T)
    else:
        mean = np.stack([e.link(proj[:, j]) for j, e in enumerate(stack.estimates)])
    return mean.reshape(n_est, m, k), width.reshape(n_est, m, k)


def _row_reduce(ufunc: np.ufunc, values: np.ndarray) -> np.ndarray:
    """``ufunc.reduce`` over the last (short, arms) axis of ``values`` (..., K), one elementwise pass per arm.

    Equal to numpy's reduction (a maximum, an or, is exact), without its per-row overhead (for few rows one
    reduction costs less than K passes).
    """
    if values.size <= _FEW:
        return ufunc.reduce(values, axis=-1)
    out = values[..., 0].copy()
    for a in range(1, values.shape[-1]):
        ufunc(out, values[..., a], out=out)
    return out


def eliminate_all(alive: np.ndarray, mean: np.ndarray, width: np.ndarray, upper: np.ndarray, tolerance: float,
                   index: np.ndarray | slice | None = None) -> np.ndarray:
    """The tests `eq:eliminate` of J epochs in order on the survivors ``alive`` (m, K), vectorised over epochs.

    ``mean``, ``width`` and ``upper`` = mean + width (J, m, K) are the epochs' bounds; ``index`` (default
    all) selects, in order, the epochs whose tests run. Epoch tau's test keeps the arms a with
    upper_tau(a) >= max_a' (mean_tau(a') - width_tau(a')) - tolerance, unless that would keep none of the
    survivors, in which case the test is skipped for that context.

    When the conjunction of all J tests keeps an arm of a context, no test emptied that context's set on
    the way (every prefix keeps a superset), so the sequential result is the conjunction. Contexts it
    empties (only possible when some confidence interval failed) are replayed in order, skipping a test
    that would remove every survivor, exactly as the sequential loop does.
    """
    if index is not None:               # only the selected epochs' tests are computed
        mean, width, upper = mean[index], width[index], upper[index]
    passed = upper >= (_row_reduce(np.maximum, mean - width) - tolerance)[..., None]
    if passed.shape[0] == 0:
        return alive
    kept = alive & np.logical_and.reduce(passed, axis=0)
    empty = ~_row_reduce(np.logical_or, kept)
    if empty.any():
        rows = np.flatnonzero(empty)
        sub = alive[rows]
        for test in passed[:, rows]:
            nxt = sub & test
            sub = np.where(nxt.any(axis=1, keepdims=True), nxt, sub)
        kept[rows] = sub
    return kept


def surviving_actions(estimates: Sequence[Estimate], features: np.ndarray, *, width_cap: float = 2.0,
                      tolerance: float = ELIMINATION_TOLERANCE) -> np.ndarray:
    """The planner's elimination (`alg:plan`, eq. `eq:eliminate`) for a batch of contexts.

    Parameters
    ----------
    estimates : sequence of Estimate
        (f_tau, b_tau) of the past epochs, in order.
    features : ndarray (m, K, d)
        phi(x, a) of m contexts.
    width_cap : float
        b_tau is capped at this value (2 in `alg:batch-cb-JDP`: with rewards in [-1, 1] a larger
        radius carries no information).
    tolerance : float
        Slack on the comparison (floating-point ties never eliminate an arm).

    Returns
    -------
    ndarray of bool (m, K)
        The survivors A_{j-1}(x) of every context, never empty: when the intervals are valid the
        optimal arm always survives; when an epoch's test would remove every survivor (possible only
        if some confidence interval failed) that epoch is skipped for that context.

    References
    ----------
    Source paper, `alg:plan`, `eq:eliminate`.
    """
    x = np.asarray(features, dtype=float)
    if len(estimates) == 0 or x.shape[0] == 0:
        return np.ones(x.shape[:2], dtype=bool)
    return stacked_survivors(stack_estimates(estimates), x, width_cap, tolerance)


def stacked_survivors(stack: EstimateStack, x: np.ndarray, width_cap: float, tolerance: float) -> np.ndarray:
    """:func:`surviving_actions` from stacked estimates (at least one)."""
    mean, width = stacked_bounds(stack, x, width_cap)
    return eliminate_all(np.ones(x.shape[:2], dtype=bool), mean, width, mean + width, tolerance)


def best_arms(mask: np.ndarray, score: np.ndarray) -> np.ndarray:
    """The arms of ``mask`` (m, K) whose score is within the tie tolerance of the row's best."""
    score = np.where(mask, score, -np.inf)
    return mask & (score >= (_row_reduce(np.maximum, score) - _TIE)[:, None])


def can_eliminate(estimate: Estimate, bound: float, width_cap: float = 2.0) -> bool:
    """Whether an epoch's test (`eq:eliminate`) can remove any arm of any context with ||phi|| <= bound.

    It cannot when (i) c sigma_min(M) >= ||theta|| and (ii) 2 B L ||theta|| <= width_cap. Proof: for any
    two arms, f(a') - f(a) <= L ||theta|| ||phi_a' - phi_a||; under (i) this is at most
    L c (||M phi_a|| + ||M phi_a'||) = b(a) + b(a') when neither radius is capped, and under (ii) at most
    2 B L ||theta|| <= width_cap <= b(a) + b(a') when one is. So f(a) + b(a) >= f(a') - b(a') for all a, a':
    the test keeps every arm, and skipping such an estimate leaves the survivors unchanged (early epochs'
    estimates, with large radii, usually are of this kind).

    References
    ----------
    Source paper, `alg:plan`, `eq:eliminate`.
    """
    norm = float(np.linalg.norm(estimate.theta))
    smin = float(np.linalg.svd(estimate.width_matrix, compute_uv=False).min())
    return not (estimate.width_scale * smin >= norm and 2.0 * bound * estimate.link.lipschitz * norm <= width_cap)


def uniform_over(mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Index of the floor(u n)-th True entry of each row of ``mask`` (n = its count): a uniform pick."""
    counts = mask.sum(axis=1)
    target = np.minimum((u * counts).astype(np.int64), counts - 1)
    return np.argmax(np.cumsum(mask, axis=1) > target[:, None], axis=1)
