"""Private elimination that pools every epoch's released IW statistics and warm-starts the weighting matrix.

In words. ``elim-jdp-ucb`` fits each epoch alone and spends half of it learning W. ``elim-jdp-pooled`` runs the
same oracle, IW-Regression-DP (`alg:JDP-linear-regression`), with three changes, each a function of what the
oracle released (research note "jdp-cost", section 3):

- **warm-started W.** Epoch j's spectral iteration (`alg:W-JDP`) starts from the W_{j-1} the previous epoch
  released instead of I, so one W stage on ``w_fraction = 0.2`` of the epoch's users suffices and 80% of
  them regress instead of 50%;
- **pooled statistics.** Each epoch's released (W_j, psi~_j, Psi~_j) is mapped back to original coordinates:
  A_j, the noisy weighted Gram, is the symmetric matrix closest to solving W_j A = Psi~_j
  (:func:`~privbandit.linalg.symmetric_solution`), projected onto the PSD cone in the W_j metric, and
  b_j = W_j^{-1} psi~_j is the noisy weighted X^T y; all epochs are summed with weights n_j (their regression
  users) and solved once with one regulariser:

      G = sum_j n_j A_j,   b = sum_j n_j b_j,   R = r sum_j n_j lambda_j W_j^{-1},   theta = (G + R)^{-1} b

  (one epoch with r = 1 gives the oracle's own (Psi~ + lambda I)^{-1} psi~). The research note symmetrised
  W_j^{-1} Psi~_j, (W_j^{-1} Psi~_j + Psi~_j^T W_j^{-1}) / 2: its second half carries the noise of the
  well-observed directions into the rarely observed ones, where it is not in the variance below (on spiky
  contexts, residuals b_j - A_j theta* of 8 noise sds along a rare direction; a whole epoch then played an
  arm that only this error made look good);
- **a width of variance plus bias.** With H = G + R, the sampling plus privacy-noise covariance
  C = G + sum_j n_j^2 (sd_psi_j^2 + S^2 sd_Psi_j^2) W_j^{-2}, D = sum_j n_j (psd(A_j) - A_j) what the
  projections added to G, and the plug-in bias v = H^{-1} (R + D) theta, the radius is ||M phi|| with

      M^2 = H^{-1} (z^2 C + (rho S)^2 R^2) H^{-1} + kappa^2 v v^T.

Play: elimination over the last ``plan_window`` = 2 pooled releases (`alg:plan`), then UCB among the
survivors, scored by the lowest of their upper bounds; first epoch 256 rounds, as ``elim-jdp-ucb``, each next
one 1.5 times longer (:data:`POOLED_JDP_GROWTH`). Planning on every release would keep an under-covering release
in the policy for the rest of the run; doubling epochs would put half the run under the last release.

``elim-ldp-pooled`` and ``elim-ldp-greedy-pooled`` do the same with IW-Regression-LDP (`alg:LDP-linear-regression`):
what its server holds (U_j and the means psi_hat_j, Psi_hat_j of the randomized outputs), warm-started U, one
spectral stage on 20% of each epoch, the sampling covariance bounded by sum_j n_j U_j^{-2}, and planning on the
latest release only.

References
----------
Source paper, `alg:W-JDP`, `alg:JDP-linear-regression`, `alg:batch-cb-JDP`, `alg:plan`, `def:JDP-interactive`,
`alg:U-LDP`, `alg:LDP-linear-regression`, `def:LDP`; the research note "Where the joint-DP agent's privacy cost
comes from" (privbandit's jdp-cost study), sections 3 (the formulas) and 4 (the privacy argument).
"""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any, ClassVar

import numpy as np

from .._validation import (
    POSITIVE,
    POSITIVE_INT,
    Boolean,
    InstanceOf,
    Interval,
    Options,
    ParameterConstraints,
    check_parameters,
)
from ..linalg import psd_project, psd_sqrt, symmetric_part, symmetric_solution
from ..oracles.base import Estimate, Oracle
from ..oracles.iw_jdp import IWRegressionDP, IWRelease
from ..oracles.iw_ldp import IWRegressionLDP, LDPRelease
from ._oracle_arg import register_variant
from .elimination import JDP_UCB_FIRST_EPOCH, EliminationAgent
from .planner import stack_estimates

NON_NEGATIVE = Interval(numbers.Real, 0.0, None, closed="left")

