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
one 1.5 times longer (:data:`POOLED_JDP_GROWTH`).

Every pooled agent is an :class:`~privbandit.agents.EliminationAgent` given :class:`PooledReleases` as its
``pooling`` learner, registered as a variant at the end of this module (oracle, learner, play rule, schedule).
``elim-ldp-pooled`` and ``elim-ldp-greedy-pooled`` do the same with IW-Regression-LDP
(`alg:LDP-linear-regression`): the first 20% of each epoch's users run one stage of Spectral-Iteration-LDP
(`alg:U-LDP`) from the U the previous epoch released, the others send their randomized (psi, Psi), and the
sampling covariance is bounded by sum_j n_j U_j^{-2}. ``elim-ldp-vec`` does it with IW-Vector-LDP
(:mod:`privbandit.oracles.iw_vec_ldp`): each user sends the one vector (U phi y / ||U phi||,
svec(U^{1/2} phi_r phi_r^T U^{1/2} / ||U phi_r||) / sqrt(r)), phi_r being phi shrunk to the public Gram radius r
(:data:`VECTOR_LDP_ORACLE`), through the pure epsilon-LDP L2-ball channel of Duchi, Jordan and Wainwright (2013),
so the Gram and the response come from the same users in one release, no user is spent on learning U alone (the
next epoch's U is one spectral step on the same reports), and the agent eliminates on the latest release, with its
own constants and epochs growing :data:`VECTOR_LDP_GROWTH` (the local-DP study, ``docs/guide/ldp_cost.md``);
``elim-glm-ldp-vec`` is it on the GLM's working rows.

Privacy of the linear agents ((epsilon, delta)-JDP, `def:JDP-interactive`, research note section 4; LDP, `def:LDP`).
The oracles are unchanged and each epoch's fit uses that epoch's users only. Each oracle's releases and
sensitivities (the Notes of :class:`~privbandit.oracles.iw_jdp.IWRegressionDP`,
:class:`~privbandit.oracles.iw_ldp.IWRegressionLDP` and :class:`~privbandit.oracles.iw_vec_ldp.IWVectorLDP`)
hold for every W or U, so the warm start, a matrix computed from earlier releases only, changes which public
matrix weights the rows, not a sensitivity. The stages, the fractions and the epoch schedule are public, fixed
in advance. Every user enters exactly one release of one epoch at the full budget; epochs and stages use
disjoint users, so they compose in parallel, and choosing W_j or U_j from earlier releases is allowed. Pooling,
the PSD projections, the regulariser, the width, the releases planned on and the play rule read only the
releases, public constants and the current user's own features (nothing reads a fit's running sums):
post-processing.

``elim-glm-jdp-pooled`` and ``elim-glm-ldp-pooled`` are the same two agents on a GLM's working rows
(:class:`GLMWorkingRows`, chosen at construction with ``rows=``; the linear agents use :class:`LinearRows`,
the rows as they are): each user of epoch j hands the unchanged oracle the IRLS row at the previous pooled
release theta_{j-1} (public), so the pooled solve is one private Newton step per epoch, released and played on
the linear predictor.

Privacy of the GLM agents: every working row keeps the bounds the oracles' sensitivities and randomizers are
computed from (:class:`GLMWorkingRows`); ``Agent.update`` clips each user's (phi, y) (refusing NaN and inf) and
``EpochFit.add_clipped`` refuses NaN and inf without clipping again (IW-Regression-LDP's randomizer clips each
row again on the device: a no-op here). A user's row reads only their own data, public constants (nu, L, mu,
B, S, C) and theta_{j-1}, a post-processing of earlier releases, so the transform is part of the user's
computation (the curator's per-row under joint DP, the device's under local DP) before the one release they
enter, as the warm-started W is; composition and the ledger are the linear agents'.

References
----------
Source paper, `alg:W-JDP`, `alg:JDP-linear-regression`, `alg:batch-cb-JDP`, `alg:plan`, `def:JDP-interactive`,
`alg:U-LDP`, `alg:LDP-linear-regression`, `def:LDP`, `def:GLM`; the research note "Where the joint-DP agent's
privacy cost comes from" (privbandit's jdp-cost study), sections 3 (the formulas) and 4 (the privacy argument);
McCullagh and Nelder, Generalized Linear Models (1989), section 2.5 (IRLS).
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import numbers
from typing import Any

import numpy as np

