"""Logged bandit feedback: the propensities are the ones the agent drew its arms from, and the exports
(pandas, Open Bandit Pipeline's dict) carry the run that ``run`` plays for the same seed."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

from privbandit.agents import make_agent
from privbandit.agents.base import BanditSpec
from privbandit.agents.simple import UniformAgent
from privbandit.envs.instance import RoundBatch
from privbandit.sim import BanditFeedback, collect_feedback, run


class FixedRoundsEnv:
    """A bandit whose every round has the same features: actions within a fixed policy are i.i.d."""

    def __init__(self, features: np.ndarray, theta: np.ndarray, horizon: int) -> None:
        self.features, self.theta, self.horizon = features, theta, horizon

    @property
    def unwrapped(self) -> FixedRoundsEnv:
        return self

    def bandit_spec(self) -> BanditSpec:
        k, d = self.features.shape
        return BanditSpec(k, d, self.horizon)

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        self._rng = np.random.default_rng(seed)
        return self.features.copy(), {}

    def sample_batch(self, n: int) -> RoundBatch:
        x = np.broadcast_to(self.features, (n, *self.features.shape)).copy()
        m = x @ self.theta
        r = np.where(self._rng.random(m.shape) < (1 + m) / 2, 1.0, -1.0)
        return RoundBatch(x, r, m)


FIXED_X = np.array([[0.6, 0.0, 0.0], [0.0, 0.6, 0.0], [0.0, 0.0, 0.6], [0.35, 0.35, 0.0]])
FIXED_THETA = np.array([0.5, 0.3, -0.2])
STOCHASTIC = [("squarecb-nonprivate", {}), ("epsilon-greedy", {}),
              ("squarecb-jdp-iw", dict(epsilon=1.0, delta=1e-5))]


@pytest.mark.parametrize(("name", "kwargs"), STOCHASTIC, ids=[n for n, _ in STOCHASTIC])
def test_propensities_match_the_empirical_frequencies_on_a_fixed_context_stream(name, kwargs):
    env = FixedRoundsEnv(FIXED_X, FIXED_THETA, horizon=2**14)
    fb = collect_feedback(make_agent(name, **kwargs), env, seed=1)
    checked = 0
    for epoch in np.unique(fb.epoch):
        sel = fb.epoch == epoch
        p = fb.action_dist[sel]
        # one policy and one context: every round of the epoch has the same distribution ...
        np.testing.assert_array_equal(p, np.broadcast_to(p[0], p.shape))
        n = int(sel.sum())
        if n < 512:
            continue
        # ... and the arms played in it are i.i.d. draws from that distribution (5 standard errors)
        freq = np.bincount(fb.action[sel], minlength=4) / n
        tol = 5 * np.sqrt(p[0] * (1 - p[0]) / n) + 1e-9
        assert np.all(np.abs(freq - p[0]) <= tol), (epoch, freq, p[0])
        checked += 1
    assert checked >= 4
    # over the whole run: sum_t (1{a_t = a} - pi_t(a)) is a martingale with variance sum_t pi_t(a)(1 - pi_t(a))
    hits = np.eye(4)[fb.action]
    drift = (hits - fb.action_dist).sum(axis=0)
    assert np.all(np.abs(drift) <= 5 * np.sqrt((fb.action_dist * (1 - fb.action_dist)).sum(axis=0)) + 1e-9)
    np.testing.assert_array_equal(fb.pscore, fb.action_dist[np.arange(fb.n_rounds), fb.action])


def test_feedback_logs_the_rounds_run_plays_for_the_same_seed():
    env = gym.make("PrivLinCB-v0", dim=4, n_arms=5, horizon=2**11)
    fb = collect_feedback(make_agent("squarecb-nonprivate"), env, seed=3, contexts=True, max_chunk=300)
    table = run(make_agent("squarecb-nonprivate"), env, seed=3, log="all")
    np.testing.assert_array_equal(fb.regret, table["regret"].to_numpy())
    np.testing.assert_array_equal(fb.epoch, table["epoch"].to_numpy())
    assert np.all(np.abs(fb.reward) <= 1.0)
    np.testing.assert_allclose(fb.action_dist.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # the contexts are the env's rounds: the expected rewards are linear in them
    theta = env.unwrapped.instance.theta
    np.testing.assert_allclose(fb.context @ theta, fb.expected_reward, rtol=0, atol=1e-12)


def test_uniform_agent_logs_propensity_one_over_k():
    env = gym.make("PrivLinCB-v0", dim=3, n_arms=4, horizon=500)
    fb = collect_feedback(UniformAgent(), env, seed=0)
    np.testing.assert_array_equal(fb.pscore, np.full(500, 0.25))


def test_exports_follow_the_pandas_and_open_bandit_pipeline_layouts():
    env = gym.make("PrivLinCB-v0", dim=3, n_arms=4, horizon=300)
    fb = collect_feedback(make_agent("squarecb-nonprivate"), "PrivLinCB-v0", 300, seed=2, contexts=True,
                          env_kwargs=dict(dim=3, n_arms=4))
    same = collect_feedback(make_agent("squarecb-nonprivate"), env, seed=2, contexts=True)
    np.testing.assert_array_equal(fb.action, same.action)
    obp = fb.to_obp()
    assert set(obp) == {"n_rounds", "n_actions", "context", "action_context", "action", "position", "reward",
                        "expected_reward", "pi_b", "pscore"}
    assert (obp["n_rounds"], obp["n_actions"]) == (300, 4)
    assert obp["context"].shape == (300, 12) and obp["action_context"].shape == (4, 4)
    assert obp["pi_b"].shape == (300, 4, 1) and obp["expected_reward"].shape == (300, 4)
    np.testing.assert_array_equal(obp["pi_b"][np.arange(300), obp["action"], 0], obp["pscore"])
    np.testing.assert_array_equal(obp["context"][:, 3:6], fb.context[:, 1, :])     # arm by arm
    frame = fb.to_frame()
    assert list(frame.columns[:6]) == ["t", "epoch", "action", "reward", "pscore", "regret"]
    assert frame.shape == (300, 6 + 4 + 4 + 12)
    np.testing.assert_array_equal(frame["pscore"], fb.pscore)
    np.testing.assert_array_equal(frame["phi_2_1"], fb.context[:, 2, 1])
    assert collect_feedback(make_agent("uniform"), env, seed=2).to_obp()["context"] is None


class DisagreeingAgent(UniformAgent):
    """Plays uniformly but claims to play arm 0 only."""

    def _probabilities(self, features: np.ndarray) -> np.ndarray:
        p = np.zeros(features.shape[:2])
        p[:, 0] = 1.0
        return p


def test_an_arm_played_with_claimed_probability_zero_is_an_error():
    env = gym.make("PrivLinCB-v0", dim=3, n_arms=4, horizon=50)
    with pytest.raises(RuntimeError, match="probability 0"):
        collect_feedback(DisagreeingAgent(), env, seed=0)


def test_bad_arguments_are_named():
    env = gym.make("PrivLinCB-v0", dim=3, n_arms=4, horizon=50)
    with pytest.raises(TypeError, match="agent must be a privbandit Agent"):
        collect_feedback(object(), env)
    with pytest.raises(TypeError, match="contexts must be a bool"):
        collect_feedback(UniformAgent(), env, contexts="yes")
    with pytest.raises(ValueError, match="env_kwargs applies only"):
        collect_feedback(UniformAgent(), env, env_kwargs=dict(dim=3))
    with pytest.raises(ValueError, match="max_chunk"):
        collect_feedback(UniformAgent(), env, max_chunk=0)
    assert isinstance(collect_feedback(UniformAgent(), env, 10), BanditFeedback)


# -- the reward model Open Bandit Pipeline's Direct Method and Doubly Robust need ----------------
# OBP's formulas (obp/ope/estimators.py, len_list = 1, no weight clipping), with w_t = pi_e(a_t | x_t) / pscore_t:
#   IPW = mean_t w_t r_t
#   DM  = mean_t sum_a pi_e(a | x_t) q_hat(x_t, a)
#   DR  = mean_t [sum_a pi_e(a | x_t) q_hat(x_t, a) + w_t (r_t - q_hat(x_t, a_t))]
def _obp_round_rewards(fb: BanditFeedback, pi_e: np.ndarray, q_hat: np.ndarray) -> dict[str, np.ndarray]:
    rows = np.arange(fb.n_rounds)
    w = pi_e[rows, fb.action, 0] / fb.pscore
    dm = np.average(q_hat[:, :, 0], weights=pi_e[:, :, 0], axis=1)
    return {"ipw": w * fb.reward, "dm": dm, "dr": dm + w * (fb.reward - q_hat[rows, fb.action, 0])}


@pytest.fixture(scope="module")
def logged() -> BanditFeedback:
    """4096 rounds of an adaptive logging policy (epsilon-greedy) on a linear bandit, contexts kept."""
    env = gym.make("PrivLinCB-v0", n_arms=5, dim=5, horizon=4096, family="isotropic")
    return collect_feedback(make_agent("epsilon-greedy"), env, seed=0, contexts=True)


def _targets(fb: BanditFeedback) -> dict[str, np.ndarray]:
    """Target policies as OBP's action_dist (n, K, 1): uniform, the optimal arm, the worst arm."""
    n, k, m = fb.n_rounds, fb.n_actions, fb.expected_reward
    return {"uniform": np.full((n, k, 1), 1 / k), "optimal": np.eye(k)[m.argmax(axis=1)][:, :, None],
            "worst": np.eye(k)[m.argmin(axis=1)][:, :, None]}


