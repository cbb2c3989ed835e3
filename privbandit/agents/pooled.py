"""Joint-DP elimination that pools every epoch's released IW statistics and warm-starts W.

In words. ``elim-jdp-ucb`` fits each epoch alone and spends half of it learning W. This agent runs the same
oracle, IW-Regression-DP (`alg:JDP-linear-regression`), with three changes, each a function of what the
oracle released (research note "jdp-cost", section 3):

- **warm-started W.** Epoch j's spectral iteration (`alg:W-JDP`) starts from the W_{j-1} the previous epoch
  released instead of I, so one W stage on ``w_fraction = 0.2`` of the epoch's users suffices and 80% of
  them regress instead of 50%;
- **pooled statistics.** Each epoch's released (W_j, psi~_j, Psi~_j) is mapped back to original coordinates,
  A_j = W_j^{-1} Psi~_j (the noisy weighted Gram) and b_j = W_j^{-1} psi~_j (the noisy weighted X^T y), A_j
  symmetrised and projected onto the PSD cone in the W_j metric, and all epochs are summed with weights n_j
  (their regression users) and solved once with one regulariser:

      G = sum_j n_j A_j,   b = sum_j n_j b_j,   R = r sum_j n_j lambda_j W_j^{-1},   theta = (G + R)^{-1} b

  (one epoch with r = 1 gives the oracle's own (Psi~ + lambda I)^{-1} psi~);
- **a width of variance plus bias.** With H = G + R, the sampling plus privacy-noise covariance
  C = G + sum_j n_j^2 (sd_psi_j^2 + S^2 sd_Psi_j^2) W_j^{-2} and the plug-in regularisation bias
  v = H^{-1} R theta, the radius is ||M phi|| with

      M^2 = H^{-1} (z^2 C + (rho S)^2 R^2) H^{-1} + kappa^2 v v^T.

Play: elimination over the released pooled estimates (`alg:plan`), then UCB among the survivors; first epoch
256 rounds, doubling, as ``elim-jdp-ucb``.

References
----------
Source paper, `alg:W-JDP`, `alg:JDP-linear-regression`, `alg:batch-cb-JDP`, `alg:plan`, `def:JDP-interactive`;
the research note "Where the joint-DP agent's privacy cost comes from" (privbandit's jdp-cost study),
sections 3 (the formulas) and 4 (the privacy argument).
"""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any, ClassVar

import numpy as np

from .._validation import POSITIVE, InstanceOf, Interval, Options, ParameterConstraints, check_parameters
from ..infomatrix import psd_project, psd_sqrt, symmetrize
from ..oracles.base import Estimate, Oracle
from ..oracles.iw_jdp import IWRegressionDP, IWRelease
from .base import register_agent
from .elimination import JDP_UCB_FIRST_EPOCH, EliminationAgent

NON_NEGATIVE = Interval(numbers.Real, 0.0, None, closed="left")

__all__ = ["POOLED_JDP_CONSTANTS", "POOLED_JDP_ORACLE", "PooledJDPAgent", "PooledStatistics"]

POOLED_JDP_ORACLE: dict[str, Any] = dict(n_stages=1, w_fraction=0.2)
"""The oracle's W schedule under a warm start: one W stage on 20% of each epoch's users (public, fixed in
advance; screened at T = 2^17, 4 seeds, on rare-direction, heavy-tailed and spiky: research note, section 3)."""

POOLED_JDP_CONSTANTS: dict[str, float] = dict(reg_scale=0.25, z=2.0, norm_bound=1.0, kappa=1.5, rho=0.25)
"""Public constants of the pooled estimate and its width (research note, section 3): the regulariser scale r,
the Gaussian quantile z of the variance term, S >= ||theta*||, and the plug-in bias factors kappa and rho.
Tuned offline on simulated families (rare-direction, heavy-tailed, spiky), never on the live run."""