from .._validation import (
    POSITIVE,
    POSITIVE_INT,
    Boolean,
    InstanceOf,
    Interval,
    check_parameters,
)
from ..bandit_spec import BanditSpec
from ..linalg import psd_project, psd_sqrt, symmetric_part, symmetric_solution
from ..links import Link, identity_link
from ..oracles.base import EpochFit, Estimate, Oracle
from ..oracles.iw_jdp import IWRegressionDP, IWRelease
from ..oracles.iw_ldp import IWRegressionLDP
from ..oracles.iw_vec_ldp import IWVectorLDP, VectorLDPRelease
from ._oracle_arg import register_variant
from .base import Learner
from .elimination import JDP_UCB_FIRST_EPOCH, EliminationAgent

NON_NEGATIVE = Interval(numbers.Real, 0.0, None, closed="left")

__all__ = ["GLM_RESPONSE_BOUND", "GLMWorkingRows", "LinearRows", "POOLED_GLM_JDP_CONSTANTS", "POOLED_GLM_LDP_CONSTANTS",
           "POOLED_JDP_CONSTANTS", "POOLED_JDP_GROWTH", "POOLED_JDP_ORACLE", "POOLED_LDP_CONSTANTS",
           "POOLED_LDP_FIRST_EPOCH", "POOLED_LDP_LEARNER", "POOLED_LDP_ORACLE", "PooledReleases", "PooledState",
           "PooledStatistics", "RowTransform", "VECTOR_LDP_CONSTANTS", "VECTOR_LDP_GROWTH", "VECTOR_LDP_LEARNER",
           "VECTOR_LDP_ORACLE", "pooled_estimate"]


POOLED_JDP_ORACLE: dict[str, Any] = dict(n_stages=1, w_fraction=0.2)
"""IW-Regression-DP's W schedule under a warm start: one W stage on 20% of each epoch's users, since W starts
from the last release instead of I (public, fixed in advance; research note, section 3)."""

POOLED_JDP_CONSTANTS: dict[str, float] = dict(reg_scale=0.25, z=2.0, norm_bound=1.0, kappa=1.5, rho=0.25)
"""The pooled estimate's regulariser scale r, the Gaussian quantile z of its width, S >= ||theta*|| and the plug-in
bias factors kappa and rho (research note, section 3); public, tuned offline on simulated families, never on
the live run."""

POOLED_JDP_GROWTH: float = 1.5
"""Epoch growth of ``elim-jdp-pooled``: a release whose intervals miss theta* holds the policy for a whole epoch,
and pooling makes shorter epochs cheap, since every epoch's statistics still enter the solve (public; the
changelog records the choice)."""

POOLED_LDP_ORACLE: dict[str, Any] = dict(stages=1, u_fraction=0.2)
"""IW-Regression-LDP's U schedule under a warm start: one spectral stage on 20% of each epoch's users (public,
fixed in advance)."""

POOLED_LDP_CONSTANTS: dict[str, float] = dict(reg_scale=0.25, z=2.0, norm_bound=1.0, kappa=1.5, rho=0.25)
"""The local-DP agents' r, z, S, kappa and rho (as :data:`POOLED_JDP_CONSTANTS`)."""

POOLED_GLM_JDP_CONSTANTS: dict[str, float] = dict(reg_scale=0.1, z=1.0)
"""``elim-glm-jdp-pooled``'s r and z (the rest as :data:`POOLED_JDP_CONSTANTS`): a lighter regulariser and a
narrower width suit one private Newton step per epoch (public; the changelog records the choice)."""

POOLED_GLM_LDP_CONSTANTS: dict[str, float] = dict(z=0.5, kappa=0.5, rho=0.1)
"""``elim-glm-ldp-pooled``'s z, kappa and rho (the rest as :data:`POOLED_LDP_CONSTANTS`): narrower widths, which
the local noise makes wide (public; the changelog records the choice)."""

POOLED_LDP_FIRST_EPOCH = 1024
"""The local-DP agents' first epoch (public, fixed in advance)."""

VECTOR_LDP_ORACLE: dict[str, Any] = dict(gram_radius=0.5)
"""``elim-ldp-vec``'s oracle settings: the Gram statistic of phi shrunk to norm 0.5 (public, fixed in advance;
:class:`~privbandit.oracles.iw_vec_ldp.IWVectorLDP`'s ``gram_radius``), which narrows the channel from radius
sqrt(2) to sqrt(1.5) and the Gram noise's sd to 0.61x: the lever the local-DP study's clipping table pointed at
(most heavy-tailed norms are far below B)."""