__all__ = ["POOLED_JDP_CONSTANTS", "POOLED_JDP_GROWTH", "POOLED_JDP_ORACLE", "POOLED_LDP_CONSTANTS",
           "POOLED_LDP_FIRST_EPOCH", "POOLED_LDP_ORACLE", "PooledEliminationAgent", "PooledJDPAgent", "PooledLDPAgent",
           "PooledStatistics", "pooled_estimate", "release_weighting"]


POOLED_JDP_ORACLE: dict[str, Any] = dict(n_stages=1, w_fraction=0.2)
"""The oracle's W schedule under a warm start: one W stage on 20% of each epoch's users (public, fixed in
advance; screened at T = 2^17, 4 seeds, on rare-direction, heavy-tailed and spiky: research note, section 3)."""

POOLED_JDP_CONSTANTS: dict[str, float] = dict(reg_scale=0.25, z=2.0, norm_bound=1.0, kappa=1.5, rho=0.25)
"""Public constants of the pooled estimate and its width (research note, section 3): the regulariser scale r,
the Gaussian quantile z of the variance term, S >= ||theta*||, and the plug-in bias factors kappa and rho.
Tuned offline on simulated families (rare-direction, heavy-tailed, spiky), never on the live run."""

POOLED_JDP_GROWTH: float = 1.5
"""Epoch growth of ``elim-jdp-pooled`` (public, fixed in advance). A release whose intervals miss theta* holds
the policy for one whole epoch; with doubling epochs the last one is half the run, and such a release cost
80549 on one spiky seed whose median is 3873 (the paper suite's cells, T = 2^20, epsilon 1). Pooling makes
shorter epochs cheap: every epoch's statistics still enter the solve. Chosen from 2 and 1.5 on
rare-direction, heavy-tailed and spiky (T = 2^20, 10 seeds, epsilon 0.1, 0.3, 1); the measurements are in the
changelog."""

POOLED_LDP_ORACLE: dict[str, Any] = dict(stages=1, u_fraction=0.2)
"""IW-Regression-LDP's U schedule under a warm start: one spectral stage on 20% of each epoch's users (public,
fixed in advance)."""

POOLED_LDP_CONSTANTS: dict[str, float] = dict(reg_scale=0.25, z=2.0, norm_bound=1.0, kappa=1.5, rho=0.25)
"""The local-DP agent's r, z, S, kappa and rho (as :data:`POOLED_JDP_CONSTANTS`)."""

POOLED_LDP_FIRST_EPOCH = 1024
"""The local-DP agent's first epoch (public, fixed in advance)."""