@dataclasses.dataclass
class PooledStatistics:
    """Running sums over the released epochs, in original coordinates (O(d^2); released values only).

    Attributes
    ----------
    gram : ndarray (d, d)
        G = sum_j n_j psd_W(A_j).
    xty : ndarray (d,)
        sum_j n_j b_j.
    reg : ndarray (d, d)
        sum_j n_j lambda_j W_j^{-1} (the regulariser before the scale r).
    noise : ndarray (d, d)
        sum_j n_j^2 (sd_psi_j^2 + S^2 sd_Psi_j^2) W_j^{-2}, the privacy noise's covariance of G theta - b.
    n : int
        sum_j n_j.
    """

    gram: np.ndarray
    xty: np.ndarray
    reg: np.ndarray
    noise: np.ndarray
    n: int = 0

    @classmethod
    def zeros(cls, dim: int) -> PooledStatistics:
        """No epoch yet."""
        return cls(np.zeros((dim, dim)), np.zeros(dim), np.zeros((dim, dim)), np.zeros((dim, dim)))

    def add(self, release: IWRelease, norm_bound: float) -> None:
        """Add one epoch's release (nothing when it had no regression users).

        A_j = W^{-1} Psi~ is symmetrised and projected onto the PSD cone in the W metric,
        W^{-1/2} P(W^{1/2} sym(A_j) W^{1/2}) W^{-1/2}: the true weighted Gram is PSD, so this only moves the
        noisy one closer (post-processing).
        """
        if release.n == 0 or release.psi is None or release.psi_mat is None:
            return
        vals, vecs = np.linalg.eigh(symmetrize(release.w))
        w_inv = (vecs / vals) @ vecs.T
        w_half, w_inv_half = (vecs * np.sqrt(vals)) @ vecs.T, (vecs / np.sqrt(vals)) @ vecs.T
        a = symmetrize(w_inv @ release.psi_mat)
        a = symmetrize(w_inv_half @ psd_project(w_half @ a @ w_half) @ w_inv_half)
        n = release.n
        self.gram += n * a
        self.xty += n * (w_inv @ release.psi)
        self.reg += n * release.lam * w_inv
        noise_var = release.noise_sd_psi ** 2 + norm_bound ** 2 * release.noise_sd_Psi ** 2
        self.noise += n * n * noise_var * (w_inv @ w_inv)
        self.n += n