VECTOR_LDP_CONSTANTS: dict[str, float] = dict(POOLED_LDP_CONSTANTS, reg_scale=0.1, z=1.0)
"""``elim-ldp-vec``'s r and z (the rest as :data:`POOLED_LDP_CONSTANTS`): a lighter regulariser and a narrower
variance term than ``elim-ldp-pooled``'s, for its less noisy releases (the changelog records the choice)."""

VECTOR_LDP_GROWTH: float = 1.25
"""``elim-ldp-vec``'s epoch growth (public, fixed in advance). Under local DP an epoch costs no budget (each user
randomizes once, whatever the schedule) and pooling keeps every epoch's reports in the solve, so shorter epochs
only bring each new release sooner."""



Release = IWRelease | VectorLDPRelease
"""The oracles' releases a pooled agent post-processes."""


def next_weighting(release: Release) -> np.ndarray:
    """The public warm start the next epoch's fit takes from a release: its weighting matrix, or for IW-Vector-LDP
    (whose users all used the same U) the spectral step ``u_next`` it took from the reports."""
    return release.u_next if isinstance(release, VectorLDPRelease) else release.weighting


GLM_RESPONSE_BOUND: float = 1.0
"""C of :class:`GLMWorkingRows`: the working row's response sqrt(w / L) L z is clipped to [-C, C] and divided by C,
so |y'| <= 1 (public, fixed in advance; the changelog records the choice)."""


class RowTransform(abc.ABC):
    """What a pooled agent's user hands the epoch's oracle: a row (phi', y') computed from their own (phi, y) and
    public values only (the last released theta, the link, the bounds), with ||phi'|| <= ||phi|| and |y'| <= 1.

    The oracle then treats (phi', y') as the row: its clipping, sensitivities and randomizers are unchanged.
    ``theta_scale`` s and ``estimate_link`` say how the pooled solve theta' of these rows is released: the
    agent plays on s theta' with that link (width scale s / mu of the link).
    """

    def theta_scale_of(self, link: Link) -> float:
        """s: the pooled solve of these rows estimates theta* / s (1: the rows are the model's own)."""
        return 1.0

    @abc.abstractmethod
    def rows(self, link: Link, theta: np.ndarray, x: np.ndarray, y: np.ndarray, bound: float,
             norm_bound: float) -> tuple[np.ndarray, np.ndarray]:
        """The rows (phi', y') of features ``x`` (m, d) and rewards ``y`` (m,), given the public ``theta``."""

    def estimate_link(self, link: Link) -> Link:
        """The link of the released Estimate (the model's link by default)."""
        return link


@dataclasses.dataclass(frozen=True)
class LinearRows(RowTransform):
    """The rows as they are: the linear model (``elim-jdp-pooled``, ``elim-ldp-pooled``)."""

    def rows(self, link: Link, theta: np.ndarray, x: np.ndarray, y: np.ndarray, bound: float,
             norm_bound: float) -> tuple[np.ndarray, np.ndarray]:
        return x, y


