"""Non-private generalized linear bandits: GLM-UCB (maximum likelihood) and GLOC (online Newton step).

Both read the link nu from the env's :class:`~privbandit.BanditSpec` (``spec.link``: nu, nu', and the bounds
mu_nu <= nu' <= L_nu on the predictor range) and learn from the GLM's integral loss

    l_nu(z, y) = -y z + int_0^z nu(s) ds,    d/dz l_nu = nu(z) - y,    d^2/dz^2 l_nu = nu'(z) >= mu_nu,

whose minimiser in expectation is theta* when E[y | phi] = nu(<phi, theta*>). Both keep V = lambda I + sum phi phi^T
(GLOC updates V^{-1} by Sherman-Morrison, :func:`~privbandit.linalg.inverse_rank_update`; GLM-UCB inverts V
at each refresh), change their policy every
``batch_size`` rounds (1 by default, the papers' algorithms) as :class:`~privbandit.agents.linucb.LinUCBAgent` does,
and choose deterministically (ties to the lowest index, no action uniforms). One implementation serves the step
loop and the batch path: rows enter ``_absorb_rows`` as they arrive, one by one or in blocks, and the policy is
recomputed at the batch ends only.

- :class:`GLMUCBAgent` (Filippi, Cappe, Garivier & Szepesvari 2010): penalised maximum likelihood (:func:`fit_glm`).
- :class:`GLOCAgent` (Jun, Bhargava, Nowak & Willett 2017): the online Newton step, O(d^2) per round and memory.

Why GLOC rather than ECOLog (Faury, Abeille, Jun & Calauzenes 2022): GLOC needs only what a
:class:`~privbandit.Link` declares (a lower bound mu_nu on nu' and the reward's sub-Gaussian scale) and so serves
any link of ``PrivGLMCB-v0``, while ECOLog's confidence sets rest on the self-concordance of the logistic loss of
{0, 1} rewards; GLOC's update is one ONS step (Sherman-Morrison, O(d^2)), ECOLog's a per-round constrained
optimisation. It is also the online learner Han, Liang, Wang & Zhou (2021) build their local-DP GLM bandit on.

References
----------
Filippi, Cappe, Garivier & Szepesvari (2010), "Parametric bandits: the generalized linear case", NeurIPS,
Alg. 1 (GLM-UCB) and Thm 1; Jun, Bhargava, Nowak & Willett (2017), "Scalable generalized linear bandits: online
computation and hashing", NeurIPS, Alg. 1 (GLOC), Thm 1 (the confidence set) and Alg. 2 / Thm 3 (GLM-ONS);
Faury et al. (2022), "Jointly efficient and optimal algorithms for logistic bandits", AISTATS (ECOLog);
Nesterov (2004), Sec. 4.1.5 (damped Newton); source paper, `def:GLM`.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ..linalg import inverse_rank_update, symmetric_part
from ..links import Link
from ..oracles.glm_jdp import trust_region_step
from .linucb import BatchedUCBAgent, LinUCBAgent
from .registry import register_agent, register_preset

__all__ = ["GLMFit", "GLMUCBAgent", "GLOCAgent", "fit_glm", "glm_gradient", "glm_hessian"]

NEWTON_TOL = 1e-12
""":func:`fit_glm` stops when the squared Newton decrement g^T H^{-1} g (twice the loss' excess over its
minimum, to second order) is at most this, far below the O(d) statistical fluctuation of the loss. Two fits fed
the same rows in other blocks (the step loop and the batch path) take the same steps from the same start, so
they agree to rounding."""

NEWTON_MAX_STEPS = 50
"""Most Newton steps of one :func:`fit_glm` call."""

CHORD_STEPS = 3
"""Steps with a lagged Hessian before :func:`fit_glm` computes the exact one at the current estimate."""


def glm_gradient(x: np.ndarray, y: np.ndarray, link: Link, lam: float, theta: np.ndarray) -> np.ndarray:
    """Gradient sum_s (nu(<phi_s, theta>) - y_s) phi_s + lam theta of the penalised GLM loss (see :func:`fit_glm`)."""
    return x.T @ (link(x @ theta) - y) + lam * theta


def glm_hessian(x: np.ndarray, link: Link, lam: float, theta: np.ndarray) -> np.ndarray:
    """Hessian sum_s nu'(<phi_s, theta>) phi_s phi_s^T + lam I of the penalised GLM loss (see :func:`fit_glm`)."""
    w = link.derivative(x @ theta)
    return symmetric_part((x * w[:, None]).T @ x) + lam * np.eye(x.shape[1])


