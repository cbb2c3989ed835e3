"""Logged bandit feedback for off-policy evaluation: what an agent played, with the propensities it used.

``collect_feedback(agent, env, horizon, seed)`` plays the same rounds as :func:`privbandit.sim.run` for
that seed (the batch path: same contexts, rewards and actions) and records, for every round t, the
chosen arm a_t, its reward r_t, the expected rewards of all K arms, the logging policy's action
distribution pi_t (``agent.action_probabilities`` of the round's features, taken while the policy that
chose a_t is still in force) and its propensity ``pscore`` pi_t(a_t); the features phi_t(a) of every arm
are kept on request. Within a policy chunk (the rounds one fixed policy serves, an epoch or less) the
probabilities of all rounds come from one batched call, so there is no per-round Python work.

The log is the interaction data itself (users' features and rewards), not a private release: it is for
evaluating estimators and policies offline, as a simulator's ground truth.

:meth:`BanditFeedback.to_frame` exports a pandas table, :meth:`BanditFeedback.to_obp` Open Bandit Pipeline's
bandit-feedback dict (the layout ``obp.dataset.SyntheticBanditDataset.obtain_batch_bandit_feedback`` returns, ready
for ``obp.ope.OffPolicyEvaluation``); :meth:`BanditFeedback.estimated_rewards` is the reward model of the Direct
Method and Doubly Robust, and :meth:`BanditFeedback.policy_value` the ground truth to compare an estimate with.

References
----------
Source paper, `alg:batch-cb-meta` (the policy is fixed within an epoch, so a chunk's propensities are
one policy's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._validation import as_generator, check_array, check_bool, check_int, check_positive
from ..agents.base import Agent
from ..linalg import solve_regularized
from .runner import made_env, policy_chunks, start_run


@dataclass(frozen=True)
class BanditFeedback:
    """Logged bandit feedback of one run (arrays indexed by round, 0-based).

    Attributes
    ----------
    action : ndarray of int (T,)
        The chosen arm a_t in {0, ..., K-1}.
    reward : ndarray (T,)
        Its drawn reward r_t.
    pscore : ndarray (T,)
        Its propensity pi_t(a_t) under the logging policy, > 0.
    action_dist : ndarray (T, K)
        The logging policy's whole action distribution pi_t in every round (rows sum to 1).
    expected_reward : ndarray (T, K)
        nu(<phi_t(a), theta*>) of every arm.
    epoch : ndarray of int (T,)
        The agent's epoch in every round (0 for agents without epochs).
    context : ndarray (T, K, d) or None
        The features phi_t(a) of every arm, when collected (``contexts=True``).
    """

    action: np.ndarray
    reward: np.ndarray
    pscore: np.ndarray
    action_dist: np.ndarray
    expected_reward: np.ndarray
    epoch: np.ndarray
    context: np.ndarray | None = None

    @property
    def n_rounds(self) -> int:
        """T, the number of logged rounds."""
        return int(self.action.shape[0])

    @property
    def n_actions(self) -> int:
        """K, the number of arms."""
        return int(self.expected_reward.shape[1])

    @property
    def regret(self) -> np.ndarray:
        """Instantaneous pseudo-regret max_a m_t(a) - m_t(a_t) of every round, shape (T,)."""
        chosen = self.expected_reward[np.arange(self.n_rounds), self.action]
        return self.expected_reward.max(axis=1) - chosen

    def to_frame(self) -> pd.DataFrame:
        """One row per round: ``t`` (1-based), ``epoch``, ``action``, ``reward``, ``pscore``, ``regret``, then
        ``expected_reward_<a>`` and ``pi_<a>`` for every arm a, then ``phi_<a>_<j>`` for every arm a and
        coordinate j when the contexts were collected."""
        k = self.n_actions
        columns: dict[str, Any] = dict(t=np.arange(1, self.n_rounds + 1), epoch=self.epoch, action=self.action,
                                       reward=self.reward, pscore=self.pscore, regret=self.regret)
        columns.update({f"expected_reward_{a}": self.expected_reward[:, a] for a in range(k)})
        columns.update({f"pi_{a}": self.action_dist[:, a] for a in range(k)})
        if self.context is not None:
            flat = self.context.reshape(self.n_rounds, -1)
            d = self.context.shape[2]
            columns.update({f"phi_{a}_{j}": flat[:, a * d + j] for a in range(k) for j in range(d)})
        return pd.DataFrame(columns)

    def to_obp(self) -> dict[str, Any]:
        """The feedback as Open Bandit Pipeline's bandit-feedback dict.

        Keys and shapes: ``n_rounds`` (T), ``n_actions`` (K), ``context`` (T, K*d): every arm's features of
        the round, flattened arm by arm (None when the contexts were not collected), ``action_context``
        (K, K): the identity (the arms are indices; their features live in ``context``), ``action`` (T,),
        ``position`` None (no slates), ``reward`` (T,), ``expected_reward`` (T, K), ``pi_b`` (T, K, 1): the
        logging policy's distribution, ``pscore`` (T,).

        OBP's ``action_context`` is one fixed vector per arm, so features that change with both the round
        and the arm (every privbandit env) cannot be split into ``context`` and ``action_context``; a
        regression on this layout (OBP's ``RegressionModel``) sees a round's features joined to the arm's
        index and cannot express a reward linear in the chosen arm's features. For the Direct Method and
        Doubly Robust pass :meth:`estimated_rewards` as ``estimated_rewards_by_reg_model``; IPW-type
        estimators need only this dict.
        """
        context = None if self.context is None else self.context.reshape(self.n_rounds, -1)
        return dict(n_rounds=self.n_rounds, n_actions=self.n_actions, context=context,
                    action_context=np.eye(self.n_actions), action=self.action, position=None, reward=self.reward,
                    expected_reward=self.expected_reward, pi_b=self.action_dist[:, :, None], pscore=self.pscore)

    def estimated_rewards(self, n_folds: int = 5, ridge: float = 1.0, rng: Any = 0) -> np.ndarray:
        """Cross-fitted ridge estimates q_hat(x_t, a) = <phi_t(a), theta_hat_(-f(t))> of every round and arm.

        The rounds are split at random (``rng``) into ``n_folds`` folds; for the rounds of fold f, theta_hat_(-f)
        is the ridge fit (penalty ``ridge`` = lambda) of the rewards r_s on the chosen arms' features
        phi_s(a_s) of the rounds s outside f, so no round's own reward enters its estimate (the reward model
        and the importance weights of Doubly Robust stay independent given the round). Estimates are
        clipped to the reward range [-1, 1]. The linear model is exact for ``PrivLinCB-v0`` and
        ``PrivCBify-v0`` with ``reward="linear-fit"``; under a GLM link or the label reward it is the best
        linear approximation.

        Parameters
        ----------
        n_folds : int
            K-fold cross-fitting, 2 <= n_folds <= T.
        ridge : float
            lambda > 0.
        rng : int or Generator
            Draws the folds.

        Returns
        -------
        ndarray (T, K, 1)
            Open Bandit Pipeline's ``estimated_rewards_by_reg_model`` (``len_list`` = 1).

        Raises
        ------
        ValueError
            Without the contexts (collect with ``contexts=True``).

        Examples
        --------
        >>> import numpy as np
        >>> from privbandit.agents import make_agent
        >>> from privbandit.envs import PrivLinCBEnv
        >>> env = PrivLinCBEnv(n_arms=3, dim=4, horizon=4000, family="isotropic")
        >>> fb = collect_feedback(make_agent("uniform"), env, seed=0, contexts=True)
        >>> q_hat = fb.estimated_rewards(n_folds=5)
        >>> q_hat.shape
        (4000, 3, 1)
        >>> # mean |q_hat - E[r | x, a]| against the mean |E[r | x, a]| itself
        >>> err = np.mean(np.abs(q_hat[:, :, 0] - fb.expected_reward))
        >>> print(f"{err:.2f} vs {np.mean(np.abs(fb.expected_reward)):.2f}")
        0.04 vs 0.43
        """
        if self.context is None:
            raise ValueError("estimated_rewards needs the features of every arm: collect with contexts=True")
        n, k = self.n_rounds, self.n_actions
        n_folds = check_int("n_folds", n_folds, low=2, high=n)
        lam = check_positive("ridge", ridge)
        fold = as_generator(rng).permutation(n) % n_folds
        x = self.context[np.arange(n), self.action]
        q = np.empty((n, k))
        for f in range(n_folds):
            held = fold == f
            xt, rt = x[~held], self.reward[~held]  # the training rows only: bit for bit blind to the held-out
            q[held] = self.context[held] @ solve_regularized(xt.T @ xt, xt.T @ rt, lam)
        return np.clip(q, -1.0, 1.0, out=q)[:, :, None]

    def policy_value(self, action_dist: Any) -> float:
        """The true value of a target policy on the logged rounds: mean_t sum_a pi_e(a | x_t) m_t(a).

        What an off-policy estimate of ``action_dist`` estimates (OBP's ground truth,
        ``calc_ground_truth_policy_value``, on these rounds).

        Parameters
        ----------
        action_dist : array (T, K) or (T, K, 1)
            The target policy's distribution in every round (rows sum to 1).
        """
        p = check_array("action_dist", action_dist, ndim=(2, 3))
        p = p[:, :, 0] if p.ndim == 3 else p
        if p.shape != self.expected_reward.shape:
            raise ValueError(f"action_dist must have shape ({self.n_rounds}, {self.n_actions}[, 1]), got {p.shape}")
        return float(np.mean(np.sum(p * self.expected_reward, axis=1)))


def collect_feedback(agent: Agent, env: Any, horizon: int | None = None, seed: Any = 0, *, contexts: bool = False,
                     max_chunk: int = 1 << 14, env_kwargs: dict[str, Any] | None = None) -> BanditFeedback:
    """Play ``agent`` on ``env`` as :func:`~privbandit.sim.run` does and log its bandit feedback.

    Parameters
    ----------
    agent, env, horizon, max_chunk, env_kwargs
        As in :func:`~privbandit.sim.run` (``agent`` a privbandit :class:`~privbandit.agents.Agent`).
    seed : int or numpy.random.SeedSequence
        The run's seed, split as in :func:`~privbandit.sim.run`: the same seed plays the same rounds and
        actions there and here.
    contexts : bool
        Also keep every round's features (T x K x d floats).

    Returns
    -------
    BanditFeedback
        The log; ``.to_frame()`` and ``.to_obp()`` export it.

    Raises
    ------
    privbandit.privacy.ledger.PrivacyBudgetExceeded
        If the agent's ledger shows a user who spent more than the agent's privacy spec.
    RuntimeError
        If the agent played an arm to which its ``action_probabilities`` gave probability 0.

    References
    ----------
    Source paper, `alg:batch-cb-meta`.
    """
    if not isinstance(agent, Agent):
        raise TypeError(f"agent must be a privbandit Agent, got {type(agent).__name__}")
    check_bool("contexts", contexts)
    max_chunk = check_int("max_chunk", max_chunk, low=1)
    with made_env(env, horizon, env_kwargs) as env:
        spec, _obs = start_run(agent, env, horizon, seed)
        n, k = spec.horizon, spec.n_arms
        action = np.empty(n, dtype=np.int64)
        reward = np.empty(n)
        dist = np.empty((n, k))
        expected = np.empty((n, k))
        epoch = np.empty(n, dtype=np.int64)
        context = np.empty((n, k, spec.dim)) if contexts else None
        for chunk in policy_chunks(agent, env, n, max_chunk):
            # the chunk's arms were drawn from this policy; the agent learns from them only after this step
            rows = slice(chunk.start, chunk.start + chunk.arms.shape[0])
            m = np.arange(chunk.arms.shape[0])
            action[rows] = chunk.arms
            reward[rows] = chunk.rewards[m, chunk.arms]
            dist[rows] = agent.action_probabilities(chunk.features)
            expected[rows] = chunk.expected_rewards
            epoch[rows] = chunk.epoch
            if context is not None:
                context[rows] = chunk.features
    agent.ledger.check(agent.privacy)
    pscore = dist[np.arange(n), action]
    if not np.all(pscore > 0):
        t = int(np.flatnonzero(~(pscore > 0))[0])
        raise RuntimeError(f"{type(agent).__name__} played arm {action[t]} at round {t + 1}, to which its "
                           "action_probabilities gave probability 0: the two disagree")
    return BanditFeedback(action=action, reward=reward, pscore=pscore, action_dist=dist, expected_reward=expected,
                          epoch=epoch, context=context)