@dataclasses.dataclass(frozen=True)
class GLMWorkingRows(RowTransform):
    """The GLM's working rows at the last released theta: one IRLS (Fisher scoring) step per epoch.

    At the public linearisation point theta_{j-1} (the previous pooled release; 0 before the first), with the
    predictor eta = <phi, theta_{j-1}> clipped to [-B S, B S], weight w = nu'(eta) clipped to [mu, L] and working
    response z = eta + (y - nu(eta)) / w, the row is

        phi' = sqrt(w / L) phi,      y' = clip(sqrt(w / L) L z, -C, C) / C,

    so ||phi'|| <= ||phi|| <= B and |y'| <= 1 for every reward and every theta_{j-1}: the oracle's bounds, hence
    its sensitivities and randomizers, hold as for the linear model. Rows that are not finite (a link that is
    NaN or inf somewhere on [-B S, B S], outside the domain its construction checked) are refused here with a
    ValueError, before any oracle sees them (``np.clip`` would keep a NaN). Least squares of y' on phi' is the Newton
    step of the GLM's likelihood at theta_{j-1} (weights w / L, response L z / C), so E y' ~ <phi', theta*> L / C
    when theta_{j-1} is near theta* and the clip is inactive; the pooled solve theta' estimates theta* L / C and
    is released as (C / L) theta' on the linear predictor (identity link). Elimination and UCB on intervals of
    the predictor pick the arms the same intervals mapped through nu would pick (nu is increasing), and a
    predictor's interval is narrower than the mean's L-Lipschitz bound on flat parts of nu. For the identity
    link (w = L = 1, z = y) and C = 1 the rows are the linear model's own.

    L z is the working response in reward units (at eta = 0 it is L eta* + y - nu(eta*) to first order), so one
    clip level C serves every slope.

    Parameters
    ----------
    response_bound : float
        C > 0 (:data:`GLM_RESPONSE_BOUND`). The clip acts on rows with sqrt(w L) |z| > C: rewards far from the
        current fit's mean on flat parts of the link (small w), which it biases towards that fit; a larger C
        keeps more of them but divides the signal by C against noise fixed by the oracle's bounds.

    References
    ----------
    Source paper, `def:GLM`; McCullagh and Nelder, Generalized Linear Models (1989), section 2.5 (IRLS).
    """

    response_bound: float = GLM_RESPONSE_BOUND

    def __post_init__(self) -> None:
        check_parameters(type(self), dict(response_bound=self.response_bound), {"response_bound": [POSITIVE]})

    def rows(self, link: Link, theta: np.ndarray, x: np.ndarray, y: np.ndarray, bound: float,
             norm_bound: float) -> tuple[np.ndarray, np.ndarray]:
        eta = np.clip(x @ theta, -bound * norm_bound, bound * norm_bound)
        w = np.clip(link.derivative(eta), link.mu, link.lipschitz)
        root = np.sqrt(w / link.lipschitz)
        z = eta + (y - link(eta)) / w
        rows, response = x * root[:, None], np.clip(root * link.lipschitz * z / self.response_bound, -1.0, 1.0)
        if not (np.isfinite(rows).all() and np.isfinite(response).all()):      # np.clip keeps a NaN
            raise ValueError(f"the GLM working rows are not finite: the link {link.name!r} gives NaN or inf at a "
                             f"predictor in [-B S, B S] = [{-bound * norm_bound:g}, {bound * norm_bound:g}] "
                             f"(it was checked on its domain |z| <= {link.domain:g} only, or the linearisation "
                             "point is not finite); use a link finite on [-B S, B S]")
        return rows, response

    def theta_scale_of(self, link: Link) -> float:
        """C / L: the pooled solve of these rows estimates theta* L / C."""
        return float(self.response_bound) / link.lipschitz

    def estimate_link(self, link: Link) -> Link:
        """The identity: the release is on the linear predictor."""
        return identity_link()


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

    def add(self, release: Release, norm_bound: float) -> None:
        """Add one epoch's release (nothing when it had no regression users).

        A_j = argmin over symmetric A of ||W A - Psi~||_F (:func:`~privbandit.linalg.symmetric_solution`;
        the true weighted Gram is symmetric, and this keeps each entry's noise at most that of W^{-1} Psi~),
        then projected onto the PSD cone in the W metric, W^{-1/2} P(W^{1/2} A_j W^{1/2}) W^{-1/2}: the true
        weighted Gram is PSD, so this only moves the noisy one closer (post-processing). An IW-Vector-LDP release
        takes :meth:`add_vector`.
        """
        if isinstance(release, VectorLDPRelease):
            self.add_vector(release, norm_bound)
            return
        if release.n == 0 or release.psi is None or release.psi_mat is None:
            return
        vals, vecs = np.linalg.eigh(symmetric_part(release.weighting))
        w_inv = (vecs / vals) @ vecs.T
        w_half, w_inv_half = (vecs * np.sqrt(vals)) @ vecs.T, (vecs / np.sqrt(vals)) @ vecs.T
        raw = symmetric_solution(release.weighting, release.psi_mat)
        a = symmetric_part(w_inv_half @ psd_project(w_half @ raw @ w_half) @ w_inv_half)
        n = release.n
        self.gram += n * a
        self.shift += n * (a - raw)
        self.xty += n * (w_inv @ release.psi)
        self.reg += n * release.lam * w_inv
        noise_var = release.noise_sd_psi ** 2 + norm_bound ** 2 * release.noise_sd_Psi ** 2
        w_inv2 = w_inv @ w_inv
        self.noise += n * n * noise_var * w_inv2
        self.sampling += n * a if release.gamma is not None else n * w_inv2    # gamma None: LDP unit directions
        self.n += n

    def add_vector(self, release: VectorLDPRelease, norm_bound: float) -> None:
        """Add one IW-Vector-LDP release (nothing when it had no users).

        Its H_hat estimates U^{1/2} A U^{1/2} (A = E[phi phi^T / ||U phi||]), symmetric by construction, so
        A_j = U^{-1/2} psd(H_hat) U^{-1/2} and b_j = U^{-1} psi_hat. The privacy noise of b_j - A_j theta is
        U^{-1} e_psi - U^{-1/2} E U^{-1/2} theta with independent entries of sd at most sd_psi (e_psi) and sd_H
        (E, symmetric); Cov(E w) <= sd_H^2 ||w||^2 I and ||U^{-1/2} theta||^2 <= S^2 ||U^{-1}||, so its covariance
        is at most sd_psi^2 U^{-2} + S^2 sd_H^2 ||U^{-1}|| U^{-1}. The sampling bound is IW-Regression-LDP's
        n_j U_j^{-2} (psi is a unit direction times y).
        """
        if release.n == 0 or release.psi is None or release.gram is None:
            return
        vals, vecs = np.linalg.eigh(symmetric_part(release.weighting))
        u_inv, u_inv_half = (vecs / vals) @ vecs.T, (vecs / np.sqrt(vals)) @ vecs.T
        raw = symmetric_part(u_inv_half @ release.gram @ u_inv_half)
        a = symmetric_part(u_inv_half @ psd_project(release.gram) @ u_inv_half)
        n = release.n
        u_inv2 = u_inv @ u_inv
        self.gram += n * a
        self.shift += n * (a - raw)
        self.xty += n * (u_inv @ release.psi)
        self.reg += n * release.lam * u_inv
        self.noise += n * n * (release.noise_sd_psi ** 2 * u_inv2
                               + norm_bound ** 2 * release.noise_sd_gram ** 2 * float(1.0 / vals.min()) * u_inv)
        self.sampling += n * u_inv2
        self.n += n