class GLMFit:
    """The result of :func:`fit_glm`: the estimate, the Hessian its last step used and the steps taken.

    Attributes
    ----------
    theta : ndarray (d,)
    hessian : ndarray (d, d)
        The (possibly lagged) Hessian of the last step; a warm start passes it back.
    steps : int
    converged : bool
        Whether the squared Newton decrement reached :data:`NEWTON_TOL`.
    """

    __slots__ = ("converged", "hessian", "steps", "theta")

    def __init__(self, theta: np.ndarray, hessian: np.ndarray, steps: int, converged: bool) -> None:
        self.theta, self.hessian, self.steps, self.converged = theta, hessian, steps, converged


def fit_glm(x: np.ndarray, y: np.ndarray, link: Link, lam: float, theta0: np.ndarray | None = None,
            hessian: np.ndarray | None = None) -> GLMFit:
    """The penalised maximum-likelihood estimate of a GLM, by damped Newton steps.

    Solves argmin_theta sum_s l_nu(<phi_s, theta>, y_s) + (lam/2) ||theta||^2 with the integral loss
    l_nu(z, y) = -y z + int_0^z nu (strictly convex: its Hessian is >= lam I), i.e. the root of
    sum_s (nu(<phi_s, theta>) - y_s) phi_s + lam theta = 0, to a squared Newton decrement g^T H^{-1} g <= NEWTON_TOL.
    Steps are theta <- theta - H^{-1} g / (1 + sqrt(g^T H^{-1} g)) (Nesterov's damped Newton step, which needs no
    evaluation of the loss, so any :class:`~privbandit.Link` serves). Warm-started (``theta0`` and the last
    ``hessian``), the first :data:`CHORD_STEPS` steps reuse the given Hessian (O(n d) each instead of O(n d^2)),
    then the exact Hessian at the current estimate is computed (and again every CHORD_STEPS steps).

    Parameters
    ----------
    x : ndarray (n, d)
    y : ndarray (n,)
    link : Link
    lam : float
        The ridge penalty, > 0 (it makes the estimate exist on separable data, as in the first rounds).
    theta0 : ndarray (d,), optional
        The starting point (0 by default).
    hessian : ndarray (d, d), optional
        A Hessian near the one at ``theta0`` (e.g. the last fit's, plus the new rows' nu' phi phi^T).

    Returns
    -------
    GLMFit
    """
    theta = np.zeros(x.shape[1]) if theta0 is None else np.array(theta0, dtype=float)
    h = glm_hessian(x, link, lam, theta) if hessian is None else hessian
    lagged = 0 if hessian is None else CHORD_STEPS
    for step in range(NEWTON_MAX_STEPS):
        if lagged == 0 and step > 0:
            h = glm_hessian(x, link, lam, theta)
            lagged = CHORD_STEPS
        g = glm_gradient(x, y, link, lam, theta)
        s = np.linalg.solve(h, g)
        dec = float(g @ s)
        if dec <= NEWTON_TOL:
            return GLMFit(theta, h, step, True)
        theta = theta - s / (1.0 + math.sqrt(max(dec, 0.0)))
        lagged = max(lagged - 1, 0)
    return GLMFit(theta, h, NEWTON_MAX_STEPS, False)


