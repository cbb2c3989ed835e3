"""LinUCB and its private versions: the baselines the paper compares against (`tab:comp`).

Three agents share one shape: ridge statistics V = lambda I + sum phi phi^T, u = sum phi y, the
estimate theta = V^{-1} u, and the optimistic choice argmax_a <phi_a, theta> + beta_t ||phi_a||_{V^{-1}}.
Their policy changes after every round (``batch_size = 1``) unless a batch size is given, so
``rounds_until_update()`` is the rest of the current batch. Actions are deterministic (ties go to the
lowest index); these agents draw no action uniforms.

- :class:`LinUCBAgent` (Abbasi-Yadkori, Pal & Szepesvari 2011): exact statistics, Sherman-Morrison
  updates of V^{-1}, beta_t = R sqrt(2 log(1/delta_c) + log det(V_t / lambda)) + sqrt(lambda) S.
- :class:`SSLinUCBAgent` (Shariff & Sheffet 2018, joint DP): the augmented Gram matrix
  A_t = sum_s v_s v_s^T, v_s = (phi_s, y_s) in R^{d+1}, is released through the tree-based
  aggregation (binary) mechanism; each prefix sum is a sum of at most L = floor(log2 T) + 1 noisy
  nodes, and the noise N_t is made positive definite by the regularizer shift 2 Upsilon I, with
  Upsilon the high-probability bound on ||N_t||, so that Upsilon <= eig(N_t + 2 Upsilon I) <= 3 Upsilon.
- :class:`LDPUCBAgent` (Zheng, Cheng, Wang & Wu 2020, local DP): each user privatises v v^T
  through a local Gaussian randomizer (SymPriv on the (d+1) x (d+1) matrix, which carries both
  phi phi^T and phi y); the server sums the noisy matrices. The noise of a t-row sum has per-entry
  variance t sigma^2, and the same shift and radius are used with Upsilon_t growing like sqrt(t).

For both private agents, with rho_min = Upsilon, rho_max = 3 Upsilon and gamma the bound on the noise
of the X^T y block, the radius is (Shariff & Sheffet 2018, Prop. 4 / Thm 5)

    beta_t = R sqrt(2 log(2/delta_c) + d log(rho_max/rho_min + t B^2 / (d rho_min)))
             + S sqrt(rho_max) + gamma / sqrt(rho_min).

Two radii (``radius``, the convention of :class:`~privbandit.oracles.Ridge`'s ``constants``):
``"theory"`` (default) is the radius above, valid for every phi and round at once; ``"practical"`` is the
per-phi radius beta = c_width sd + bias, with c_width = :data:`~privbandit.oracles.ridge.PRACTICAL_WIDTH` = 2
and, for a fixed phi, <phi, theta - theta*> = phi^T G^{-1} (X^T eta + h) - phi^T G^{-1} M theta* (G the
regularised Gram matrix, M = lambda I or the noise plus shift, h the noise of the X^T y block):
sd = sqrt(R^2 + sd(h)^2 / lambda_min(G)) bounds the standard deviation of the first term in units of
||phi||_{G^{-1}}, and bias = S min(sqrt(rho_max), rho_max / sqrt(lambda_min(G))) the second (LinUCB: sd = R,
bias = sqrt(lambda) S); the agents guide (``docs/guide/agents.md``, "Private LinUCB baselines") says how its
coverage of fresh arms was measured. The
privacy mechanisms and the estimate are the same for both radii.

Privacy, stated exactly.

- Sensitivity. ||v||^2 <= B^2 + 1 after clipping (features to B, rewards to [-1, 1]); for PSD rank-one
  matrices ||v v^T - w w^T||_F^2 = ||v||^4 + ||w||^4 - 2 <v, w>^2 <= 2 (B^2 + 1)^2, so replacing one
  user moves any tree node by at most sqrt(2) (B^2 + 1) in Frobenius norm (the SymPriv calibration).
- Joint DP (tree): every user enters at most L nodes (one per level), each released with the
  symmetric Gaussian of multiplier z = sqrt(L) z_1, z_1 the analytic Gaussian multiplier for
  (epsilon, delta); L Gaussians of multiplier z compose to one of multiplier z / sqrt(L) = z_1, exactly
  (epsilon, delta). Nodes are released lazily (only those a prefix query needs), and each release is
  recorded in the ledger over its node's rows. Actions of round t depend on other users' data only
  through these releases: the billboard argument of Shariff & Sheffet gives (epsilon, delta)-JDP.
- Local DP: a :class:`~privbandit.privacy.LocalRandomizer` with statistic v v^T, radius (B^2 + 1)(1 + 1e-9)
  (padded so that rows at ||phi|| = B, over it by rounding, are not projected) and the analytic SymPriv at L2
  sensitivity twice that radius (the randomizer's generic bound); the server's
  aggregation (``_absorb``) receives only randomized matrices.

References
----------
Source paper, `tab:comp`, `ssec:OLS`, `ssec:cb-negative`; Abbasi-Yadkori et al. (2011) Thm 2;
Shariff & Sheffet (2018), "Differentially private contextual linear bandits", Alg. 1, Sec. 4;
Zheng et al. (2020), "Locally differentially private (contextual) bandits learning", Sec. 5;
Chan, Shi & Song (2011) / Dwork et al. (2010), the tree-based aggregation mechanism.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, ClassVar

import numpy as np

from .._validation import POSITIVE, POSITIVE_INT, UNIT_OPEN, Interval, Options, ParameterConstraints
from ..linalg import inverse_rank_update
from ..oracles.base import CONSTANTS, MECHANISM_CONSTRAINTS, hooked
from ..oracles.ridge import PRACTICAL_WIDTH
from ..privacy import LocalRandomizer, PrivacySpec, SymmetricGaussianMechanism, release_recorded
from ..privacy.calibration import analytic_noise_multiplier
from ..privacy.clipping import clip_features, clip_rewards
from ..privacy.randomizers import padded
from .base import Agent
from .registry import register_agent, register_preset

__all__ = ["BatchedAgent", "BatchedUCBAgent", "LDPUCBAgent", "LinUCBAgent", "SSLinUCBAgent"]

_EIG_FLOOR = 1e-9
_CHUNK = 4096


class BatchedAgent(Agent):
    """A deterministic agent whose policy changes every ``batch_size`` rounds: each round, the arm of the largest
    score (ties to the lowest index).

    A subclass sets ``batch_size``, keeps its statistics in ``_absorb_rows(x, y)`` (every row, as it arrives),
    sets the policy in ``_refresh(t)`` (after round t, at the end of each batch) and scores the arms in
    ``_scores(features)`` ((m, K, d) -> (m, K)).
    """

    uniforms_per_round: ClassVar[int] = 0
    batch_size: int

    def rounds_until_update(self) -> int:
        """Rounds left in the current batch of ``batch_size`` rounds (0 at the horizon)."""
        spec = self._require_spec()
        if self.t >= spec.horizon:
            return 0
        return min(self.batch_size - self.t % self.batch_size, spec.horizon - self.t)

    def _scores(self, features: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _choose(self, features: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        return np.argmax(self._scores(features), axis=1)

    def _probabilities(self, features: np.ndarray) -> np.ndarray:
        best = np.argmax(self._scores(features), axis=1)
        p = np.zeros(features.shape[:2])
        p[np.arange(p.shape[0]), best] = 1.0
        return p

    def _observe(self, x: np.ndarray, y: np.ndarray) -> None:
        self._absorb_rows(x, y)
        if (self.t + x.shape[0]) % self.batch_size == 0:
            self._refresh(self.t + x.shape[0])

    def _absorb_rows(self, x: np.ndarray, y: np.ndarray) -> None:
        raise NotImplementedError

    def _refresh(self, t: int) -> None:
        raise NotImplementedError


class BatchedUCBAgent(BatchedAgent):
    """Shared machinery of the per-round UCB agents: their arguments and the optimistic score, by default
    <phi, theta_> + beta_ ||phi||_{V^{-1}} with ``v_inv_sqrt_``."""

    parameter_constraints: ClassVar[ParameterConstraints] = {
        "lam": [POSITIVE], "confidence": [UNIT_OPEN], "noise_scale": [POSITIVE], "norm_bound": [POSITIVE],
        "width_multiplier": [Interval(numbers.Real, 0.0, None)], "batch_size": [POSITIVE_INT],
        "radius": [Options(CONSTANTS)], "c_width": [None, POSITIVE]}

    def __init__(self, *, lam: float = 1.0, confidence: float = 0.05, noise_scale: float = 1.0,
                 norm_bound: float = 1.0, width_multiplier: float = 1.0, batch_size: int = 1,
                 radius: str = "theory", c_width: float | None = None) -> None:
        super().__init__()
        self._store_parameters(lam=lam, confidence=confidence, noise_scale=noise_scale, norm_bound=norm_bound,
                               width_multiplier=width_multiplier, batch_size=batch_size, radius=radius,
                               c_width=c_width)
        if c_width is not None and radius != "practical":
            raise ValueError(f"c_width sets the practical radius: it needs radius='practical', got radius={radius!r}")
        if self.c_width is None:
            self.c_width = PRACTICAL_WIDTH

    def _scores(self, features: np.ndarray) -> np.ndarray:
        x = features
        mean = x @ self.theta_
        proj = x @ self.v_inv_sqrt_
        return mean + self.beta_ * np.sqrt(np.einsum("mkd,mkd->mk", proj, proj))

    def _noise_level(self, t: int, sigma: float) -> tuple[float, float]:
        """(Upsilon, gamma): high-probability bounds on ||N||_op of the Gram block and ||noise|| of X^T y,
        for a noise of per-entry scale ``sigma`` (see the noisy-Gram agents' Notes)."""
        spec = self._require_spec()
        sig = sigma
        tail = math.sqrt(2 * math.log(2 * spec.horizon / self.confidence))
        return sig * (2 * math.sqrt(spec.dim + 1) + tail), sig * (math.sqrt(spec.dim) + tail)

    def _noisy_gram_policy(self, t: int, a: np.ndarray, sigma: float, xty_sd: float) -> None:
        """Set the UCB policy from a privatised augmented Gram matrix A~ = sum v v^T + noise, v = (phi, y) (the
        noisy-Gram agents): per-entry noise scale ``sigma`` of its Gram block, ``xty_sd`` of its X^T y block."""
        spec = self._require_spec()
        d = spec.dim
        ups, gam = self._noise_level(t, sigma)
        shift = 2.0 * ups if ups > 0 else self.lam
        rho_min, rho_max = (ups, 3.0 * ups) if ups > 0 else (self.lam, self.lam)
        g = 0.5 * (a[:d, :d] + a[:d, :d].T) + shift * np.eye(d)
        w, q = np.linalg.eigh(g)
        w = np.maximum(w, max(_EIG_FLOOR, 1e-6 * rho_min))
        self.theta_ = (q / w) @ (q.T @ a[:d, d])
        self.v_inv_sqrt_ = (q / np.sqrt(w)) @ q.T
        if self.radius == "practical":         # per-phi, see BatchedUCBAgent; w[0] = lambda_min of the shifted Gram
            sd = math.hypot(self.noise_scale, xty_sd / math.sqrt(w[0]))
            bias = self.norm_bound * min(math.sqrt(rho_max), rho_max / math.sqrt(w[0]))
            self.radius_parts_ = (sd, bias)
            self.beta_ = self.width_multiplier * (self.c_width * sd + bias)
            return
        self.beta_ = self.width_multiplier * (
            self.noise_scale * math.sqrt(2 * math.log(2 / self.confidence)
                                         + d * math.log(rho_max / rho_min + t * spec.bound ** 2 / (d * rho_min)))
            + self.norm_bound * math.sqrt(rho_max) + gam / math.sqrt(rho_min))


class LinUCBAgent(BatchedUCBAgent):
    """Non-private LinUCB (OFUL) with Sherman-Morrison updates.

    Parameters
    ----------
    lam : float
        Ridge regularizer lambda > 0.
    confidence : float
        delta_c in (0, 1), the confidence ellipsoid's failure probability (not a privacy parameter).
    noise_scale : float
        R, the sub-Gaussian scale of the reward noise (1 for rewards in [-1, 1]).
    norm_bound : float
        S >= ||theta*||.
    width_multiplier : float
        Multiplies beta_t (1 = the theorem's radius; 0 = greedy).
    batch_size : int
        Rounds between policy updates (1 = every round, the classical algorithm).
    radius : {"theory", "practical"}
        ``"theory"`` (default) the radius of Abbasi-Yadkori et al. Thm 2; ``"practical"`` the calibrated per-phi
        radius c_width R + sqrt(lambda) S (see the module docstring).
    c_width : float, optional
        The practical radius' constant (default :data:`~privbandit.oracles.ridge.PRACTICAL_WIDTH` = 2); only
        with ``radius="practical"``.

    References
    ----------
    Abbasi-Yadkori, Pal & Szepesvari (2011), Alg. 1 and Thm 2; source paper, `tab:comp`.
    """

    name: ClassVar[str] = "linucb"

    def _reset(self) -> None:
        spec = self._require_spec()
        d = spec.dim
        self.v_inv = np.eye(d) / self.lam
        self.xty = np.zeros(d)
        self.logdet = 0.0                      # log det(V / lambda)
        self._root0 = 2 * math.log(1 / self.confidence)      # constants of beta_t, set once per run
        self._bias = math.sqrt(self.lam) * self.norm_bound
        self._refresh(0)

    def _absorb_rows(self, x: np.ndarray, y: np.ndarray) -> None:
        """Rows (m, d) and rewards (m,): a rank-m update of V^{-1} and log det V in O(m d^2 + m^3)
        (:func:`~privbandit.linalg.inverse_rank_update`)."""
        self.xty += x.T.dot(y)
        self.logdet += inverse_rank_update(self.v_inv, x)

    def _refresh(self, t: int) -> None:
        sym = self.v_inv + self.v_inv.T                         # symmetrise: 0.5 (V^-1 + V^-T)
        sym *= 0.5
        self.v_inv = sym
        # the policy's V^{-1}, fixed until the next refresh: a copy, since _absorb_rows updates v_inv in place
        # before then; with batch_size = 1 every _absorb_rows is followed by a refresh, so they can share it
        self.policy_v_inv_ = sym if self.batch_size == 1 else sym.copy()
        self.theta_ = self.v_inv @ self.xty
        if self.radius == "practical":         # per-phi: c sd(noise part) + the regularizer's bias
            self.radius_parts_ = (self.noise_scale, self._bias)
            self.beta_ = self.width_multiplier * (self.c_width * self.radius_parts_[0] + self.radius_parts_[1])
            return
        self.beta_ = self.width_multiplier * (
            self.noise_scale * math.sqrt(self._root0 + max(self.logdet, 0.0)) + self._bias)

    def _scores(self, features: np.ndarray) -> np.ndarray:
        """UCB scores <x_a, theta> + beta ||x_a||_{V^{-1}} of contexts (m, K, d), as (m, K)."""
        m, k, d = features.shape
        x = features.reshape(m * k, d)
        w = np.add.reduce(x.dot(self.policy_v_inv_) * x, axis=1)  # x_a^T V^{-1} x_a, V of the last refresh
        return (x.dot(self.theta_) + self.beta_ * np.sqrt(np.maximum(w, 0.0))).reshape(m, k)


_BUDGET_CONSTRAINTS: ParameterConstraints = {"epsilon": [POSITIVE], "delta": [UNIT_OPEN]}
"""The privacy budget of the noisy-Gram UCB agents (:class:`SSLinUCBAgent`, :class:`LDPUCBAgent`)."""

def augmented_outer(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """v v^T (m, d+1, d+1) of the augmented rows v = (phi, y): what the noisy-Gram UCB agents privatise."""
    v = np.concatenate([x, y[:, None]], axis=1)
    return v[:, :, None] * v[:, None, :]


class SSLinUCBAgent(BatchedUCBAgent):
    """Joint-DP LinUCB of Shariff & Sheffet (2018): tree-based aggregation with the regularizer shift.

    Parameters
    ----------
    epsilon, delta : float
        The per-user budget (epsilon > 0, delta in (0, 1)); each tree node gets the analytic Gaussian
        multiplier sqrt(L) z_1(epsilon, delta) so the L levels compose exactly to (epsilon, delta).
    lam, confidence, noise_scale, norm_bound, width_multiplier, batch_size, radius, c_width :
        As in :class:`LinUCBAgent` (``lam`` is used only if the shift vanishes; the practical radius is
        c_width sqrt(R^2 + sd(h)^2 / lambda_min) + S min(sqrt(rho_max), rho_max / sqrt(lambda_min))).
    mechanism : callable, optional (keyword only)
        The audit seam, as :class:`~privbandit.oracles.Oracle`'s: called once per run with the calibrated
        :class:`~privbandit.privacy.SymmetricGaussianMechanism` of the tree's nodes (``mechanism_``), it returns
        the object that releases every node in its place (``release(values, rng)`` and ``ledger_entry()``,
        which the ledger records). None (the default): the calibrated one, unchanged. The radius reads the
        calibrated noise either way; the privacy of an agent given one is that of the object it returns.

    Notes
    -----
    The shift uses Upsilon = sigma sqrt(L) (2 sqrt(d+1) + sqrt(2 log(2T/delta_c))), a bound on the
    operator norm of a sum of L symmetric Gaussian matrices of entry scale sigma (Gaussian-matrix
    concentration, union bound over the T queries), and gamma = sigma sqrt(L) (sqrt(d) + sqrt(2 log(2T/delta_c)))
    for the X^T y block.

    References
    ----------
    Shariff & Sheffet (2018), Alg. 1 and Sec. 4.2 (Gaussian noise, "shifted" regularizer); source paper, `tab:comp`.
    """

    name: ClassVar[str] = "linucb-jdp"
    parameter_constraints: ClassVar[ParameterConstraints] = {**BatchedUCBAgent.parameter_constraints,
                                                            **_BUDGET_CONSTRAINTS, **MECHANISM_CONSTRAINTS}

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-5, mechanism: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._store_parameters(epsilon=epsilon, delta=delta, mechanism=mechanism)

    @property
    def privacy(self) -> PrivacySpec:
        """(epsilon, delta)-JDP."""
        return PrivacySpec("jdp", self.epsilon, self.delta)

    def _reset(self) -> None:
        spec = self._require_spec()
        self.levels = int(math.floor(math.log2(spec.horizon))) + 1
        z = math.sqrt(self.levels) * analytic_noise_multiplier(self.epsilon, self.delta)
        sensitivity = math.sqrt(2.0) * (spec.bound ** 2 + 1.0)   # Frobenius, of a sum of v v^T, one user replaced
        self.mechanism_ = SymmetricGaussianMechanism(sensitivity, z * sensitivity)
        self._node_mechanism = hooked(self.mechanism, self.mechanism_)    # what releases the nodes
        size = spec.dim + 1
        self._open = np.zeros((self.levels, size, size))        # exact sum of the open node of each level
        self._done = np.zeros((self.levels, size, size))        # exact sum of the latest completed node
        self._done_id = np.full(self.levels, -1, dtype=np.int64)
        self._noisy = np.zeros((self.levels, size, size))       # released noisy value of a completed node
        self._noisy_id = np.full(self.levels, -1, dtype=np.int64)
        self._sizes = np.left_shift(1, np.arange(self.levels))  # the node size of each level
        self._refresh(0)

    def _absorb_rows(self, x: np.ndarray, y: np.ndarray) -> None:
        x, y = clip_features(x, self._require_spec().bound), clip_rewards(y)   # (no-ops after update's clips)
        for lo in range(0, x.shape[0], _CHUNK):
            xs, ys = x[lo:lo + _CHUNK], y[lo:lo + _CHUNK]
            t0 = self.t + lo
            m = xs.shape[0]
            csum = np.empty((m + 1,) + self._open.shape[1:])  # csum[i]: the sum of the chunk's first i rows
            csum[0] = 0.0
            np.cumsum(augmented_outer(xs, ys), axis=0, out=csum[1:])
            sizes = self._sizes
            lasts = ((t0 + m) // sizes) * sizes                # last node boundary <= t0 + m, per level
            completed = lasts > t0                             # a node of that level completed in this chunk
            self._open[~completed] += csum[m]
            levs = np.flatnonzero(completed)
            # every completed level at once, entry for entry the same operations as one level at a time:
            # its latest node is csum[last] - csum[max(first, t0)] (+ the open part before t0 if first < t0)
            last, first = lasts[levs], lasts[levs] - sizes[levs]
            nodes = csum[last - t0] - csum[np.maximum(first, t0) - t0]
            carry = first < t0
            nodes[carry] += self._open[levs[carry]]
            self._done[levs] = nodes
            self._done_id[levs] = last // sizes[levs] - 1
            self._open[levs] = csum[m] - csum[last - t0]

    def _refresh(self, t: int) -> None:
        self._noisy_gram_policy(t, self._noisy_sum(t), self._noise_sigma(t), self._xty_noise_sd(t))

    def _noisy_sum(self, t: int) -> np.ndarray:
        size = self._open.shape[1]
        total = np.zeros((size, size))
        for lev in range(t.bit_length()):                      # the levels of t's set bits, lowest first
            if not (t >> lev) & 1:
                continue
            node_id = (t >> lev) - 1                           # the node [node_id 2^lev, (node_id + 1) 2^lev)
            if self._done_id[lev] != node_id:
                raise RuntimeError("tree state out of sync with the round counter")
            if self._noisy_id[lev] != node_id:                 # release this node once, lazily
                start = node_id << lev
                self._noisy[lev] = release_recorded(self.ledger, self._node_mechanism, self._done[lev],
                                                    self._fit_rng, start, start + (1 << lev), f"tree level {lev}")
                self._noisy_id[lev] = node_id
            total += self._noisy[lev]
        return total

    def _noise_sigma(self, t: int) -> float:
        return self.mechanism_.sigma * math.sqrt(self.levels)

    def _xty_noise_sd(self, t: int) -> float:
        return self.mechanism_.sigma * math.sqrt(t.bit_count())   # one node per set bit of t


class LDPUCBAgent(BatchedUCBAgent):
    """Local-DP LinUCB of Zheng et al. (2020): each user privatises (phi phi^T, phi y) on their side.

    Parameters
    ----------
    epsilon, delta : float
        The per-user local budget; one analytic SymPriv release of v v^T per user spends exactly it.
    lam, confidence, noise_scale, norm_bound, width_multiplier, batch_size, radius, c_width :
        As in :class:`SSLinUCBAgent`.
    mechanism : callable, optional (keyword only)
        The audit seam, as :class:`~privbandit.oracles.Oracle`'s: called once per run with the calibrated
        :class:`~privbandit.privacy.LocalRandomizer` of the users (``randomizer``), it returns the object that
        randomizes every user's row in its place (``randomizer(x, y, rng)`` and ``ledger_entry()``, which the
        ledger records). None (the default): the calibrated one, unchanged. The radius reads the calibrated
        noise either way.

    Notes
    -----
    After t users the aggregated noise has per-entry scale sigma sqrt(t); the shift and radius use
    Upsilon_t = sigma sqrt(t) (2 sqrt(d+1) + sqrt(2 log(2T/delta_c))) and
    gamma_t = sigma sqrt(t) (sqrt(d) + sqrt(2 log(2T/delta_c))), which is what gives LDP-UCB its
    T^{3/4} regret (`tab:comp`).

    References
    ----------
    Zheng et al. (2020), LDP-UCB (Alg. 2) for linear contextual bandits; source paper, `tab:comp`.
    """

    name: ClassVar[str] = "ldp-ucb"
    parameter_constraints: ClassVar[ParameterConstraints] = {**BatchedUCBAgent.parameter_constraints,
                                                            **_BUDGET_CONSTRAINTS, **MECHANISM_CONSTRAINTS}

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-5, mechanism: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._store_parameters(epsilon=epsilon, delta=delta, mechanism=mechanism)

    @property
    def privacy(self) -> PrivacySpec:
        """(epsilon, delta)-LDP."""
        return PrivacySpec("ldp", self.epsilon, self.delta)

    def _reset(self) -> None:
        spec = self._require_spec()
        # ||v v^T||_F = ||phi||^2 + y^2 <= B^2 + 1, which rows at ||phi|| = B exceed by rounding: pad the radius
        # (the channel is calibrated to the padded radius, so privacy is exact for what is projected onto)
        radius = padded(spec.bound ** 2 + 1.0)
        self.randomizer = LocalRandomizer.gaussian(augmented_outer, radius, self.epsilon, self.delta,
                                                   symmetric=True, feature_bound=spec.bound)
        self._user_randomizer = hooked(self.mechanism, self.randomizer)    # what randomizes the rows
        size = spec.dim + 1
        self._sum = np.zeros((size, size))
        self._refresh(0)

    def _absorb_rows(self, x: np.ndarray, y: np.ndarray) -> None:
        outputs = self._user_randomizer(x, y, self._fit_rng)   # raw rows stop here (the randomizer clips them first)
        self.ledger.record(self.t, self.t + x.shape[0], self._user_randomizer.ledger_entry(), kind="local",
                           label="ldp-ucb v v^T")
        self._absorb(outputs)

    def _absorb(self, outputs: np.ndarray) -> None:
        """Aggregate randomized matrices (m, d+1, d+1); never sees raw rows."""
        self._sum += outputs.sum(axis=0)

    def _refresh(self, t: int) -> None:
        self._noisy_gram_policy(t, self._noisy_sum(t), self._noise_sigma(t), self._xty_noise_sd(t))

    def _noisy_sum(self, t: int) -> np.ndarray:
        return self._sum

    def _noise_sigma(self, t: int) -> float:
        return self.randomizer.channel.sigma * math.sqrt(t)      # 0 before the first user

    _xty_noise_sd = _noise_sigma


register_agent("linucb", LinUCBAgent, description="non-private LinUCB / OFUL (Abbasi-Yadkori et al. 2011)",
               privacy="none", counterpart="linucb-jdp")
register_agent("linucb-jdp", SSLinUCBAgent, privacy="jdp",
               description="joint-DP LinUCB with tree-based aggregation (Shariff & Sheffet 2018)")
register_agent("ldp-ucb", LDPUCBAgent, privacy="ldp",
               description="local-DP LinUCB, users privatise (phi phi^T, phi y) (Zheng et al. 2020)")
for _name in ("linucb", "linucb-jdp", "ldp-ucb"):   # the calibrated per-phi radius beside the theorem's
    register_preset(f"{_name}-practical", _name, radius="practical")
