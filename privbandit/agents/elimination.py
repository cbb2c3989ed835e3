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
every past epoch's (theta, M) gives the means and widths, then one vectorised spanner computation (:mod:`.spanner`). Past
estimates whose test provably keeps every arm (:func:`can_eliminate`) are skipped.

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
from typing import Any, ClassVar, Sequence

import numpy as np

from .._validation import check_int, check_positive, check_real
from ..oracles.base import Estimate, Oracle
from ._oracle_arg import resolve_oracle
from .base import BanditSpec, EpochAgent, register_agent
from .spanner import barycentric_spanner

_PLAN_CHUNK = 4096


def surviving_actions(estimates: Sequence[Estimate], features: np.ndarray, *, width_cap: float = 2.0,
                      tolerance: float = 1e-12) -> np.ndarray:
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
    m, k, d = x.shape
    alive = np.ones((m, k), dtype=bool)
    n_est = len(estimates)
    if n_est == 0 or m == 0:
        return alive
    # one (mK, d) x (d, J (d + 1)) product gives every epoch's predictor <phi, theta_tau> and M_tau phi
    basis = np.concatenate([np.stack([e.theta for e in estimates], axis=1)]
                           + [e.width_matrix.T for e in estimates], axis=1)
    proj = x.reshape(m * k, d) @ basis
    pred = proj[:, :n_est]
    mphi = proj[:, n_est:].reshape(m * k, n_est, d)
    rad = np.sqrt(np.einsum("njd,njd->nj", mphi, mphi))
    for j, est in enumerate(estimates):
        mean = est.link(pred[:, j]).reshape(m, k)
        width = np.minimum(est.link.lipschitz * est.width_scale * rad[:, j].reshape(m, k), width_cap)
        lcb_max = np.max(mean - width, axis=1, keepdims=True)
        kept = alive & (mean + width >= lcb_max - tolerance)
        # only inconsistent intervals (some past confidence bound failed) can empty the set; then this
        # epoch's test is skipped for that context rather than leaving nothing to play
        alive = np.where(kept.any(axis=1, keepdims=True), kept, alive)
    return alive


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
    lip = estimate.link.lipschitz
    smin = float(np.linalg.svd(estimate.width_matrix, compute_uv=False).min())
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

    Notes
    -----
    The first epoch has no estimate (f_0 = 0, b_0 = 1 eliminate nothing) and plays uniformly on a
    spanner of all actions. Ties are broken towards the lowest action index.

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

    def __init__(self, oracle: Oracle | str = "ridge", *, epsilon: float | None = None, delta: float | None = None,
                 model: str | None = None, oracle_kwargs: dict[str, Any] | None = None, spanner: bool = True,
                 spanner_constant: float = 2.0, width_cap: float = 2.0) -> None:
        super().__init__(resolve_oracle(oracle, epsilon=epsilon, delta=delta, model=model,
                                        oracle_kwargs=oracle_kwargs))
        if not isinstance(spanner, (bool, np.bool_)):
            raise TypeError(f"spanner must be a bool, got {type(spanner).__name__}")
        self.spanner = bool(spanner)
        self.spanner_constant = check_real("spanner_constant", spanner_constant, low=1.0, low_open=True)
        self.width_cap = check_positive("width_cap", width_cap)

    def _epoch_oracle(self, spec: BanditSpec) -> Oracle:
        """The oracle with the proofs' per-epoch confidence in theory mode, else ``self.oracle``."""
        if getattr(self.oracle, "constants", None) == "theory" and hasattr(self.oracle, "confidence"):
            return dataclasses.replace(self.oracle, confidence=theory_confidence(spec.horizon))
        return self.oracle

    def _reset(self) -> None:
        super()._reset()
        self._informative: list[Estimate] = []

    def _on_epoch_end(self, estimate: Estimate) -> None:
        # estimates whose test can never remove an arm are skipped by the planner (same survivors)
        if can_eliminate(estimate, self._require_spec().bound, self.width_cap):
            self._informative.append(estimate)

    def play_set(self, features: np.ndarray) -> np.ndarray:
        """The set the policy plays uniformly on, (m, K) booleans: the spanner of the survivors."""
        x = np.asarray(features, dtype=float)
        out = np.empty(x.shape[:2], dtype=bool)
        for lo in range(0, x.shape[0], _PLAN_CHUNK):
            part = x[lo:lo + _PLAN_CHUNK]
            alive = surviving_actions(self._informative, part, width_cap=self.width_cap)
            if self.spanner:
                alive = barycentric_spanner(part, alive, constant=self.spanner_constant)
            out[lo:lo + _PLAN_CHUNK] = alive
        return out

    def _choose(self, features: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        return uniform_over(self.play_set(features), uniforms[:, 0])

    def _probabilities(self, features: np.ndarray) -> np.ndarray:
        play = self.play_set(features)
        return play / play.sum(axis=1, keepdims=True)

    def describe(self) -> dict:
        """Agent, privacy and oracle names."""
        return dict(super().describe(), oracle=self.oracle.name)


def _factory(agent_name: str, oracle_name: str, model: str, description: str, counterpart: str | None = None) -> None:
    def make(*, epsilon: float | None = None, delta: float | None = None, oracle: Oracle | None = None,
             **kwargs: Any) -> EliminationAgent:
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
_factory("elim-ldp", "iw-regression-ldp", "ldp",
         "local-DP action elimination with IW-Regression-LDP (appdx:regret-upper-LDP)")
_factory("elim-ldp-ssp", "ssp-local", "ldp",
         "local-DP action elimination with local sufficient-statistics perturbation (def:SSP)")
_factory("elim-glm-ldp", "iw-glm-ldp", "ldp",
         "local-DP GLM action elimination with IW-GLM-LDP (appdx:regret-upper-LDP, remark)")

__all__ = ["EliminationAgent", "can_eliminate", "surviving_actions", "theory_confidence", "uniform_over"]