class GLMUCBAgent(BatchedUCBAgent):
    """GLM-UCB: penalised maximum likelihood and a UCB in the reward space.

    At each batch end (every ``batch_size`` rounds) theta_hat is refitted on all rows so far (:func:`fit_glm`,
    warm-started at the last estimate with the last Hessian plus the new rows' nu' phi phi^T, so a refit
    costs O(n d) per step plus an O(n d^2) exact Hessian every :data:`CHORD_STEPS` steps); the arm chosen is
    argmax_a nu(<phi_a, theta_hat>) + rho ||phi_a||_{V^{-1}}, V = lambda I + sum phi phi^T (accumulated row by row,
    inverted at each refresh).

    Two radii (``radius``). ``"theory"`` (default), Filippi et al.'s Thm 1,
    rho(t) = (2 L_nu kappa R / mu_nu) sqrt(2 d log t log(2 d T / delta_c)),
    kappa = sqrt(3 + 2 log(1 + 2 B^2 / lambda)), with the link's bounds (L_nu = ``link.lipschitz``, mu_nu =
    ``link.mu``), R = ``noise_scale`` bounding the rewards and lambda in place of the smallest eigenvalue lambda_0
    of the design after their initial exploration (V >= lambda I here). ``"practical"``: the per-phi radius of
    ``linucb-practical``, rho = c_width R + sqrt(lambda) S, in reward units: to first order
    nu(<phi, theta_hat>) - nu(<phi, theta*>) = nu'(z) <phi, theta_hat - theta*> and the MLE's covariance is about
    R^2 H^{-1} V H^{-1} with H = sum nu' phi phi^T, so where nu' varies little the two slopes cancel and
    the deviation is about R ||phi||_{V^{-1}}: no 1/mu_nu (the theorem's bound pays it once for the worst
    slope over the whole predictor range).

    Parameters
    ----------
    lam, confidence, noise_scale, norm_bound, width_multiplier, batch_size, radius, c_width :
        As in :class:`~privbandit.agents.LinUCBAgent`, for the radius rho: ``lam`` is also the likelihood's
        ridge (lambda/2) ||theta||^2, ``noise_scale`` bounds the rewards' noise and ``batch_size`` is the rounds
        between refits.

    Notes
    -----
    Filippi et al. play d rounds of initial exploration and project theta_hat onto the parameter set; here the
    ridge makes the estimate exist from round 1 and no projection is made (the MLE of bounded rewards is
    finite once V is well conditioned, and the penalty keeps it finite before).

    References
    ----------
    Filippi, Cappe, Garivier & Szepesvari (2010), "Parametric bandits: the generalized linear case", Alg. 1
    (GLM-UCB) and Thm 1; source paper, `def:GLM`.
    """

    name: ClassVar[str] = "glm-ucb"

    def _reset(self) -> None:
        spec = self._require_spec()
        d = spec.dim
        self.gram = self.lam * np.eye(d)        # V = lambda I + sum phi phi^T, inverted at each refresh (O(d^3))
        self._x = np.empty((min(spec.horizon, 1024), d))
        self._y = np.empty(self._x.shape[0])
        self._hess = self.lam * np.eye(d)       # the lagged Hessian of fit_glm, with the rows since the last fit
        self.theta_ = np.zeros(d)
        kappa = math.sqrt(3.0 + 2.0 * math.log1p(2.0 * spec.bound ** 2 / self.lam))
        self._rho_scale = 2.0 * spec.link.lipschitz * kappa * self.noise_scale / spec.link.mu
        self._rho_log = math.log(2.0 * d * spec.horizon / self.confidence)
        self._refresh(0)

    def _absorb_rows(self, x: np.ndarray, y: np.ndarray) -> None:
        self.gram += x.T @ x
        n, m = self.t, x.shape[0]
        if n + m > self._x.shape[0]:            # grow the row store geometrically, up to the horizon
            size = min(max(2 * self._x.shape[0], n + m), self._require_spec().horizon)
            self._x = np.concatenate([self._x[:n], np.empty((size - n, x.shape[1]))])
            self._y = np.concatenate([self._y[:n], np.empty(size - n)])
        self._x[n:n + m], self._y[n:n + m] = x, y
        w = self._require_spec().link.derivative(x @ self.theta_)
        self._hess += (x * w[:, None]).T @ x

    def _refresh(self, t: int) -> None:
        spec = self._require_spec()
        self.policy_v_inv_ = symmetric_part(np.linalg.inv(self.gram))   # fixed until the next refresh
        if t > 0:
            fit = fit_glm(self._x[:t], self._y[:t], spec.link, self.lam, self.theta_, self._hess)
            self.theta_, self._hess = fit.theta, fit.hessian
        if self.radius == "practical":
            self.beta_ = self.width_multiplier * (self.c_width * self.noise_scale
                                                  + math.sqrt(self.lam) * self.norm_bound)
            return
        self.beta_ = self.width_multiplier * self._rho_scale * math.sqrt(
            2.0 * spec.dim * math.log(max(t, 2)) * self._rho_log)

    def _scores(self, features: np.ndarray) -> np.ndarray:
        """nu(<phi_a, theta_hat>) + rho ||phi_a||_{V^{-1}} of contexts (m, K, d), as (m, K)."""
        m, k, d = features.shape
        x = features.reshape(m * k, d)
        w = np.add.reduce(x.dot(self.policy_v_inv_) * x, axis=1)
        mean = self._require_spec().link(x.dot(self.theta_))
        return (mean + self.beta_ * np.sqrt(np.maximum(w, 0.0))).reshape(m, k)