def release_weighting(release: IWRelease | LDPRelease) -> np.ndarray:
    """The public weighting matrix of a release: W of IW-Regression-DP, U of IW-Regression-LDP."""
    return release.w if isinstance(release, IWRelease) else release.u


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
    sampling : ndarray (d, d)
        A bound on the sampling covariance of G theta* - b: G itself for IW-Regression-DP's weights
        1/(1 + gamma ||W phi||) <= 1 and |y| <= 1; sum_j n_j U_j^{-2} for IW-Regression-LDP's unit
        directions U phi / ||U phi||.
    shift : ndarray (d, d)
        sum_j n_j (psd_W(A_j) - A_j), what the PSD projections added to G: a data-dependent regulariser
        whose bias the width may count.
    n : int
        sum_j n_j.
    """

    gram: np.ndarray
    xty: np.ndarray
    reg: np.ndarray
    noise: np.ndarray
    sampling: np.ndarray
    shift: np.ndarray
    n: int = 0

    @classmethod
    def zeros(cls, dim: int) -> PooledStatistics:
        """No epoch yet."""
        return cls(*(np.zeros((dim, dim)) if k != 1 else np.zeros(dim) for k in range(6)))

    def add(self, release: IWRelease | LDPRelease, norm_bound: float) -> None:
        """Add one epoch's release (nothing when it had no regression users).

        A_j = argmin over symmetric A of ||W A - Psi~||_F (:func:`~privbandit.linalg.symmetric_solution`;
        the true weighted Gram is symmetric, and this keeps each entry's noise at most that of W^{-1} Psi~),
        then projected onto the PSD cone in the W metric, W^{-1/2} P(W^{1/2} A_j W^{1/2}) W^{-1/2}: the true
        weighted Gram is PSD, so this only moves the noisy one closer (post-processing).
        """
        if release.n == 0 or release.psi is None or release.psi_mat is None:
            return
        vals, vecs = np.linalg.eigh(symmetric_part(release_weighting(release)))
        w_inv = (vecs / vals) @ vecs.T
        w_half, w_inv_half = (vecs * np.sqrt(vals)) @ vecs.T, (vecs / np.sqrt(vals)) @ vecs.T
        raw = symmetric_solution(release_weighting(release), release.psi_mat)
        a = symmetric_part(w_inv_half @ psd_project(w_half @ raw @ w_half) @ w_inv_half)
        n = release.n
        self.gram += n * a
        self.shift += n * (a - raw)
        self.xty += n * (w_inv @ release.psi)
        self.reg += n * release.lam * w_inv
        noise_var = release.noise_sd_psi ** 2 + norm_bound ** 2 * release.noise_sd_Psi ** 2
        w_inv2 = w_inv @ w_inv
        self.noise += n * n * noise_var * w_inv2
        self.sampling += n * a if isinstance(release, IWRelease) else n * w_inv2
        self.n += n


class PooledEliminationAgent(EliminationAgent):
    """Elimination on pooled, warm-started IW releases (the part the joint-DP and local-DP agents share).

    Subclasses set the oracle they accept (``oracle_class``, ``oracle_name``), the field of its warm start
    (``warm_field``), the oracle's W schedule under a warm start (``default_oracle``) and the registered name.
    Not registered itself.
    """

    oracle_class: ClassVar[type] = IWRegressionDP
    oracle_name: ClassVar[str] = "iw-regression-dp"
    warm_field: ClassVar[str] = "initial_w"
    default_oracle: ClassVar[dict[str, Any]] = {}
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **EliminationAgent.parameter_constraints, "reg_scale": [POSITIVE], "z": [NON_NEGATIVE],
        "norm_bound": [POSITIVE], "kappa": [NON_NEGATIVE], "rho": [NON_NEGATIVE], "plan_window": [None, POSITIVE_INT],
        "projection_bias": [Boolean()]}

    def __init__(self, oracle: Oracle | str, *, reg_scale: float, z: float, norm_bound: float, kappa: float,
                 rho: float, plan_window: int | None, projection_bias: bool, play: str, first_epoch: int, growth: float,
                 **kwargs: Any) -> None:
        check_parameters(type(self), dict(oracle=oracle, oracle_kwargs=kwargs.get("oracle_kwargs")),
                         {k: self.parameter_constraints[k] for k in ("oracle", "oracle_kwargs")})
        if isinstance(oracle, str):
            kwargs["oracle_kwargs"] = {**self.default_oracle, **(kwargs.get("oracle_kwargs") or {})}
        super().__init__(oracle, play=play, first_epoch=first_epoch, growth=growth, **kwargs)
        if not isinstance(self.oracle, self.oracle_class):
            raise ValueError(f"oracle must be {self.oracle_class.__name__} ({self.oracle_name!r}), whose Estimate "
                             f"carries its release; got {self.oracle.name!r}")
        if self.pooling != "none":
            raise ValueError(f"pooling must be 'none' (this agent pools released statistics), got {self.pooling!r}")
        self._store_parameters(reg_scale=reg_scale, z=z, norm_bound=norm_bound, kappa=kappa, rho=rho,
                               plan_window=plan_window, projection_bias=projection_bias)

    def _reset(self) -> None:
        self._warm: np.ndarray | None = None        # the last released W (public)
        self.pooled = PooledStatistics.zeros(self._require_spec().dim)
        super()._reset()

    def _fit_oracle(self) -> Oracle:
        """The run's oracle, warm-started from the last released W (from the second epoch on)."""
        oracle = super()._fit_oracle()
        if self._warm is None:
            return oracle
        return dataclasses.replace(oracle, **{self.warm_field: self._warm})

    def _release(self) -> Estimate:
        """The epoch's fit releases; the agent publishes the pooled estimate over every epoch so far."""
        release = self.fit.result().release
        if not isinstance(release, (IWRelease, LDPRelease)):
            raise TypeError("the oracle's Estimate must carry its release (estimate.release)")
        self._warm = release_weighting(release)
        self.pooled.add(release, self.norm_bound)
        return pooled_estimate(self.pooled, self.fit.link, reg_scale=self.reg_scale, z=self.z,
                               norm_bound=self.norm_bound, kappa=self.kappa, rho=self.rho, release=release,
                               projection_bias=self.projection_bias)

    def _on_epoch_end(self, estimate: Estimate) -> None:
        super()._on_epoch_end(estimate)
        if self.plan_window is not None:    # each pooled estimate summarises every earlier one
            recent = {id(e) for e in self.estimates[-self.plan_window:]}
            self._informative = [e for e in self._informative if id(e) in recent]

    def stacked_estimates(self):
        """As the elimination agent's, over the last ``plan_window`` releases only (all with None)."""
        if self.plan_window is None or self._stacks is not None:
            return super().stacked_estimates()
        recent = self.estimates[-self.plan_window:]
        informative = {id(e) for e in self._informative}
        index = np.array([j for j, e in enumerate(recent) if id(e) in informative], dtype=np.int64)
        informative_stack = stack_estimates(self._informative) if self._informative else None
        self._stacks = (stack_estimates(recent), informative_stack, index)
        return self._stacks


class PooledJDPAgent(PooledEliminationAgent):
    """Joint-DP elimination on pooled, warm-started IW-Regression-DP releases, UCB play, variance-plus-bias width.

    Each epoch runs a fresh IW-Regression-DP fit (`alg:JDP-linear-regression`) on its own users, whose
    spectral iteration (`alg:W-JDP`) starts from the W the previous epoch released. At each epoch end the
    agent reads the fit's release (``estimate.release``, an :class:`~privbandit.oracles.iw_jdp.IWRelease`:
    W_j, psi~_j, Psi~_j, lambda_j, the noise sds, n_j) and releases its own Estimate, the pooled solve over
    all epochs so far with the variance-plus-bias radius (module docstring; research note, section 3). The
    planner then eliminates over the latest pooled estimate (`alg:plan`) and plays UCB among the survivors.

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
        Factors of the plug-in bias kappa^2 v v^T and of the worst-case bias (rho S)^2 R^2 (1.5, 0.25). Tuned for
        regret, the defaults' widths cover less than 95% of fresh features in some settings; ``rho=1`` bounds the
        regulariser's bias at its worst case (the agents guide, ``docs/guide/agents.md``, "Pooled elimination and
        its widths", shows the measured coverage and regret of both).
    plan_window : int or None
        How many of the latest releases the elimination test and the UCB score use (2; None: every release,
        as the elimination agent does). Each pooled estimate summarises every earlier epoch, so an old
        release adds little information, while intersecting its intervals keeps a release that missed
        theta* in the policy for the rest of the run (research note, section 3).
    projection_bias : bool
        Whether the plug-in bias counts what the PSD projections added to G (default True): the projection
        acts as a data-dependent regulariser and shrinks theta along weakly observed directions.
    play : {"ucb", "spanner", "greedy"}
        The play rule among the survivors (UCB by default).
    first_epoch, growth : int, float
        The epoch schedule (first epoch 256 rounds, as ``elim-jdp-ucb``; growth :data:`POOLED_JDP_GROWTH`).
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
    - Post-processing: pooling, the PSD projection, the regulariser, the width, the choice of the releases
      planned on and UCB play are functions of the released (W_j, psi~_j, Psi~_j) and of public quantities
      only (lambda_j, the noise sds, n_j, r, z, S, kappa, rho, all fixed in advance) and of the current
      user's own features. Nothing reads the fits' running sums. By the billboard argument the agent is
      (epsilon, delta)-JDP.

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
    default_oracle: ClassVar[dict[str, Any]] = POOLED_JDP_ORACLE
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **PooledEliminationAgent.parameter_constraints,
        "oracle": [Options(("iw-regression-dp",)), InstanceOf(IWRegressionDP, "an IWRegressionDP oracle")],
        "model": [None, Options(("jdp",))]}

    def __init__(self, oracle: Oracle | str = "iw-regression-dp", *, reg_scale: float = 0.25, z: float = 2.0,
                 norm_bound: float = 1.0, kappa: float = 1.5, rho: float = 0.25, plan_window: int | None = 2,
                 projection_bias: bool = True, play: str = "ucb", first_epoch: int = JDP_UCB_FIRST_EPOCH,
                 growth: float = POOLED_JDP_GROWTH, **kwargs: Any) -> None:
        super().__init__(oracle, reg_scale=reg_scale, z=z, norm_bound=norm_bound, kappa=kappa, rho=rho,
                         plan_window=plan_window, projection_bias=projection_bias, play=play,
                         first_epoch=first_epoch, growth=growth, **kwargs)


class PooledLDPAgent(PooledEliminationAgent):
    """Local-DP elimination on pooled, warm-started IW-Regression-LDP releases (UCB or greedy play).

    Each epoch runs a fresh IW-Regression-LDP fit (`alg:LDP-linear-regression`) on its own users: the first
    ``u_fraction`` of them (20% by default, :data:`POOLED_LDP_ORACLE`) run one stage of Spectral-Iteration-LDP
    (`alg:U-LDP`) started from the U the previous epoch released, the others send their randomized
    (psi, Psi). At each epoch end the agent reads what the server holds (``estimate.release``, an
    :class:`~privbandit.oracles.iw_ldp.LDPRelease`: U_j, psi_hat_j, Psi_hat_j, lambda_j, the noise sds,
    n_j) and releases the pooled solve over all epochs with the variance-plus-bias radius, exactly as
    :class:`PooledJDPAgent` does with W_j (module docstring), except that the sampling covariance is bounded
    by sum_j n_j U_j^{-2} (each user's statistic is a unit direction U phi / ||U phi|| times y or phi^T).

    Parameters
    ----------
    oracle : IWRegressionLDP or str
        The oracle (default ``"iw-regression-ldp"`` with :data:`POOLED_LDP_ORACLE`, updated by
        ``oracle_kwargs``); an instance is used as given.
    reg_scale, z, norm_bound, kappa, rho, plan_window, projection_bias :
        As in :class:`PooledJDPAgent` (defaults :data:`POOLED_LDP_CONSTANTS`; ``plan_window`` 1, the latest
        release only).
    play : {"ucb", "greedy", "spanner"}
        The play rule among the survivors (UCB; ``elim-ldp-greedy-pooled`` registers greedy play with the
        (d/t)^(1/3) exploration of ``elim-ldp-greedy``).
    first_epoch, growth : int, float
        The epoch schedule (:data:`POOLED_LDP_FIRST_EPOCH` and doubling).
    **kwargs
        The rest of :class:`~privbandit.agents.EliminationAgent`'s arguments.

    Notes
    -----
    Privacy ((epsilon, delta)-LDP, `def:LDP`; source paper `alg:LDP-linear-regression`, `alg:U-LDP`):

    - Every user is in exactly one stage of one epoch and randomizes once, on their own device, through a
      channel fixed before they arrive: a spectral user sends SymPriv(U^{1/2} phi phi^T U^{1/2} / ||U phi||)
      (Frobenius norm <= ||phi|| <= B, `lem:uxxu`; sensitivity 2B), a regression user the concatenation
      (U phi y / ||U phi||, U phi phi^T / (sqrt(B) ||U phi||)) through one Gaussian (norm <= sqrt(1 + B);
      sensitivity 2 sqrt(1 + B)), each calibrated to the full (epsilon, delta). (`alg:LDP-linear-regression`
      privatizes psi_t and Psi_t separately, Priv_2 and Priv_2B, which composes to more than (epsilon, delta);
      the oracle's one joint Gaussian keeps each user at (epsilon, delta).) The bounds hold for every U
      (the statistics are normalised by ||U phi||), so the warm start, a U computed from earlier epochs'
      randomized outputs only, changes which public matrix the channel uses, not its sensitivity. The
      paper's algorithm itself chooses the later stages' U from the earlier stages' outputs in this way.
    - The number of spectral stages, ``u_fraction`` and the epoch schedule are public, fixed in advance.
    - Everything else is post-processing of the randomized outputs: the server's means, the pooling over
      epochs, the PSD projection, the regulariser, the width, the releases planned on and the play rule
      read only (U_j, psi_hat_j, Psi_hat_j), public constants and the current user's own context.

    References
    ----------
    Source paper, `alg:U-LDP`, `alg:LDP-linear-regression`, `lem:uxxu`, `appdx:regret-upper-LDP`, `alg:plan`,
    `def:LDP`; research note "jdp-cost", section 3 (the pooled estimate and its width).

    Examples
    --------
    >>> from privbandit.agents import check_agent, make_agent
    >>> agent = make_agent("elim-ldp-pooled", epsilon=1.0, delta=1e-5)
    >>> agent.oracle.stages, agent.oracle.u_fraction, agent.play
    (1, 0.2, 'ucb')
    >>> check_agent(make_agent("elim-ldp-pooled", epsilon=1.0, delta=1e-5, first_epoch=16), horizon=64)
    """

    name: ClassVar[str] = "elim-ldp-pooled"
    oracle_class: ClassVar[type] = IWRegressionLDP
    oracle_name: ClassVar[str] = "iw-regression-ldp"
    warm_field: ClassVar[str] = "initial_u"
    default_oracle: ClassVar[dict[str, Any]] = POOLED_LDP_ORACLE
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **PooledEliminationAgent.parameter_constraints,
        "oracle": [Options(("iw-regression-ldp",)), InstanceOf(IWRegressionLDP, "an IWRegressionLDP oracle")],
        "model": [None, Options(("ldp",))]}

    def __init__(self, oracle: Oracle | str = "iw-regression-ldp", *,
                 reg_scale: float = POOLED_LDP_CONSTANTS["reg_scale"], z: float = POOLED_LDP_CONSTANTS["z"],
                 norm_bound: float = POOLED_LDP_CONSTANTS["norm_bound"], kappa: float = POOLED_LDP_CONSTANTS["kappa"],
                 rho: float = POOLED_LDP_CONSTANTS["rho"], plan_window: int | None = 1, projection_bias: bool = True,
                 play: str = "ucb", first_epoch: int = POOLED_LDP_FIRST_EPOCH, growth: float = 2.0,
                 **kwargs: Any) -> None:
        super().__init__(oracle, reg_scale=reg_scale, z=z, norm_bound=norm_bound, kappa=kappa, rho=rho,
                         plan_window=plan_window, projection_bias=projection_bias, play=play,
                         first_epoch=first_epoch, growth=growth, **kwargs)


def pooled_estimate(stats: PooledStatistics, link: Any, *, reg_scale: float, z: float, norm_bound: float,
                    kappa: float, rho: float, release: IWRelease | LDPRelease | None = None,
                    projection_bias: bool = False) -> Estimate:
    """theta = (G + R)^{-1} b and the radius ||M phi|| of the pooled statistics (module docstring).

    Parameters
    ----------
    stats : PooledStatistics
        The released epochs' sums.
    link : Link
        The model's link (the width is divided by its mu, as the IW oracle's).
    reg_scale, z, norm_bound, kappa, rho : float
        r, z, S, kappa and rho (:data:`POOLED_JDP_CONSTANTS`).
    release : IWRelease or LDPRelease, optional
        The latest epoch's release, carried on the Estimate.
    projection_bias : bool
        Whether the plug-in bias counts the PSD projections' shift: v = H^{-1} (R + D) theta with
        D = ``stats.shift`` (default False: v = H^{-1} R theta).

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
    h = symmetric_part(stats.gram + reg)
    h_inv = np.linalg.inv(h)
    theta = h_inv @ stats.xty
    cov = stats.sampling + stats.noise
    bias = h_inv @ (reg + stats.shift if projection_bias else reg) @ theta
    m2 = h_inv @ (z * z * cov + (rho * norm_bound) ** 2 * (reg @ reg)) @ h_inv + kappa * kappa * np.outer(bias, bias)
    return Estimate(theta, link, psd_sqrt(m2), 1.0 / link.mu, info=info, release=release)


register_variant(PooledJDPAgent, "elim-jdp-pooled", None, "jdp", "joint-DP elimination on pooled, warm-started "
                 "IW-Regression-DP releases with a variance-plus-bias width, UCB play, epochs from 256 "
                 "rounds growing 1.5x (alg:batch-cb-JDP on pooled alg:JDP-linear-regression releases)")
register_variant(PooledLDPAgent, "elim-ldp-pooled", None, "ldp", "local-DP elimination on pooled, warm-started "
                 "IW-Regression-LDP releases with a variance-plus-bias width, UCB play (alg:LDP-linear-regression "
                 "releases, pooled)")
register_variant(PooledLDPAgent, "elim-ldp-greedy-pooled", None, "ldp", "local-DP elimination on pooled, warm-started "
                 "IW-Regression-LDP releases, greedy play with (d/t)^(1/3) exploration on the survivors' spanner (as "
                 "elim-ldp-greedy, pooled)", play="greedy")