@dataclasses.dataclass
class PooledState:
    """A pooled run's state, released values only: the pooled sums, the last released weighting (the next fit's
    warm start) and the last released theta (the working rows' linearisation point)."""

    spec: BanditSpec
    pooled: PooledStatistics
    warm: np.ndarray | None = None
    theta: np.ndarray | None = None


@dataclasses.dataclass(frozen=True)
class PooledReleases(Learner):
    """The pooled learner: each epoch's IW release (`alg:JDP-linear-regression`, `alg:LDP-linear-regression` or
    IW-Vector-LDP) is added to statistics pooled over the epochs and the agent releases their solve
    (:func:`pooled_estimate`); the next epoch's fit is warm-started from the last release's weighting, and each
    user's row goes through ``rows`` first (module docstring).

    Parameters
    ----------
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
    rows : RowTransform
        What each user hands the oracle: :class:`LinearRows` (default, the rows as they are) or
        :class:`GLMWorkingRows` (``elim-glm-jdp-pooled``: the GLM's working rows at the last release).

    Examples
    --------
    >>> from privbandit.agents import check_agent, make_agent
    >>> agent = make_agent("elim-jdp-pooled", epsilon=1.0, delta=1e-5)
    >>> type(agent).__name__, type(agent.learner).__name__, agent.oracle.n_stages, agent.first_epoch, agent.play
    ('EliminationAgent', 'PooledReleases', 1, 256, 'ucb')
    >>> check_agent(make_agent("elim-ldp-vec", epsilon=1.0, delta=1e-5, first_epoch=16), horizon=64)
    """

    reg_scale: float = POOLED_JDP_CONSTANTS["reg_scale"]
    z: float = POOLED_JDP_CONSTANTS["z"]
    norm_bound: float = POOLED_JDP_CONSTANTS["norm_bound"]
    kappa: float = POOLED_JDP_CONSTANTS["kappa"]
    rho: float = POOLED_JDP_CONSTANTS["rho"]
    plan_window: int | None = 2
    projection_bias: bool = True
    rows: RowTransform = LinearRows()

    def __post_init__(self) -> None:
        check_parameters(type(self), {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}, {
            "reg_scale": [POSITIVE], "z": [NON_NEGATIVE], "norm_bound": [POSITIVE], "kappa": [NON_NEGATIVE],
            "rho": [NON_NEGATIVE], "plan_window": [None, POSITIVE_INT], "projection_bias": [Boolean()],
            "rows": [InstanceOf(RowTransform, "a RowTransform (LinearRows() or GLMWorkingRows())",
                                example=LinearRows)]})

    def check(self, oracle: Oracle) -> None:
        if not isinstance(oracle, (IWRegressionDP, IWRegressionLDP, IWVectorLDP)):
            raise TypeError(f"oracle must be an IWRegressionDP, IWRegressionLDP or IWVectorLDP oracle (one whose "
                            f"Estimate carries its release) to pool its releases, got {type(oracle).__name__}")

    def start(self, spec: BanditSpec, oracle: Oracle) -> PooledState:
        return PooledState(spec, PooledStatistics.zeros(spec.dim), None, np.zeros(spec.dim))

    def fit_oracle(self, state: PooledState, oracle: Oracle) -> Oracle:
        """The run's oracle, warm-started from the last released weighting (from the second epoch on)."""
        if state.warm is None:
            return oracle
        field = "initial_w" if isinstance(oracle, IWRegressionDP) else "initial_u"
        return dataclasses.replace(oracle, **{field: state.warm})

    def add(self, state: PooledState, fit: EpochFit, x: np.ndarray, y: np.ndarray) -> None:
        """The user's row through ``rows`` (their own (phi, y), the last released theta, public constants), then
        into the epoch's fit."""
        spec = state.spec
        fit.add_clipped(*self.rows.rows(spec.link, state.theta, x, y, spec.bound, self.norm_bound))

    def epoch_estimate(self, state: PooledState, fit: EpochFit) -> Estimate:
        """The epoch's fit releases; the agent publishes the pooled estimate over every epoch so far."""
        release = fit.result().release
        if not isinstance(release, (IWRelease, VectorLDPRelease)):
            raise TypeError("the oracle's Estimate must carry its release (estimate.release)")
        state.warm = next_weighting(release)
        scale = self.rows.theta_scale_of(fit.link)
        state.pooled.add(release, self.norm_bound / scale)      # the rows' model is theta* / scale
        estimate = pooled_estimate(state.pooled, self.rows.estimate_link(fit.link), reg_scale=self.reg_scale,
                                   z=self.z, norm_bound=self.norm_bound / scale, kappa=self.kappa, rho=self.rho,
                                   release=release, projection_bias=self.projection_bias, theta_scale=scale)
        state.theta = estimate.theta
        return estimate

    def planned(self, estimates: list[Estimate]) -> list[Estimate]:
        """The last ``plan_window`` releases (all with None)."""
        return estimates if self.plan_window is None else estimates[-self.plan_window:]


