"""LDP-SGD for generalized linear bandits (Han, Liang, Wang & Zhang 2021): greedy play on a privately trained iterate.

The local-DP GLM baseline of the source paper's `tab:comp`. Han et al. give two algorithms: LDP-SGD (greedy
play on an iterate trained by stochastic gradient descent on privatized gradients) and LDP-GLOC (a UCB on
privatized Gram statistics of an online GLM learner). This module implements LDP-SGD: it needs one release per
user (LDP-GLOC privatizes a d x d matrix and two vectors per user, three channels to compose), and it is the
stronger of the two in their own code on their logistic experiment (``Scheme1/instances/logistic.py``, which
runs both; ``scripts/compare_han2021.py`` runs this agent on that setting).

Protocol. The public model is the iterate theta_k (theta_0 = 0; their code starts at a random unit vector).
User t of batch k sees only theta_k and their own features, and plays greedily:
a_t = argmax_a <phi(x_t, a), theta_k> (nu is increasing, so this is the arm of largest predicted mean; ties
go to the lowest index, no randomness). After seeing y_t the user sends their quasi-likelihood gradient at
theta_k through a local randomizer:

    g_t = phi_t (clip_[-1, 1](nu(<phi_t, theta_k>)) - y_t),        ||g_t|| <= 2 B,

(for the logistic link and y in {-1, 1} this is 2/s times the gradient of the negative log-likelihood; for
the identity link, the square loss' gradient at a prediction clipped to the reward range). The server
receives only the randomized g~_t and, at the end of each batch of ``batch_size`` users, takes the
batch's SGD steps with step sizes eta_t = eta / (t + 1) and the ridge term of Han et al.'s code:

    theta_{k+1} = Proj_S( theta_k - sum_{t in batch k} eta_t (g~_t + lam theta_k) ),

Proj_S the projection onto the ball ||theta|| <= S, a bounded parameter set (post-processing of public values;
``norm_bound=None`` skips it, as their public code does). With ``batch_size = 1`` (the default) this is their
per-round SGD with step 1/t; a larger batch evaluates every gradient of the batch at the batch's iterate.
The step loop and the batch path share this one implementation (the randomizer and the step sums consume
their inputs row by row in the same order).

Constants. eta = 5 and lam = 0.05 are the constants of Han et al.'s code for the logistic and Poisson
rewards (``GreedySGDServer``); their theory takes eta_t = 1/(kappa t) with kappa the strong-convexity
constant of the expected loss, which is not known to the learner.

Privacy, stated exactly.

- Sensitivity. Features are clipped to ||phi|| <= B and rewards to [-1, 1] before the statistic (by the
  :class:`~privbandit.privacy.LocalRandomizer`); the predicted mean is clipped to [-1, 1], so
  ||g_t|| <= B (1 + 1) = 2 B on the whole input domain. The randomizer's radius is R = 2 B (1 + 1e-9) (padded,
  :func:`~privbandit.privacy.randomizers.padded`), rows are projected onto that ball, and the L2 sensitivity
  between any two users' statistics is 2 R.
- Channel. ``channel="gaussian"`` (default; the calibration of every other Gaussian agent):
  N(0, sigma^2 I) with sigma = z(epsilon, delta) 2 R, z the analytic Gaussian multiplier
  (:func:`~privbandit.privacy.calibration.analytic_noise_multiplier`, Balle & Wang 2018), so sigma ~ 4 z B.
  ``channel="l2-ball"``: the pure epsilon-LDP L2-ball channel of Duchi, Jordan & Wainwright (2013) at radius R,
  the channel Han et al.'s code uses for LDP-SGD (:class:`~privbandit.privacy.L2BallChannel`).
- One release per user, of that user's own record, through a randomizer fixed before the record is seen (its
  statistic reads only the public iterate theta_k): every user is (epsilon, delta)-LDP (`def:LDP`). Each
  batch's release is recorded in the ledger (``kind="local"``) over its users. The action rule reads only
  theta_k (a function of released outputs and public constants) and the current user's features.

References
----------
Han, Liang, Wang & Zhang (2021), "Generalized linear bandits with local differential privacy", NeurIPS 2021,
LDP-SGD, and their code (github.com/liangzp/LDP-Bandit, ``Scheme1``); source paper, `tab:comp`,
`def:LDP`; Duchi, Jordan & Wainwright (2013), the L2-ball channel.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._validation import POSITIVE, POSITIVE_INT, UNIT_OPEN, Interval, Options, ParameterConstraints
from ..links import Link
from ..oracles.base import MECHANISM_CONSTRAINTS, hooked
from ..privacy import GaussianMechanism, L2BallChannel, LocalRandomizer, PrivacySpec
from ..privacy.randomizers import padded
from .linucb import BatchedAgent
from .registry import register_agent

__all__ = ["CHANNELS", "GLMGradientStatistic", "LDPGLMSGDAgent"]

CHANNELS = ("gaussian", "l2-ball")
"""The local channels of :class:`LDPGLMSGDAgent`."""


@dataclass(frozen=True)
class GLMGradientStatistic:
    """phi, y -> phi (clip_[-1, 1](nu(<phi, theta>)) - y): norm <= 2 ||phi|| for rewards in [-1, 1].

    Parameters
    ----------
    theta : ndarray (d,)
        The public iterate the gradient is taken at.
    link : Link
        nu.
    """

    theta: np.ndarray
    link: Link

    def __call__(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        pred = np.minimum(np.maximum(self.link(x @ self.theta), -1.0), 1.0)
        return x * (pred - y)[:, None]


class LDPGLMSGDAgent(BatchedAgent):
    """LDP-SGD of Han et al. (2021): greedy play on an SGD iterate trained on locally privatized GLM gradients.

    Parameters
    ----------
    epsilon, delta : float
        The per-user local budget (epsilon > 0, delta in (0, 1)); one release per user spends exactly it
        (``channel="l2-ball"`` spends (epsilon, 0)).
    eta : float
        Step-size constant: user t's gradient enters with step eta / (t + 1) (Han et al.'s code: 5).
    lam : float
        Ridge term lam theta added to each gradient (Han et al.'s code: 0.05), >= 0.
    norm_bound : float or None
        S: the iterate is projected onto ||theta|| <= S after each batch; None: no projection.
    batch_size : int
        Users between updates of the public iterate (1 = every round, Han et al.'s algorithm).
    channel : {"gaussian", "l2-ball"}
        The local channel (see the module docstring).
    mechanism : callable, optional (keyword only)
        The audit seam, as :class:`~privbandit.oracles.Oracle`'s: called with each batch's calibrated
        :class:`~privbandit.privacy.LocalRandomizer` (``randomizer``, on the channel ``mechanism_``), it returns
        the object that randomizes the batch's users in its place (``randomizer(x, y, rng)`` and
        ``ledger_entry()``, which the ledger records). None (the default): the calibrated one, unchanged.

    References
    ----------
    Han, Liang, Wang & Zhang (2021), LDP-SGD; source paper, `tab:comp`.
    """

    name: ClassVar[str] = "ldp-glm-sgd"
    parameter_constraints: ClassVar[ParameterConstraints] = {
        "epsilon": [POSITIVE], "delta": [UNIT_OPEN], "eta": [POSITIVE],
        "lam": [Interval(numbers.Real, 0.0, None, closed="left")], "norm_bound": [None, POSITIVE],
        "batch_size": [POSITIVE_INT], "channel": [Options(CHANNELS)], **MECHANISM_CONSTRAINTS}

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-5, eta: float = 5.0, lam: float = 0.05,
                 norm_bound: float | None = 1.0, batch_size: int = 1, channel: str = "gaussian",
                 mechanism: Any = None) -> None:
        super().__init__()
        self._store_parameters(epsilon=epsilon, delta=delta, eta=eta, lam=lam, norm_bound=norm_bound,
                               batch_size=batch_size, channel=channel, mechanism=mechanism)

    @property
    def privacy(self) -> PrivacySpec:
        """(epsilon, delta)-LDP."""
        return PrivacySpec("ldp", self.epsilon, self.delta)

    @property
    def gradient_radius(self) -> float:
        """R = 2 B (1 + 1e-9): the bound on ||g_t|| the channel is calibrated to (L2 sensitivity 2 R)."""
        return padded(2.0 * self._require_spec().bound)

    def _reset(self) -> None:
        spec = self._require_spec()
        radius = self.gradient_radius
        if self.channel == "gaussian":
            self.mechanism_ = GaussianMechanism.calibrated(self.epsilon, self.delta, 2.0 * radius)
        else:
            self.mechanism_ = L2BallChannel(self.epsilon, spec.dim, radius)
        self.theta_ = np.zeros(spec.dim)
        self._pending = np.zeros(spec.dim)       # sum of eta_t g~_t over the open batch
        self._steps = 0.0                        # sum of eta_t over the open batch
        self._new_randomizer()

    def _new_randomizer(self) -> None:
        """The randomizer of the current batch (its statistic reads only the public iterate), and what the
        ``mechanism`` hook returns for it, which randomizes the batch's rows."""
        spec = self._require_spec()
        stat = GLMGradientStatistic(self.theta_.copy(), spec.link)
        self.randomizer = LocalRandomizer(stat, self.gradient_radius, self.mechanism_, spec.bound)
        self._batch_randomizer = hooked(self.mechanism, self.randomizer)

    def _scores(self, features: np.ndarray) -> np.ndarray:
        return features @ self.theta_

    def _absorb_rows(self, x: np.ndarray, y: np.ndarray) -> None:
        outputs = self._batch_randomizer(x, y, self._fit_rng)       # raw rows stop here
        self.ledger.record(self.t, self.t + x.shape[0], self._batch_randomizer.ledger_entry(), kind="local",
                           label="ldp-glm-sgd gradient")
        self._absorb(outputs)

    def _absorb(self, outputs: np.ndarray) -> None:
        """Aggregate randomized gradients (m, d) of the users t, ..., t + m - 1; never sees raw rows."""
        eta = self.eta / (self.t + 1.0 + np.arange(outputs.shape[0]))
        self._pending += eta @ outputs
        self._steps += float(eta.sum())

    def _refresh(self, t: int) -> None:
        """Close the batch after round t: theta <- Proj_S(theta - sum eta_t (g~_t + lam theta)); a new randomizer."""
        theta = self.theta_ - self._pending - (self._steps * self.lam) * self.theta_
        if self.norm_bound is not None:
            norm = float(np.linalg.norm(theta))
            if norm > self.norm_bound:
                theta = theta * (self.norm_bound / norm)
        self.theta_ = theta
        self._pending = np.zeros_like(theta)
        self._steps = 0.0
        self._new_randomizer()


register_agent("ldp-glm-sgd", LDPGLMSGDAgent, privacy="ldp",
               description="local-DP greedy GLM bandit on privatized SGD gradients, LDP-SGD (Han et al. 2021)")