class PooledJDPAgent(EliminationAgent):
    """Joint-DP elimination on pooled, warm-started IW-Regression-DP releases, UCB play, variance-plus-bias width.

    Each epoch runs a fresh IW-Regression-DP fit (`alg:JDP-linear-regression`) on its own users, whose
    spectral iteration (`alg:W-JDP`) starts from the W the previous epoch released. At each epoch end the
    agent reads the fit's release (``estimate.release``, an :class:`~privbandit.oracles.iw_jdp.IWRelease`:
    W_j, psi~_j, Psi~_j, lambda_j, the noise sds, n_j) and releases its own Estimate, the pooled solve over
    all epochs so far with the variance-plus-bias radius (module docstring; research note, section 3). The
    planner then eliminates over these pooled estimates (`alg:plan`) and plays UCB among the survivors.

    Parameters
    ----------
    oracle : IWRegressionDP or str
        The oracle (default ``"iw-regression-dp"``, built with :data:`POOLED_JDP_ORACLE`, one W stage on 20%
        of each epoch, updated by ``oracle_kwargs``); an instance is used as given.
    reg_scale : float
        r, the scale of the pooled regulariser r sum_j n_j lambda_j W_j^{-1} (0.25).
    z : float
        Gaussian quantile of the variance term (2).
    norm_bound : float
        S >= ||theta*|| (1): weighs Psi~'s noise in the variance and the worst-case part of the bias.
    kappa, rho : float
        Factors of the plug-in bias kappa^2 v v^T and of the worst-case bias (rho S)^2 R^2 (1.5, 0.25).
    play : {"ucb", "spanner", "greedy"}
        The play rule among the survivors (UCB by default).
    first_epoch, growth : int, float
        The epoch schedule (256 and doubling, as ``elim-jdp-ucb``).
    **kwargs
        The rest of :class:`~privbandit.agents.EliminationAgent`'s arguments (``epsilon``, ``delta``,
        ``oracle_kwargs``, ``width_cap``, ...).

    Notes
    -----
    Privacy ((epsilon, delta)-JDP, `def:JDP-interactive`; research note, section 4):

    - The oracle is unchanged. Each epoch's fit uses that epoch's users only: one SymPriv release of H on the
      W stage (sensitivity 2B/(gamma N)) and one joint Gaussian release of (B psi, vec Psi) on the regression
      users (sensitivity 2 sqrt(2) B/(gamma n)). Both bounds hold for every PSD W, because
      ||W phi|| / (1 + gamma ||W phi||) < 1/gamma.
    - Warm start: starting from the released W_{j-1} changes only which public matrix weights the epoch's rows;
      the sensitivities stay the same. The number of W stages and ``w_fraction`` are public hyperparameters,
      fixed before the run.
    - Composition: every user enters exactly one release at the full (epsilon, delta); epochs and stages use
      disjoint users, so they compose in parallel, and choosing W adaptively from earlier releases is allowed.
    - Post-processing: pooling, the PSD projection, the regulariser, the width and UCB play are functions of
      the released (W_j, psi~_j, Psi~_j) and of public quantities only (lambda_j, the noise sds, n_j, r, z, S,
      kappa, rho, all fixed in advance) and of the current user's own features. Nothing reads the fits'
      running sums. By the billboard argument the agent is (epsilon, delta)-JDP.

    References
    ----------
    Source paper, `alg:W-JDP`, `alg:JDP-linear-regression`, `alg:batch-cb-JDP`, `alg:plan`,
    `def:JDP-interactive`; research note "jdp-cost", sections 3 and 4.

    Examples
    --------
    >>> from privbandit.agents import check_agent, make_agent
    >>> agent = make_agent("elim-jdp-pooled", epsilon=1.0, delta=1e-5)
    >>> agent.oracle.n_stages, agent.oracle.w_fraction, agent.first_epoch
    (1, 0.2, 256)
    >>> check_agent(make_agent("elim-jdp-pooled", epsilon=1.0, delta=1e-5, first_epoch=16), horizon=64)
    """

    name: ClassVar[str] = "elim-jdp-pooled"
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **EliminationAgent.parameter_constraints,
        "oracle": [Options(("iw-regression-dp",)), InstanceOf(IWRegressionDP, "an IWRegressionDP oracle")],
        "model": [None, Options(("jdp",))], "reg_scale": [POSITIVE], "z": [NON_NEGATIVE],
        "norm_bound": [POSITIVE], "kappa": [NON_NEGATIVE], "rho": [NON_NEGATIVE]}

    def __init__(self, oracle: Oracle | str = "iw-regression-dp", *, reg_scale: float = 0.25, z: float = 2.0,
                 norm_bound: float = 1.0, kappa: float = 1.5, rho: float = 0.25, play: str = "ucb",
                 first_epoch: int = JDP_UCB_FIRST_EPOCH, growth: float = 2.0, **kwargs: Any) -> None:
        check_parameters(type(self), dict(oracle=oracle, oracle_kwargs=kwargs.get("oracle_kwargs")),
                         {k: self.parameter_constraints[k] for k in ("oracle", "oracle_kwargs")})
        if isinstance(oracle, str):
            kwargs["oracle_kwargs"] = {**POOLED_JDP_ORACLE, **(kwargs.get("oracle_kwargs") or {})}
        super().__init__(oracle, play=play, first_epoch=first_epoch, growth=growth, **kwargs)
        if not isinstance(self.oracle, IWRegressionDP):
            raise ValueError(f"oracle must be IW-Regression-DP ('iw-regression-dp'), whose Estimate carries its "
                             f"release; got {self.oracle.name!r}")
        if self.pooling != "none":
            raise ValueError(f"pooling must be 'none' (this agent pools released statistics), got {self.pooling!r}")
        self._store_parameters(reg_scale=reg_scale, z=z, norm_bound=norm_bound, kappa=kappa, rho=rho)

    def _reset(self) -> None:
        self._warm: np.ndarray | None = None        # the last released W (public)
        self.pooled = PooledStatistics.zeros(self._require_spec().dim)
        super()._reset()

    def _fit_oracle(self) -> Oracle:
        """The run's oracle, warm-started from the last released W (from the second epoch on)."""
        if self._warm is None:
            return self._run_oracle
        return dataclasses.replace(self._run_oracle, initial_w=self._warm)

    def _release(self) -> Estimate:
        """The epoch's fit releases; the agent publishes the pooled estimate over every epoch so far."""
        release = self.fit.result().release
        if not isinstance(release, IWRelease):
            raise TypeError("the oracle's Estimate must carry its IWRelease (estimate.release)")
        self._warm = release.w
        self.pooled.add(release, self.norm_bound)
        return pooled_estimate(self.pooled, self.fit.link, reg_scale=self.reg_scale, z=self.z,
                               norm_bound=self.norm_bound, kappa=self.kappa, rho=self.rho, release=release)