class GLOCAgent(BatchedUCBAgent):
    """GLOC: the online-to-confidence-set conversion of GLM-ONS, O(d^2) per round.

    Every round, GLM-ONS predicts z_t = <phi_t, theta_t> with its current iterate, then takes the step
    theta_{t+1} = Pi_S^{A_t}(theta_t - (1/kappa) A_t^{-1} (nu(z_t) - y_t) phi_t),
    A_t = lambda I + sum_{s<=t} phi_s phi_s^T (= V_t; Pi_S^A the projection onto ||theta|| <= S in the A-norm, made
    only when the step leaves the ball), and
    its regret bound grows as
    B_t = 2 kappa S^2 lambda + (1/(2 kappa)) sum_s (nu(z_s) - y_s)^2 ||phi_s||^2_{A_s^{-1}}
    (Jun et al., Thm 3, the data-dependent form). The confidence set is centred at the ridge regression of the
    predictions on the features, theta_hat = V^{-1} sum_s z_s phi_s, and the arm chosen is
    argmax_a <phi_a, theta_hat> + sqrt(beta_t) ||phi_a||_{V^{-1}} (nu is increasing, so this is the UCB of the
    mean reward too), with Jun et al.'s Thm 1

        beta_t = 1 + (4/kappa) B_t
                 + (8 R^2 / kappa^2) log((2/delta_c) sqrt(1 + (2/kappa) B_t + 4 R^4 / (kappa^4 delta_c^2)))
                 + lambda S^2 - (||z||^2 - theta_hat^T X^T z).

    With ``radius="theory"`` (default) kappa = mu_nu (``link.mu``) in the step, B_t and beta_t, as in the paper.
    With ``radius="practical"`` kappa is the average slope nu'(z_s) at the agent's own predictions so far
    (clamped to [mu_nu, L_nu]; a public function of the rows seen), in the ONS step and in the radius
    sqrt(beta) = c_width R / kappa + sqrt(lambda) S: the per-phi radius of ``linucb-practical`` moved to the
    predictor scale by the slope the agent meets, instead of the worst slope mu_nu of the whole range.

    Parameters
    ----------
    lam, confidence, noise_scale, norm_bound, width_multiplier, batch_size, radius, c_width :
        As in :class:`GLMUCBAgent` (``norm_bound`` is S, the radius of the ball GLM-ONS projects onto;
        ``batch_size`` only delays the policy: GLM-ONS steps every round).

    References
    ----------
    Jun, Bhargava, Nowak & Willett (2017), "Scalable generalized linear bandits: online computation and hashing",
    Alg. 1 (GLOC), Thm 1, Alg. 2 and Thm 3 (GLM-ONS); source paper, `def:GLM`.
    """

    name: ClassVar[str] = "gloc"

    def _reset(self) -> None:
        spec = self._require_spec()
        d = spec.dim
        self.v_inv = np.eye(d) / self.lam
        self.ons_theta = np.zeros(d)
        self.xtz = np.zeros(d)                  # X^T z
        self.zz = 0.0                           # ||z||^2
        self.slope_sum = 0.0                    # sum_s nu'(z_s)
        self.rows = 0                           # rows GLM-ONS has stepped on
        self.ons_regret = 2.0 * spec.link.mu * self.norm_bound ** 2 * self.lam     # B_0 (theory kappa)
        self.theta_ = np.zeros(d)
        self._refresh(0)

    def _kappa(self) -> float:
        """kappa of the ONS step and the radius after the rows seen so far (see the class docstring)."""
        link = self._require_spec().link
        if self.radius == "theory" or self.rows == 0:
            return link.mu
        return min(max(self.slope_sum / self.rows, link.mu), link.lipschitz)

    def _absorb_rows(self, x: np.ndarray, y: np.ndarray) -> None:
        link = self._require_spec().link
        for phi, y_i in zip(x, y.tolist()):     # GLM-ONS is sequential: one O(d^2) step per row
            z = float(phi @ self.ons_theta)     # the prediction of the iterate that did not see y
            self.xtz += z * phi
            self.zz += z * z
            kappa = self._kappa()
            self.slope_sum += float(link.derivative(np.array(z)))
            self.rows += 1
            inverse_rank_update(self.v_inv, phi[None])
            g = float(link(np.array(z))) - y_i
            a_phi = self.v_inv @ phi
            self.ons_regret += g * g * float(phi @ a_phi) / (2.0 * kappa)
            theta = self.ons_theta - (g / kappa) * a_phi
            if float(theta @ theta) > self.norm_bound ** 2:
                theta = self._project(theta)
            self.ons_theta = theta

    def _project(self, theta: np.ndarray) -> np.ndarray:
        """argmin over ||u|| <= S of ||u - theta||_A, A = V (O(d^3); only when the ONS step leaves the ball)."""
        a = np.linalg.inv(symmetric_part(self.v_inv))
        evals, q = np.linalg.eigh(symmetric_part(a))
        s = self.norm_bound       # u = S v, ||v|| <= 1: minimise -S theta^T A v + S^2 v^T A v / 2
        return s * trust_region_step(q, np.maximum(evals, 1e-300) * s * s, -s * (a @ theta))

    def _refresh(self, t: int) -> None:
        spec = self._require_spec()
        self.v_inv = symmetric_part(self.v_inv)
        self.policy_v_inv_ = self.v_inv.copy()   # fixed until the next refresh
        self.theta_ = self.v_inv @ self.xtz
        if self.radius == "practical":
            kappa = self._kappa()
            self.beta_ = self.width_multiplier * (self.c_width * self.noise_scale / kappa
                                                  + math.sqrt(self.lam) * self.norm_bound)
            return
        kappa, r, b, dc = spec.link.mu, self.noise_scale, self.ons_regret, self.confidence
        alpha = 1.0 + 4.0 * b / kappa + 8.0 * r * r / kappa ** 2 * math.log(
            2.0 / dc * math.sqrt(1.0 + 2.0 * b / kappa + 4.0 * r ** 4 / (kappa ** 4 * dc * dc)))
        beta = alpha + self.lam * self.norm_bound ** 2 - (self.zz - float(self.theta_ @ self.xtz))
        self.beta_ = self.width_multiplier * math.sqrt(max(beta, 0.0))

    _scores = LinUCBAgent._scores     # <phi_a, theta_hat> + sqrt(beta) ||phi_a||_{V^{-1}}, V of the last refresh


register_agent("glm-ucb", GLMUCBAgent, privacy="none",
               description="GLM-UCB: penalised maximum likelihood, UCB in the reward space (Filippi et al. 2010)")
register_agent("gloc", GLOCAgent, privacy="none",
               description="GLOC: online-to-confidence-set conversion of the online Newton step, O(d^2) per round "
                           "(Jun et al. 2017)")
for _name in ("glm-ucb", "gloc"):   # the calibrated per-phi radius beside the theorem's
    register_preset(f"{_name}-practical", _name, radius="practical")