def test_reward_model_has_obp_shape_and_estimates_the_true_expected_rewards(logged):
    q_hat = logged.estimated_rewards(n_folds=5, rng=0)
    assert q_hat.shape == logged.to_obp()["pi_b"].shape == (4096, 5, 1)  # OBP: same shape as action_dist
    err = np.abs(q_hat[:, :, 0] - logged.expected_reward)
    assert err.mean() < 0.05 < np.abs(logged.expected_reward).mean() / 5
    assert np.all(np.abs(q_hat) <= 1.0)


def test_no_round_predicts_itself():
    env = gym.make("PrivLinCB-v0", n_arms=3, dim=4, horizon=400)
    fb = collect_feedback(make_agent("uniform"), env, seed=1, contexts=True)
    q_hat = fb.estimated_rewards(n_folds=4, rng=7)
    t = 123
    flipped = dataclasses.replace(fb, reward=np.where(np.arange(400) == t, -fb.reward, fb.reward))
    q_flip = flipped.estimated_rewards(n_folds=4, rng=7)
    np.testing.assert_array_equal(q_flip[t], q_hat[t])      # round t's estimate never saw r_t ...
    moved = np.any(q_flip != q_hat, axis=(1, 2))
    assert moved.sum() == 300                               # ... every round of the 3 other folds did