POOLED_LDP_LEARNER = PooledReleases(**POOLED_LDP_CONSTANTS, plan_window=1)
"""The local-DP agents' pooling: :data:`POOLED_LDP_CONSTANTS`, eliminating on the latest release only."""

VECTOR_LDP_LEARNER = PooledReleases(**VECTOR_LDP_CONSTANTS, plan_window=1)
"""``elim-ldp-vec``'s learner: :data:`VECTOR_LDP_CONSTANTS`, the latest release only (``plan_window`` 1)."""


def pooled_estimate(stats: PooledStatistics, link: Any, *, reg_scale: float, z: float, norm_bound: float,
                    kappa: float, rho: float, release: Release | None = None,
                    projection_bias: bool = False, theta_scale: float = 1.0) -> Estimate:
    """theta = (G + R)^{-1} b and the radius ||M phi|| of the pooled statistics (module docstring).

    Parameters
    ----------
    stats : PooledStatistics
        The released epochs' sums.
    link : Link
        The model's link (the width is divided by its mu, as the IW oracle's).
    reg_scale, z, norm_bound, kappa, rho : float
        r, z, S, kappa and rho (:data:`POOLED_JDP_CONSTANTS`).
    release : IWRelease or VectorLDPRelease, optional
        The latest epoch's release, carried on the Estimate.
    projection_bias : bool
        Whether the plug-in bias counts the PSD projections' shift: v = H^{-1} (R + D) theta with
        D = ``stats.shift`` (default False: v = H^{-1} R theta).
    theta_scale : float
        s: the statistics' rows model theta* / s (:class:`GLMWorkingRows`), so the Estimate carries s theta and
        the width scale s / mu (1: the rows are the model's own).

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
        return Estimate(np.zeros(d), link, np.eye(d), theta_scale / link.mu,
                        info=dict(info, fallback="no regression rows"), release=release)
    reg = reg_scale * stats.reg
    h = symmetric_part(stats.gram + reg)
    h_inv = np.linalg.inv(h)
    theta = h_inv @ stats.xty
    cov = stats.sampling + stats.noise
    bias = h_inv @ (reg + stats.shift if projection_bias else reg) @ theta
    m2 = h_inv @ (z * z * cov + (rho * norm_bound) ** 2 * (reg @ reg)) @ h_inv + kappa * kappa * np.outer(bias, bias)
    return Estimate(theta_scale * theta, link, psd_sqrt(m2), theta_scale / link.mu, info=info, release=release)


_variant = functools.partial(register_variant, EliminationAgent)   # (name, oracle name, model, description, ...)
_JDP = dict(oracle_kwargs=POOLED_JDP_ORACLE, play="ucb", first_epoch=JDP_UCB_FIRST_EPOCH, growth=POOLED_JDP_GROWTH)
_LDP = dict(oracle_kwargs=POOLED_LDP_ORACLE, play="ucb", first_epoch=POOLED_LDP_FIRST_EPOCH)
_VEC = dict(oracle_kwargs=VECTOR_LDP_ORACLE, play="ucb", first_epoch=POOLED_LDP_FIRST_EPOCH, growth=VECTOR_LDP_GROWTH)

_variant("elim-jdp-pooled", "iw-regression-dp", "jdp", "joint-DP elimination on pooled, warm-started "
         "IW-Regression-DP releases with a variance-plus-bias width, UCB play, epochs from 256 rounds growing 1.5x "
         "(alg:batch-cb-JDP on pooled alg:JDP-linear-regression releases)", pooling=PooledReleases(), **_JDP)
_variant("elim-ldp-pooled", "iw-regression-ldp", "ldp", "local-DP elimination on pooled, warm-started "
         "IW-Regression-LDP releases with a variance-plus-bias width, UCB play (alg:LDP-linear-regression "
         "releases, pooled)", pooling=POOLED_LDP_LEARNER, **_LDP)
_variant("elim-ldp-greedy-pooled", "iw-regression-ldp", "ldp", "local-DP elimination on pooled, warm-started "
         "IW-Regression-LDP releases, greedy play with (d/t)^(1/3) exploration on the survivors' spanner (as "
         "elim-ldp-greedy, pooled)", pooling=POOLED_LDP_LEARNER, **{**_LDP, "play": "greedy"})
_variant("elim-glm-jdp-pooled", "iw-regression-dp", "jdp", "joint-DP GLM elimination: elim-jdp-pooled on the GLM's "
         "working rows at the last release (one private IRLS step per epoch, pooled), UCB on the linear predictor "
         "(alg:JDP-linear-regression releases of def:GLM working rows)",
         pooling=PooledReleases(rows=GLMWorkingRows(), **POOLED_GLM_JDP_CONSTANTS), **_JDP)
_variant("elim-glm-ldp-pooled", "iw-regression-ldp", "ldp", "local-DP GLM elimination: elim-ldp-pooled on the GLM's "
         "working rows at the last release (one private IRLS step per epoch, pooled), UCB on the linear predictor "
         "(alg:LDP-linear-regression releases of def:GLM working rows)",
         pooling=dataclasses.replace(POOLED_LDP_LEARNER, rows=GLMWorkingRows(), **POOLED_GLM_LDP_CONSTANTS), **_LDP)
_variant("elim-ldp-vec", "iw-vector-ldp", "ldp", "local-DP elimination on pooled IW-Vector-LDP releases: each user "
         "sends one L2-ball report of (psi, Gram statistic at radius 0.5), U from the reports, variance-plus-bias "
         "width, UCB play, epochs growing 1.25x (alg:LDP-linear-regression statistics, Duchi et al. 2013 channel, "
         "pooled)", pooling=VECTOR_LDP_LEARNER, **_VEC)
_variant("elim-glm-ldp-vec", "iw-vector-ldp", "ldp", "local-DP GLM elimination: elim-ldp-vec on the GLM's working "
         "rows at the last release (one private IRLS step per epoch, pooled), UCB on the linear predictor "
         "(IW-Vector-LDP releases of def:GLM working rows)",
         pooling=dataclasses.replace(VECTOR_LDP_LEARNER, rows=GLMWorkingRows()), **_VEC)
