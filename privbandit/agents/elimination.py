"""Batched action elimination with any regression oracle: joint DP, local DP, GLM and non-private.

The algorithm in words (`alg:batch-cb-meta`, `alg:batch-cb-JDP`). Rounds are cut into epochs
1 = T_0 < T_1 < ... < T_J = T (doubling, T_j = 2^{j+1} - 1). In epoch j the policy pi_j is fixed: it
is the planner `alg:plan` run on the estimates (f_tau, b_tau), tau < j, of the earlier epochs. The
epoch's rows (phi(x_t, a_t), r_t) feed one fresh oracle fit (joint DP: IW-Regression-DP, SSP, ...;
local DP: IW-Regression-LDP, local SSP, ...), whose Estimate gives f_j(x, a) = nu(<phi(x, a), theta_j>)
and b_j(x, a) = min(L_nu c_j ||M_j phi(x, a)||, 2) (`alg:batch-cb-JDP`: b = min(8 lambda ||W phi||, 2);
`appdx:proof-JDP-gen-linear`: the GLM width carries the link's Lipschitz constant L_nu).

Planning (`alg:plan`) for a context x: A_0 = A, and for each past epoch tau

    A_tau = {a in A_{tau-1} : f_tau(x, a) + b_tau(x, a) >= max_{a' in A} (f_tau(x, a') - b_tau(x, a'))};

then play uniformly on a C-approximate barycentric spanner (C = 2) of the survivors (`def:spanner`,
`lem:bary-spanner`; with ``spanner=False``, uniformly on all survivors, the footnote's choice when
|A| = O(1)). The planner runs for a whole batch of contexts at once: one matrix product against
every past epoch's (theta, M), stacked once per epoch, gives the means and widths; all epochs' tests
run in one vectorised pass (contexts whose tests conflict are replayed epoch by epoch); then one
vectorised spanner computation (:mod:`.spanner`). Past estimates whose test provably keeps every arm
(:func:`can_eliminate`) are skipped. The step loop's ``act`` runs the same planner on one context
(:func:`_eliminate_one`, :func:`~privbandit.agents.spanner.barycentric_spanner_one`) with the same
arithmetic and the same uniform, so it chooses what ``act_batch`` chooses. UCB play's batch passes leave out
earlier non-informative epochs whose upper bounds provably exceed the latest epoch's on every row of
the pass (:class:`_Shortcut`: the same scores and arms).

Practical play (issue 12). Elimination always runs first; ``play`` then picks among the survivors:
``"spanner"`` (default, the paper's rule above), ``"ucb"`` (the survivor whose tightest upper bound
min_tau f_tau + b_tau is largest) or ``"greedy"`` (the best mean of the latest estimate, exploring on the
survivors' spanner with a public probability eps_t = (d/t)^(1/3)). ``first_epoch`` and ``growth`` set
the epoch schedule; ``pooling="ridge"`` (non-private only) releases ridge on all past rows. All three
rules post-process released estimates only, so the guarantee below covers them unchanged.

Privacy. The agent touches data only through the oracle fits: epoch j's users enter only fit j, and
the actions of other users depend on them only through the fit's private release, so the agent is
(epsilon, delta)-JDP (LDP) when the oracle is (epsilon, delta)-DP (LDP) (`thm:regret-upper-meta`). The
agent's ledger is the union of the fits' ledgers at the epochs' round offsets.

References
----------
Source paper, `alg:batch-cb-meta`, `alg:plan`, `alg:batch-cb-JDP`, `appdx:regret-upper-LDP`,
`appdx:proof-JDP-gen-linear`, `def:spanner`, `lem:bary-spanner`, `thm:regret-upper-meta`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from typing import Any, Callable, ClassVar, Sequence

import numpy as np

from .._kernels import einsum
from .._validation import (
    POSITIVE,
    Boolean,
    Interval,
    IsCallable,
    Options,
    ParameterConstraints,
    check_int,
)
from ..oracles.base import EpochFit, Estimate, Oracle
from ..oracles.ridge import Ridge, RidgeFit
from ._oracle_arg import ORACLE_ARGUMENT_CONSTRAINTS, resolve_oracle
from .base import BanditSpec, EpochAgent, register_agent
from .spanner import _max_swaps, _spanner_one, barycentric_spanner

__all__ = ["PLAY_RULES", "POOLING", "EliminationAgent", "can_eliminate", "cube_root_exploration", "epoch_bounds",
           "surviving_actions", "theory_confidence", "uniform_over"]

_PLAN_CHUNK = 4096
_PLAY_BUDGET = 1 << 19   # entries of the (mK, J (d + 1)) product per pass of the UCB and greedy rules (4 MiB:
                         # at d = K = 10 the pass over m contexts runs ~1.3x faster than with 16 MiB passes)
_FEW = 256            # arrays this small take numpy's reductions (one call) instead of one pass per arm
_RATE_BLOCK = 4096     # rounds of greedy play's default exploration rates the step loop computes at once
_TIE = 1e-12          # scores this close to the best are ties (broken by the agent's uniform)
_ELIMINATION_TOLERANCE = 1e-12   # slack of the elimination test (surviving_actions' default)

PLAY_RULES = ("spanner", "ucb", "greedy")
"""The play rules of :class:`EliminationAgent` among the survivors (``"spanner"``: the paper's `alg:plan`)."""

JDP_UCB_FIRST_EPOCH = 256
"""First epoch of ``elim-jdp-ucb``: public, fixed before the run. Chosen among {1, 128, 256, 512, 1600} at
T = 2^16, d = K = 10, epsilon = 1, 6 seeds: regret (rare-direction, heavy-tailed, spiky) 1873, 2312, 3843 at
256 vs 2213, 2390, 3954 with the paper's first epoch of 1 (1600 was best on rare-direction, worst on spiky)."""

POOLING = ("none", "ridge")
"""``"ridge"``: the non-private reference fits ridge on all past rows at each epoch end."""


@dataclasses.dataclass(frozen=True)
class _Stack:
    """Released estimates stacked for the batch planner (built once per epoch: they are fixed within one).

    ``basis`` is [theta_1 ... theta_J | M_1^T ... M_J^T] (d, J (d + 1)), so one (mK, d) x (d, J (d + 1))
    product gives every epoch's predictor <phi, theta_tau> and M_tau phi; ``scale`` (J, 1) holds L_nu c_tau.
    """

    estimates: tuple[Estimate, ...]
    basis: np.ndarray
    scale: np.ndarray
    identity: bool          # every link is the identity (the predictor is the mean)


def _stack(estimates: Sequence[Estimate]) -> _Stack:
    """Stack released estimates (at least one) for :func:`_bounds`."""
    ests = tuple(estimates)
    basis = np.concatenate([np.stack([e.theta for e in ests], axis=1)] + [e.width_matrix.T for e in ests], axis=1)
    scale = np.array([e.link.lipschitz * e.width_scale for e in ests])[:, None]
    return _Stack(ests, basis, scale, all(e.link.is_identity for e in ests))


def _bounds(stack: _Stack, x: np.ndarray, width_cap: float) -> tuple[np.ndarray, np.ndarray]:
    """Every stacked epoch's mean and capped radius, (J, m, K) each, for features ``x`` (m, K, d)."""
    m, k, d = x.shape
    mean, width = _bounds_rows(stack, x.reshape(m * k, d), width_cap)
    n_est = len(stack.estimates)      # the identity link's transposed view: one C-ordered copy for all epochs
    return np.ascontiguousarray(mean).reshape(n_est, m, k), width.reshape(n_est, m, k)


def _bounds_rows(stack: _Stack, rows: np.ndarray, width_cap: float) -> tuple[np.ndarray, np.ndarray]:
    """Every stacked epoch's mean and capped radius, (J, n) each, for feature rows ``rows`` (n, d) (one
    context's (K, d) in the step loop); with identity links the mean is a transposed view of the product."""
    n, d = rows.shape
    n_est = len(stack.estimates)
    proj = rows.dot(stack.basis)                          # ndarray.dot, np.einsum's C function: the same
    mphi = proj[:, n_est:].reshape(n, n_est, d)           # values without the wrappers (privbandit._kernels)
    width = einsum("njd,njd->jn", mphi, mphi)            # ||M phi||^2, then in place: min(L c ||M phi||, cap)
    np.sqrt(width, out=width)
    np.multiply(stack.scale, width, out=width)
    np.minimum(width, width_cap, out=width)
    if stack.identity:              # the identity link returns its argument
        return proj[:, :n_est].T, width
    return np.stack([e.link(proj[:, j]) for j, e in enumerate(stack.estimates)]), width


def _row_max(values: np.ndarray) -> np.ndarray:
    """The maximum over the last (short, arms) axis of ``values`` (..., K), one elementwise pass per arm.

    Equal to ``values.max(axis=-1)`` (a maximum is exact), without numpy's per-row reduction overhead
    (which costs less than K passes for few rows: the per-round path's single context).
    """
    if values.size <= _FEW:
        return values.max(axis=-1)
    top = values[..., 0].copy()
    for a in range(1, values.shape[-1]):
        np.maximum(top, values[..., a], out=top)
    return top


def _row_any(mask: np.ndarray) -> np.ndarray:
    """``mask.any(axis=-1)`` for boolean ``mask`` (..., K), one elementwise pass per arm (a reduction for few rows)."""
    if mask.size <= _FEW:
        return mask.any(axis=-1)
    out = mask[..., 0].copy()
    for a in range(1, mask.shape[-1]):
        out |= mask[..., a]
    return out


def _eliminate_all(alive: np.ndarray, mean: np.ndarray, width: np.ndarray, upper: np.ndarray, tolerance: float,
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
    passed = upper >= (_row_max(mean - width) - tolerance)[..., None]
    if passed.shape[0] == 0:
        return alive
    kept = alive & np.logical_and.reduce(passed, axis=0)
    empty = ~_row_any(kept)
    if empty.any():
        rows = np.flatnonzero(empty)
        sub = alive[rows]
        for test in passed[:, rows]:
            nxt = sub & test
            sub = np.where(nxt.any(axis=1, keepdims=True), nxt, sub)
        kept[rows] = sub
    return kept


_CUT_MAX_DIM = 12        # the UCB shortcut computes a subset of the stacked product's columns; this BLAS
                         # (OpenBLAS 0.3.31) gives every entry the same bits for any subset of rows and columns
                         # only up to an inner dimension of 12 (tests/test_planning.py checks it), so above that
                         # the shortcut is off and the results stay those of the full product
_CUT_SLACK = 1e-9        # relative margin of the shortcut's certificate (rounding errors are below 1e-12)
_CUT_TINY = 1e-100       # a feature row shorter than this (or zero) leaves the pass to the full product
_CUT_SAMPLE = 32         # contexts the shortcut tries first (a pass it certifies nothing on turns it off)
_CUT_MIN_PASS = 64       # passes over fewer contexts (short epochs) take the full product


@dataclasses.dataclass(frozen=True)
class _Shortcut:
    """UCB play without the epochs that cannot matter: built once per epoch, used per pass (:meth:`stack_for`).

    UCB play reads an epoch tau's bounds twice: in its elimination test when tau is informative
    (:func:`can_eliminate`), and through its upper bound u_tau = f_tau + b_tau in the score min_tau u_tau.
    A non-informative epoch tau other than the latest, L, thus matters only through the score, and not
    even there on a row phi where u_tau(phi) > u_L(phi). A pass leaves such an epoch out (its columns of
    the stacked product, its widths) when every row of the pass certifies it: the same survivors and the
    same score (a minimum is exact), hence the same arms.

    Certificate (identity links). Let s = L_nu c, h = min(s sigma_min(M), width_cap / B) and E = ||theta|| +
    s ||M||_F + width_cap / B of an epoch. Inside the ball, ||M phi|| >= sigma_min(M) ||phi|| and width_cap
    >= (width_cap / B) ||phi||, so the computed u_tau(phi) >= <theta_tau, phi> + h_tau ||phi|| - r_tau, and
    ||M_L phi|| <= sigma_max(M_L) ||phi||, so the computed u_L(phi) <= <theta_L, phi> + s_L sigma_max(M_L)
    ||phi|| + r_L, where the rounding errors r <= 2 (d + 4) u E ||phi|| (u = 2^-53; products, sums of
    squares, square roots, the SVD's singular values, the cap). One product of the rows [phi, ||phi||] (m K, d + 1) against
    ``directions`` = [theta_tau - theta_L; h_tau - s_L sigma_max(M_L) - slack_tau], slack_tau = 1e-9
    (E_tau + E_L) + 1e-200, gives v(phi) with an error below 2 (d + 4) u (E_tau + E_L) ||phi||; tau is left
    out when every row has ||phi|| >= 1e-100 and v(phi) > 0. Then u_tau(phi) > u_L(phi) on every row: for
    d <= 12 the slack is over 1e5 times the rounding errors, and 1e-200 ||phi|| >= 1e-300 covers underflow.
    """

    estimates: tuple[Estimate, ...]
    informative: tuple[bool, ...]
    candidates: tuple[int, ...]             # non-informative epochs before the latest, which a pass may leave out
    directions: np.ndarray                  # (d + 1, n_candidates), see above
    kept: dict = dataclasses.field(default_factory=dict)     # cache: epochs computed -> (stack, tests' index)

    def needed(self, x: np.ndarray) -> tuple[int, ...]:
        """The epochs a pass over contexts ``x`` (m, K, d), m >= 1, must compute (all but those certified).
        The first :data:`_CUT_SAMPLE` contexts go first: what they do not certify, the pass cannot."""
        certified = self._certified(x[:_CUT_SAMPLE])
        if certified and x.shape[0] > _CUT_SAMPLE:
            certified &= self._certified(x[_CUT_SAMPLE:])
        return tuple(j for j in range(len(self.estimates)) if j not in certified)

    def _certified(self, x: np.ndarray) -> set[int]:
        """The candidates that every row of contexts ``x`` (m, K, d) certifies (see the class docstring)."""
        m, k, d = x.shape
        rows = np.empty((m * k, d + 1))                  # [phi, ||phi||]
        rows[:, :d] = x.reshape(m * k, d)
        norm = rows[:, d]
        np.einsum("nd,nd->n", rows[:, :d], rows[:, :d], out=norm)
        np.sqrt(norm, out=norm)
        if not np.minimum.reduce(norm) >= _CUT_TINY:      # True for NaN too
            return set()
        ok = np.minimum.reduce(self.directions.T @ rows.T, axis=1) > 0.0
        return {j for j, good in zip(self.candidates, ok.tolist()) if good}

    def stack_for(self, x: np.ndarray) -> tuple[_Stack, np.ndarray | slice | None] | None:
        """The stack of the epochs a pass over ``x`` needs and the index of their informative tests among
        them (None: none), cached per set of epochs; None when the pass needs every epoch."""
        keep = self.needed(x)
        if len(keep) == len(self.estimates):
            return None
        if keep not in self.kept:
            tests = [i for i, j in enumerate(keep) if self.informative[j]]
            index: np.ndarray | slice | None = None
            if tests:
                index = np.s_[tests[0]:tests[-1] + 1] if tests[-1] - tests[0] + 1 == len(tests) else np.array(tests)
            self.kept[keep] = (_stack([self.estimates[j] for j in keep]), index)
        return self.kept[keep]


def _spread(estimate: Estimate, sv: np.ndarray, bound: float, width_cap: float) -> tuple[float, float, float]:
    """What :class:`_Shortcut` needs of one released estimate, given M's singular values ``sv``: h = min(s
    sigma_min(M), width_cap / B), s sigma_max(M) and E = ||theta|| + s ||M||_F + width_cap / B."""
    s = estimate.link.lipschitz * estimate.width_scale
    reach = width_cap / bound
    error = float(np.linalg.norm(estimate.theta) + s * np.sqrt(np.sum(sv * sv))) + reach
    return min(float(s * sv.min()), reach), float(s * sv.max()), error


def _shortcut(estimates: Sequence[Estimate], informative: Sequence[bool],
              spreads: Sequence[tuple[float, float, float]]) -> _Shortcut | None:
    """The :class:`_Shortcut` of the released estimates (``informative`` flags each, ``spreads`` holds their
    :func:`_spread`), or None when it has no candidate or does not apply (a link other than the identity,
    d above :data:`_CUT_MAX_DIM`)."""
    ests = tuple(estimates)
    candidates = tuple(j for j in range(len(ests) - 1) if not informative[j])
    if not candidates or ests[-1].theta.shape[0] > _CUT_MAX_DIM or not all(e.link.is_identity for e in ests):
        return None
    _, top_last, error_last = spreads[-1]
    directions = np.empty((ests[-1].theta.shape[0] + 1, len(candidates)))
    for c, j in enumerate(candidates):
        h, _, error = spreads[j]
        directions[:-1, c] = ests[j].theta - ests[-1].theta
        directions[-1, c] = h - top_last - (_CUT_SLACK * (error + error_last) + 1e-200)
    return _Shortcut(ests, tuple(informative), candidates, directions)


def surviving_actions(estimates: Sequence[Estimate], features: np.ndarray, *, width_cap: float = 2.0,
                      tolerance: float = _ELIMINATION_TOLERANCE) -> np.ndarray:
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
    return _survivors(_stack(estimates), x, width_cap, tolerance)


def _survivors(stack: _Stack, x: np.ndarray, width_cap: float, tolerance: float) -> np.ndarray:
    """:func:`surviving_actions` from stacked estimates (at least one)."""
    mean, width = _bounds(stack, x, width_cap)
    return _eliminate_all(np.ones(x.shape[:2], dtype=bool), mean, width, mean + width, tolerance)


def epoch_bounds(estimates: Sequence[Estimate], features: np.ndarray, *, width_cap: float = 2.0
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Every epoch's mean f_tau(x, a) and capped radius min(b_tau(x, a), width_cap) for a batch of contexts.

    Parameters
    ----------
    estimates : sequence of Estimate
        The released estimates, at least one.
    features : ndarray (m, K, d)
        phi(x, a) of m contexts.
    width_cap : float
        Cap on the radius (as in :func:`surviving_actions`).

    Returns
    -------
    (mean, width) : ndarrays (J, m, K)
        One slice per estimate, in order.

    References
    ----------
    Source paper, `alg:plan` (the pairs (f_tau, b_tau)), `alg:batch-cb-JDP`.
    """
    return _bounds(_stack(estimates), np.asarray(features, dtype=float), width_cap)


def _best(mask: np.ndarray, score: np.ndarray) -> np.ndarray:
    """The arms of ``mask`` (m, K) whose score is within the tie tolerance of the row's best."""
    score = np.where(mask, score, -np.inf)
    return mask & (score >= (_row_max(score) - _TIE)[:, None])


def _best_one(mask: np.ndarray, score: np.ndarray) -> list[bool]:
    """:func:`_best` of one context, ``mask`` and ``score`` (K,), as Python bools: the same comparisons in
    Python floats (a maximum is exact); a NaN or infinite score (sum not finite) takes :func:`_best` itself."""
    values, keep = score.tolist(), mask.tolist()
    if not math.isfinite(sum(values)):
        return _best(mask[None], score[None])[0].tolist()
    top = max([v for v, k in zip(values, keep) if k]) - _TIE
    return [k and v >= top for v, k in zip(values, keep)]


def cube_root_exploration(dim: int) -> Callable[[np.ndarray], np.ndarray]:
    """The default exploration schedule of greedy play: eps_t = min(1, (d / t)^(1/3)) for rounds t = 1, 2, ...

    A function of the public dimension and the round alone (no data), fixed before the run.
    """
    def rate(t: np.ndarray) -> np.ndarray:
        return np.minimum(1.0, (dim / np.asarray(t, dtype=float)) ** (1.0 / 3.0))

    return rate


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
    return _can_eliminate(estimate, _singular_values(estimate), bound, width_cap)


def _singular_values(estimate: Estimate) -> np.ndarray:
    """The singular values of an estimate's width matrix M (one SVD per release, shared by the agent's uses)."""
    return np.linalg.svd(estimate.width_matrix, compute_uv=False)


def _can_eliminate(estimate: Estimate, singular_values: np.ndarray, bound: float, width_cap: float) -> bool:
    """:func:`can_eliminate` given M's singular values."""
    norm = float(np.linalg.norm(estimate.theta))
    lip = estimate.link.lipschitz
    smin = float(singular_values.min())
    return not (estimate.width_scale * smin >= norm and 2.0 * bound * lip * norm <= width_cap)


def theory_confidence(horizon: int) -> float:
    """The statistical confidence of every epoch's fit in the regret proofs: delta = 1/T.

    Every epoch j runs its regression with the same delta (`alg:batch-cb-JDP`: JDPLinearRegression(D_j,
    delta)); `thm:regret-upper-meta` takes the union bound over the J epochs (the success event has
    probability >= 1 - J delta, which costs the 4 T J delta term of the bound), and the proofs of
    `thm:regret-upper-JDP-better`, `thm:regret-upper-JDP` and `thm:regret-upper-LDP` set delta = 1/T.
    So the per-epoch confidence is 1/T, not split further over the epochs (J delta T = J = O(log T)
    regret). The algorithm needs delta in (0, 1): at T = 1 (one epoch, whose estimate is never used)
    it is 1/2.

    References
    ----------
    Source paper, `alg:batch-cb-JDP`, `thm:regret-upper-meta`, `appdx:proof-regret-upper-JDP-better`,
    `appdx:proof-JDP-gen-linear`, `appdx:regret-upper-LDP`.
    """
    return 1.0 / max(check_int("horizon", horizon, low=1), 2)


def uniform_over(mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Index of the floor(u n)-th True entry of each row of ``mask`` (n = its count): a uniform pick."""
    counts = mask.sum(axis=1)
    target = np.minimum((u * counts).astype(np.int64), counts - 1)
    return np.argmax(np.cumsum(mask, axis=1) > target[:, None], axis=1)


@functools.lru_cache(maxsize=16)
def _all_arms(n_arms: int) -> np.ndarray:
    """``np.ones(n_arms, dtype=bool)``, read-only and built once per K: one context's survivors while no
    release is informative (the step loop's planners only read their mask; writing to it raises)."""
    mask = np.ones(n_arms, dtype=bool)
    mask.setflags(write=False)
    return mask


def _pick(mask: np.ndarray | list[bool], u: float) -> int:
    """:func:`uniform_over` of one context: the floor(u n)-th True entry of ``mask`` (K,) (n = its count).
    All arms (the floor(u K)-th) and a single arm (its index) are read off without listing the arms."""
    keep = mask.tolist() if isinstance(mask, np.ndarray) else mask
    n = keep.count(True)
    if n == len(keep):
        return min(int(u * n), n - 1)
    if n == 1:
        return keep.index(True)
    arms = [a for a, k in enumerate(keep) if k]
    return arms[min(int(u * n), n - 1)]


def _eliminate_one(mean: np.ndarray, width: np.ndarray, upper: np.ndarray, tolerance: float) -> np.ndarray:
    """:func:`_eliminate_all` of one context from all survivors: bounds (J, K) of the epochs whose tests run.

    The same comparisons: the conjunction of the J tests when it keeps an arm, else the tests in order,
    each skipped when it would remove every survivor. (The ufuncs' reductions are the array methods'
    without their Python wrappers: a maximum and a conjunction are exact in any order.)
    """
    passed = upper >= (np.maximum.reduce(mean - width, axis=1) - tolerance)[:, None]
    kept = np.logical_and.reduce(passed, axis=0)
    if True in kept.tolist():
        return kept
    kept = np.ones(mean.shape[1], dtype=bool)
    for test in passed:
        nxt = kept & test
        if nxt.any():
            kept = nxt
    return kept


class EliminationAgent(EpochAgent):
    """Action elimination over past epochs' confidence intervals, playing uniformly on a spanner.

    Parameters
    ----------
    oracle : Oracle or str
        The L1-regression oracle (an instance, or a registered name such as ``"ridge"``,
        ``"iw-regression-dp"``, ``"ssp"``, ``"iw-regression-ldp"``, ``"ssp-local"``, ``"iw-glm-dp"``).
    epsilon, delta : float, optional
        Per-user privacy budget, when the oracle is given by name.
    model : {"jdp", "ldp", "none"}, optional
        Privacy model, when the oracle is given by name.
    oracle_kwargs : dict, optional
        Oracle hyperparameters, when the oracle is given by name.
    spanner : bool
        Play uniformly on a C-approximate barycentric spanner of the survivors (default, `alg:plan`),
        or on all survivors (the footnote's variant for few actions).
    spanner_constant : float
        C > 1 of the approximate barycentric spanner (2 in the source).
    width_cap : float
        Cap on the confidence radius (2 in `alg:batch-cb-JDP`).
    play : {"spanner", "ucb", "greedy"}
        How to pick among the survivors (elimination always runs first):

        - ``"spanner"`` (default): uniformly on the spanner, the paper's `alg:plan` (unchanged);
        - ``"ucb"``: the survivor with the largest upper confidence bound min_tau (f_tau + b_tau) over
          every released estimate (the top of the intersection of its intervals), ties uniform;
        - ``"greedy"``: the survivor with the largest mean of the latest released estimate (the one fitted
          on the most recent, largest epoch), ties uniform; with probability eps_t instead uniformly on
          the survivors' spanner (on all survivors with ``spanner=False``).

        Every rule reads only released estimates, the current context and the agent's uniforms: post-
        processing of the releases, at no privacy cost.
    exploration : callable, optional
        Greedy play's eps_t: ``exploration(t)`` maps an int array of rounds t >= 1 to rates in [0, 1]
        (vectorised). Default min(1, (d/t)^(1/3)) (:func:`cube_root_exploration`). It must depend on
        public parameters and t only. Only with ``play="greedy"``.
    pooling : {"none", "ridge"}
        ``"ridge"``: release at each epoch end the ridge fit on ALL past rows (the ``ridge`` oracle's
        fit, kept open over the run) instead of the epoch's own fit (which then gets no rows: it would
        never be released). Non-private only: a private oracle never pools (its epochs compose in
        parallel only because each user enters one fit).
    first_epoch, growth : int, float
        The epoch schedule (:func:`~privbandit.agents.base.epoch_schedule`; default the paper's doubling).

    Notes
    -----
    The first epoch has no estimate (f_0 = 0, b_0 = 1 eliminate nothing) and plays uniformly on a
    spanner of all actions, whatever the play rule. Ties are broken towards the lowest action index by
    the spanner rule. Greedy play's eps_t is the rate of the round being played: the rows of a batch
    (``act_batch``, ``action_probabilities``) are the next rounds self.t + 1, self.t + 2, ... One uniform
    per round serves every rule (greedy: u < eps_t explores with u / eps_t, else exploits with
    (u - eps_t) / (1 - eps_t)), so all rules consume the same stream.

    Statistical confidence. With an oracle in theory mode (``constants="theory"``) every epoch's fit
    gets the confidence the regret proofs use, delta = 1/T (:func:`theory_confidence`), whatever the
    oracle's own ``confidence``; otherwise the oracle's ``confidence`` applies to each epoch.

    References
    ----------
    Source paper, `alg:batch-cb-meta`, `alg:plan`, `alg:batch-cb-JDP`, `appdx:regret-upper-LDP`,
    `appdx:proof-JDP-gen-linear`.
    """

    name: ClassVar[str] = "elimination"
    uniforms_per_round: ClassVar[int] = 1
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **EpochAgent.parameter_constraints, **ORACLE_ARGUMENT_CONSTRAINTS, "spanner": [Boolean()],
        "spanner_constant": [Interval(numbers.Real, 1.0, None, closed="right")], "width_cap": [POSITIVE],
        "play": [Options(PLAY_RULES)],
        "exploration": [None, IsCallable("exploration(t: int array) -> rates in [0, 1]")],
        "pooling": [Options(POOLING)]}

    def __init__(self, oracle: Oracle | str = "ridge", *, epsilon: float | None = None, delta: float | None = None,
                 model: str | None = None, oracle_kwargs: dict[str, Any] | None = None, spanner: bool = True,
                 spanner_constant: float = 2.0, width_cap: float = 2.0, play: str = "spanner",
                 exploration: Callable[[np.ndarray], np.ndarray] | None = None, pooling: str = "none",
                 first_epoch: int = 1, growth: float = 2.0) -> None:
        super().__init__(resolve_oracle(oracle, epsilon=epsilon, delta=delta, model=model,
                                        oracle_kwargs=oracle_kwargs), first_epoch=first_epoch, growth=growth)
        self._store_parameters(spanner=spanner, spanner_constant=spanner_constant, width_cap=width_cap, play=play,
                               exploration=exploration, pooling=pooling)
        if exploration is not None and play != "greedy":
            raise ValueError(f"exploration is greedy play's rate: it needs play='greedy', got play={play!r}")
        if pooling == "ridge":
            if self.oracle.privacy.is_private:
                raise ValueError(f"pooling='ridge' fits every past user's raw rows: it is for the non-private "
                                 f"reference only, and private oracles never pool (oracle {self.oracle.name!r} is "
                                 f"{self.oracle.privacy.model!r}); use pooling='none'")
            if not isinstance(self.oracle, Ridge):
                raise ValueError(f"pooling='ridge' needs the 'ridge' oracle, got {self.oracle.name!r}")

    def _epoch_oracle(self, spec: BanditSpec) -> Oracle:
        """The oracle with the proofs' per-epoch confidence in theory mode, else ``self.oracle``."""
        if getattr(self.oracle, "constants", None) == "theory" and hasattr(self.oracle, "confidence"):
            return dataclasses.replace(self.oracle, confidence=theory_confidence(spec.horizon))
        return self.oracle

    def _reset(self) -> None:
        super()._reset()
        self._informative: list[Estimate] = []
        self._stacks: tuple[_Stack, _Stack | None, np.ndarray | slice] | None = None   # see _stacked
        self._cut: tuple[_Shortcut | None] | None = None      # see _ucb_stack
        self._spreads: list[tuple[float, float, float]] = []  # _spread of every release (UCB play)
        self._rates: list[float] = []                          # see _next_rate
        self._rates_from = 0
        self._pool: EpochFit | None = None
        self._max_swaps = _max_swaps(self._require_spec().dim, self.spanner_constant)   # the spanner's default cap
        if self.pooling == "ridge":     # one ridge fit over the whole run, read (never finished) at epoch ends
            spec = self._require_spec()
            self._pool = self._run_oracle.start(spec.horizon, dim=spec.dim, bound=spec.bound, link=spec.link, rng=0)

    def _observe(self, x: np.ndarray, y: np.ndarray) -> None:
        if self._pool is None:
            super()._observe(x, y)
            return
        # pooled: the epoch's own fit would never be released, so only the pool learns (update has checked
        # and clipped the rows to the pool's bound); the epoch bookkeeping is the same
        self._pool._add_clipped(x, y)
        self._after_rows(x.shape[0])

    def _observe_row(self, x: np.ndarray, y: float) -> None:
        if self._pool is None:
            super()._observe_row(x, y)
            return
        self._pool._add_row(x, y)
        self._after_rows(1)

    def _release(self) -> Estimate:
        if isinstance(self._pool, RidgeFit):
            return self._pool.current()
        return super()._release()

    def _on_epoch_end(self, estimate: Estimate) -> None:
        # estimates whose test can never remove an arm are skipped by the planner (same survivors)
        bound, sv = self._require_spec().bound, _singular_values(estimate)
        if _can_eliminate(estimate, sv, bound, self.width_cap):
            self._informative.append(estimate)
        if self.play == "ucb":
            self._spreads.append(_spread(estimate, sv, bound, self.width_cap))
        self._stacks = self._cut = None

    def _stacked(self) -> tuple[_Stack, _Stack | None, np.ndarray | slice]:
        """All released estimates stacked, the informative ones stacked (None if none) and their indices
        among all (a slice when they are consecutive); rebuilt once per epoch (the releases are fixed within
        one)."""
        if self._stacks is None:
            informative = {id(e) for e in self._informative}
            index = np.array([j for j, e in enumerate(self.estimates) if id(e) in informative], dtype=np.int64)
            if index.size and index[-1] - index[0] + 1 == index.size:      # a run of epochs: a view, no copies
                index = np.s_[int(index[0]):int(index[-1]) + 1]
            self._stacks = (_stack(self.estimates), _stack(self._informative) if self._informative else None, index)
        return self._stacks

    def _act_one(self, x: np.ndarray) -> int:
        """One round's arm for checked features ``x`` (K, d): what ``_act(x[None])[0]`` returns, with the
        same uniform, through the one-context planner (:func:`_eliminate_one`, :func:`_spanner_one`). A
        subclass with its own ``_choose`` gets the batch rule on one context (``Agent.__init_subclass__``)."""
        u = float(self._act_rng.random())
        if self.play == "spanner" or not self.estimates:
            alive = self._survivors_one(x)
            return _pick(self._spanner_one(x, alive) if self.spanner else alive, u)
        if self.play == "ucb":
            return _pick(self._ucb_best_one(x), u)
        alive, best = self._survivors_and_best_one(x)
        eps = self._next_rate()
        if u < eps:                              # explore with u / eps_t, exploit with (u - eps_t) / (1 - eps_t)
            return _pick(self._spanner_one(x, alive) if self.spanner else alive, u / eps)
        return _pick(best, (u - eps) / (1.0 - eps))

    def _next_rate(self) -> float:
        """eps_t of the next round, ``float(self._exploration_rates(0, 1)[0])``: the default schedule's rates
        are computed :data:`_RATE_BLOCK` rounds ahead (the same elementwise operations on the same rounds, and
        always rates), a user's ``exploration`` one round at a time (checked each round, as before)."""
        if self.exploration is not None:
            return float(self._exploration_rates(0, 1)[0])
        i = self.t - self._rates_from
        if not 0 <= i < len(self._rates):
            ahead = max(1, min(_RATE_BLOCK, self._require_spec().horizon - self.t))
            self._rates, self._rates_from, i = self._exploration_rates(0, ahead).tolist(), self.t, 0
        return self._rates[i]

    def _spanner_one(self, x: np.ndarray, alive: np.ndarray) -> np.ndarray:
        """The spanner of one context's survivors (:func:`~privbandit.agents.spanner.barycentric_spanner_one`)."""
        return _spanner_one(x, alive, self.spanner_constant, self._max_swaps)

    def _survivors_one(self, x: np.ndarray) -> np.ndarray:
        """:meth:`_survivors` of one context ``x`` (K, d): the survivors (K,)."""
        if not self._informative:
            return _all_arms(x.shape[0])
        mean, width = _bounds_rows(self._stacked()[1], x, self.width_cap)
        return _eliminate_one(mean, width, mean + width, _ELIMINATION_TOLERANCE)

    def _survivors_and_best_one(self, x: np.ndarray) -> tuple[np.ndarray, list[bool]]:
        """:meth:`_survivors_and_best` of one context ``x`` (K, d) for greedy play: survivors (K,) and the
        exploited arms (K Python bools)."""
        alive = self._survivors_one(x)
        return alive, _best_one(alive, self.estimates[-1]._mean_checked(x))

    def _ucb_best_one(self, x: np.ndarray) -> list[bool]:
        """UCB play's exploited arms of one context ``x`` (K, d), K Python bools: ``_survivors_and_best(x[None])
        [1][0]``. The arms with the top score over all arms come first: when each passes every informative
        test, it is in the tests' conjunction (so a survivor) and the survivors' top score is theirs, so they
        are the answer (the same comparisons in Python floats); otherwise, and for a score that is not
        finite, the survivors come first (:func:`_eliminate_one`, :func:`_best_one`)."""
        everything, _, index = self._stacked()
        mean, width = _bounds_rows(everything, x, self.width_cap)
        upper = mean + width
        score = np.minimum.reduce(upper, axis=0)
        if not self._informative:
            return _best_one(np.ones(x.shape[0], dtype=bool), score)
        mean, width, upper = mean[index], width[index], upper[index]
        values = score.tolist()
        if math.isfinite(sum(values)):
            cut = max(values) - _TIE
            top = [v >= cut for v in values]
            thresholds = (np.maximum.reduce(mean - width, axis=1) - _ELIMINATION_TOLERANCE).tolist()
            if all(all(u >= t for u, t in zip(upper[:, a].tolist(), thresholds))
                   for a, best in enumerate(top) if best):
                return top
        return _best_one(_eliminate_one(mean, width, upper, _ELIMINATION_TOLERANCE), score)

    def play_set(self, features: np.ndarray) -> np.ndarray:
        """The set the policy plays uniformly on, (m, K) booleans: the spanner of the survivors."""
        x = np.asarray(features, dtype=float)
        out = np.empty(x.shape[:2], dtype=bool)
        for lo in range(0, x.shape[0], _PLAN_CHUNK):
            part = x[lo:lo + _PLAN_CHUNK]
            alive = self._survivors(part)
            if self.spanner:
                alive = barycentric_spanner(part, alive, constant=self.spanner_constant)
            out[lo:lo + _PLAN_CHUNK] = alive
        return out

    def _choose(self, features: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        if self.play == "spanner" or not self.estimates:
            return uniform_over(self.play_set(features), uniforms[:, 0])
        x = np.asarray(features, dtype=float)
        u = uniforms[:, 0]
        out = np.empty(x.shape[0], dtype=np.int64)
        step = self._play_chunk(x.shape)
        for lo in range(0, x.shape[0], step):
            part, v = x[lo:lo + step], u[lo:lo + step]
            alive, best = self._survivors_and_best(part)
            if self.play == "ucb":
                out[lo:lo + step] = uniform_over(best, v)
                continue
            eps = self._exploration_rates(lo, part.shape[0])
            explore = v < eps                    # explore with u / eps_t, exploit with (u - eps_t) / (1 - eps_t)
            arms = np.empty(part.shape[0], dtype=np.int64)
            if explore.any():                    # the spanner only for the rounds that explore
                span = self._spanner_of(part[explore], alive[explore])
                arms[explore] = uniform_over(span, v[explore] / eps[explore])
            keep = ~explore
            arms[keep] = uniform_over(best[keep], (v[keep] - eps[keep]) / (1.0 - eps[keep]))
            out[lo:lo + step] = arms
        return out

    def _probabilities(self, features: np.ndarray) -> np.ndarray:
        if self.play == "spanner" or not self.estimates:
            play = self.play_set(features)
            return play / play.sum(axis=1, keepdims=True)
        x = np.asarray(features, dtype=float)
        out = np.empty(x.shape[:2])
        step = self._play_chunk(x.shape)
        for lo in range(0, x.shape[0], step):
            part = x[lo:lo + step]
            alive, best = self._survivors_and_best(part)
            p = best / best.sum(axis=1, keepdims=True)
            if self.play == "greedy":
                span = self._spanner_of(part, alive)
                eps = self._exploration_rates(lo, part.shape[0])[:, None]
                p = eps * span / span.sum(axis=1, keepdims=True) + (1.0 - eps) * p
            out[lo:lo + step] = p
        return out

    def _play_chunk(self, shape: tuple[int, ...]) -> int:
        """Contexts per pass of the planner: the pass's product fits in :data:`_PLAY_BUDGET` (UCB's covers
        every released estimate, elimination's only the informative ones)."""
        _, k, d = shape
        stacked = len(self.estimates) if self.play == "ucb" else len(self._informative)
        return max(16, _PLAY_BUDGET // (k * (d + 1) * max(stacked, 1)))

    def _spanner_of(self, features: np.ndarray, alive: np.ndarray) -> np.ndarray:
        """Where greedy play explores: the survivors' spanner (all survivors with ``spanner=False``)."""
        if not self.spanner:
            return alive
        return barycentric_spanner(features, alive, constant=self.spanner_constant)

    def _survivors(self, features: np.ndarray) -> np.ndarray:
        """:func:`surviving_actions` of the informative released estimates (stacked once per epoch), computed
        in passes of :meth:`_play_chunk` contexts."""
        m = features.shape[0]
        if not self._informative or m == 0:
            return np.ones(features.shape[:2], dtype=bool)
        stack, step = self._stacked()[1], self._play_chunk(features.shape)
        return np.concatenate([_survivors(stack, features[lo:lo + step], self.width_cap, _ELIMINATION_TOLERANCE)
                               for lo in range(0, m, step)])

    def _survivors_and_best(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The survivors (m, K) and, among them, the arms the UCB or greedy rule would exploit (ties)."""
        if self.play == "greedy":
            alive = self._survivors(features)
            return alive, _best(alive, self.estimates[-1].mean(features))
        # UCB: one pass gives every needed estimate's bounds; elimination uses the informative ones (as
        # surviving_actions does), the score is the top of each arm's intersected interval over all of them
        stack, index = self._ucb_stack(features)
        mean, width = _bounds(stack, features, self.width_cap)
        upper = mean + width
        alive = np.ones(features.shape[:2], dtype=bool)
        if index is not None:
            alive = _eliminate_all(alive, mean, width, upper, _ELIMINATION_TOLERANCE, index)
        return alive, _best(alive, np.min(upper, axis=0))

    def _ucb_stack(self, features: np.ndarray) -> tuple[_Stack, np.ndarray | slice | None]:
        """The estimates UCB play computes on ``features`` (m, K, d), stacked, and the index of the informative
        tests among them (None: none): every released estimate, or the :class:`_Shortcut`'s selection (the
        same survivors and scores). A pass that leaves nothing out turns the shortcut off until the next
        release; passes over fewer than :data:`_CUT_MIN_PASS` contexts take every estimate."""
        if self._cut is None:
            informative = {id(e) for e in self._informative}
            self._cut = (_shortcut(self.estimates, [id(e) in informative for e in self.estimates], self._spreads),)
        cut = self._cut[0]
        if cut is not None and features.shape[0] >= _CUT_MIN_PASS:
            kept = cut.stack_for(features)
            if kept is not None:
                return kept
            self._cut = (None,)
        everything, _, index = self._stacked()
        return everything, index if self._informative else None

    def _exploration_rates(self, offset: int, m: int) -> np.ndarray:
        """eps_t of the rounds t = self.t + offset + 1, ..., self.t + offset + m (public: t and d only)."""
        rounds = np.arange(self.t + offset + 1, self.t + offset + m + 1, dtype=np.int64)
        rate = self.exploration or cube_root_exploration(self._require_spec().dim)
        eps = np.asarray(rate(rounds), dtype=float)
        if eps.shape != (m,) or not np.all((eps >= 0.0) & (eps <= 1.0)):
            raise ValueError("exploration(t) must return one rate in [0, 1] per round of the int array t")
        return eps

    def describe(self) -> dict:
        """Agent, privacy and oracle names."""
        return dict(super().describe(), oracle=self.oracle.name)


def _factory(agent_name: str, oracle_name: str, model: str, description: str, counterpart: str | None = None,
             **defaults: Any) -> None:
    def make(*, epsilon: float | None = None, delta: float | None = None, oracle: Oracle | None = None,
             **kwargs: Any) -> EliminationAgent:
        kwargs = {**defaults, **kwargs}     # the registered variant's defaults (play rule, schedule, pooling)
        if oracle is not None:
            agent = EliminationAgent(oracle, **kwargs)
        else:  # make_agent has checked the budget against the registration's privacy
            agent = EliminationAgent(oracle_name, epsilon=epsilon, delta=delta,
                                     model=None if model == "none" else model, **kwargs)
        agent.name = agent_name  # type: ignore[misc]
        return agent

    make.__doc__ = f"{description}\n\nKeyword arguments go to :class:`EliminationAgent` (oracle {oracle_name!r})."
    register_agent(agent_name, make, description=description, private=model != "none", counterpart=counterpart)


_factory("elim-nonprivate", "ridge", "none",
         "action elimination with non-private ridge/OLS (alg:batch-cb-meta, reference)", counterpart="elim-jdp")
_factory("elim-jdp", "iw-regression-dp", "jdp",
         "joint-DP action elimination with IW-Regression-DP (alg:batch-cb-JDP)")
_factory("elim-ssp", "ssp", "jdp",
         "joint-DP action elimination with central sufficient-statistics perturbation (def:SSP)")
_factory("elim-glm-jdp", "iw-glm-dp", "jdp",
         "joint-DP GLM action elimination with IW-GLM-DP (appdx:proof-JDP-gen-linear)")
_factory("elim-ucb", "ridge", "none",
         "non-private action elimination, ridge pooled over all past epochs, UCB play among the survivors "
         "(alg:batch-cb-meta with UCB play; practical reference)", counterpart="elim-jdp-ucb", play="ucb",
         pooling="ridge")
_factory("elim-jdp-ucb", "iw-regression-dp", "jdp",
         f"joint-DP action elimination with IW-Regression-DP, UCB play among the survivors, first epoch of "
         f"{JDP_UCB_FIRST_EPOCH} rounds (alg:batch-cb-JDP with UCB play)", play="ucb", first_epoch=JDP_UCB_FIRST_EPOCH)
_factory("elim-ldp", "iw-regression-ldp", "ldp",
         "local-DP action elimination with IW-Regression-LDP (appdx:regret-upper-LDP)")
_factory("elim-ldp-ssp", "ssp-local", "ldp",
         "local-DP action elimination with local sufficient-statistics perturbation (def:SSP)")
_factory("elim-glm-ldp", "iw-glm-ldp", "ldp",
         "local-DP GLM action elimination with IW-GLM-LDP (appdx:regret-upper-LDP, remark)")

_factory("elim-ldp-greedy", "iw-regression-ldp", "ldp",
         "local-DP action elimination with IW-Regression-LDP, greedy play among the survivors with (d/t)^(1/3) "
         "exploration on their spanner (appdx:regret-upper-LDP with greedy play)", play="greedy")