def pooled_estimate(stats: PooledStatistics, link: Any, *, reg_scale: float, z: float, norm_bound: float,
                    kappa: float, rho: float, release: IWRelease | None = None) -> Estimate:
    """theta = (G + R)^{-1} b and the radius ||M phi|| of the pooled statistics (module docstring).

    Parameters
    ----------
    stats : PooledStatistics
        The released epochs' sums.
    link : Link
        The model's link (the width is divided by its mu, as the IW oracle's).
    reg_scale, z, norm_bound, kappa, rho : float
        r, z, S, kappa and rho (:data:`POOLED_JDP_CONSTANTS`).
    release : IWRelease, optional
        The latest epoch's release, carried on the Estimate.

    Returns
    -------
    Estimate
        theta, width matrix M (symmetric PSD), width scale 1 / mu; with no regression users yet, theta = 0
        and the trivial radius ||phi|| / mu.

    References
    ----------
    Research note "jdp-cost", section 3; source paper `alg:JDP-linear-regression`.
    """
    d = stats.xty.shape[0]
    info = dict(n_pooled=stats.n, reg_scale=reg_scale)
    if stats.n == 0:
        return Estimate(np.zeros(d), link, np.eye(d), 1.0 / link.mu, info=dict(info, fallback="no regression rows"),
                        release=release)
    reg = reg_scale * stats.reg
    h = symmetrize(stats.gram + reg)
    h_inv = np.linalg.inv(h)
    theta = h_inv @ stats.xty
    cov = stats.gram + stats.noise
    bias = h_inv @ reg @ theta
    m2 = h_inv @ (z * z * cov + (rho * norm_bound) ** 2 * (reg @ reg)) @ h_inv + kappa * kappa * np.outer(bias, bias)
    return Estimate(theta, link, psd_sqrt(m2), 1.0 / link.mu, info=info, release=release)


def _make(*, epsilon: float | None = None, delta: float | None = None, oracle: Oracle | None = None,
          **kwargs: Any) -> PooledJDPAgent:
    if oracle is not None:
        return PooledJDPAgent(oracle, epsilon=epsilon, delta=delta, **kwargs)   # a name takes the budget
    return PooledJDPAgent(epsilon=epsilon, delta=delta, **kwargs)


_make.__doc__ = ("joint-DP elimination on pooled, warm-started IW-Regression-DP releases with a variance-plus-bias "
                 "width, UCB play, first epoch 256 (alg:batch-cb-JDP on pooled alg:JDP-linear-regression releases)"
                 "\n\nKeyword arguments go to :class:`PooledJDPAgent`.")
register_agent("elim-jdp-pooled", _make, description=_make.__doc__.split("\n")[0], private=True)