def test_dm_and_dr_with_obp_formulas_estimate_target_policy_values(logged):
    q_hat = logged.estimated_rewards(n_folds=5, rng=0)
    for name, pi_e in _targets(logged).items():
        truth = logged.policy_value(pi_e)
        rounds = _obp_round_rewards(logged, pi_e, q_hat)
        se = {key: v.std(ddof=1) / np.sqrt(v.size) for key, v in rounds.items()}
        assert abs(rounds["dm"].mean() - truth) < 0.02, name        # the model is the true (linear) one
        assert abs(rounds["dr"].mean() - truth) < 4 * se["dr"], name  # unbiased: within 4 standard errors
        assert abs(rounds["ipw"].mean() - truth) < 4 * se["ipw"], name


def test_policy_value_is_obps_ground_truth(logged):
    pi_e = _targets(logged)["uniform"]
    want = np.average(logged.expected_reward, weights=pi_e[:, :, 0], axis=1).mean()
    assert logged.policy_value(pi_e) == pytest.approx(want, abs=1e-15)
    assert logged.policy_value(pi_e[:, :, 0]) == logged.policy_value(pi_e)
    with pytest.raises(ValueError, match="action_dist must have shape"):
        logged.policy_value(pi_e[:10])


def test_reward_model_arguments_are_named():
    env = gym.make("PrivLinCB-v0", dim=3, n_arms=4, horizon=50)
    with pytest.raises(ValueError, match="contexts=True"):
        collect_feedback(UniformAgent(), env, seed=0).estimated_rewards()
    fb = collect_feedback(UniformAgent(), env, seed=0, contexts=True)
    with pytest.raises(ValueError, match="n_folds"):
        fb.estimated_rewards(n_folds=1)
    with pytest.raises(ValueError, match="ridge"):
        fb.estimated_rewards(ridge=0.0)


def test_a_linear_model_on_obps_flattened_layout_cannot_do_what_the_per_arm_model_does(logged):
    # OBP's RegressionModel ("normal" fitting) regresses r_t on [context_t, action_context[a_t]] and predicts
    # arm a from [context_t, action_context[a]]: with to_obp()'s layout, a linear base model is additive in
    # the round and the arm, so it cannot follow <phi_t(a), theta*>
    feedback = logged.to_obp()
    n, k = logged.n_rounds, logged.n_actions
    design = np.hstack([feedback["context"], feedback["action_context"][logged.action]])
    beta = np.linalg.solve(design.T @ design + np.eye(design.shape[1]), design.T @ logged.reward)
    flat = np.stack([np.hstack([feedback["context"], np.tile(feedback["action_context"][a], (n, 1))]) @ beta
                     for a in range(k)], axis=1)[:, :, None]
    ours = logged.estimated_rewards(rng=0)
    m = logged.expected_reward[:, :, None]
    assert np.abs(ours - m).mean() < 0.05 < 0.3 < np.abs(flat - m).mean()
    pi_e = _targets(logged)["worst"]
    truth = logged.policy_value(pi_e)
    assert abs(np.mean(np.sum(pi_e * ours, axis=1)) - truth) < 0.02
    assert abs(np.mean(np.sum(pi_e * flat, axis=1)) - truth) > 0.5  # DM on the flat model: off by half the range
