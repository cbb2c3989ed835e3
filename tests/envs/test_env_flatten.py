"""A 1-D observation for libraries that want one (Stable-Baselines3's check_env warns on the (K, d) Box):
Gymnasium's FlattenObservation wrapper, as the env guide shows, serves the same rounds flattened, and an
agent is driven by reshaping them back to (K, d)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.wrappers import FlattenObservation
from gymnasium.wrappers.vector import FlattenObservation as FlattenVectorObservation

from privbandit.agents import make_agent

K, D, T = 4, 3, 300


@pytest.mark.parametrize("env_id", ["PrivLinCB-v0", "PrivGLMCB-v0"])
def test_flatten_observation_gives_a_1d_box_of_the_same_rounds(env_id):
    flat = FlattenObservation(gym.make(env_id, n_arms=K, dim=D, horizon=T))
    plain = gym.make(env_id, n_arms=K, dim=D, horizon=T)
    # 1-D: what Stable-Baselines3's check_env asks of a Box that is not an image
    assert flat.observation_space.shape == (K * D,) and flat.observation_space.dtype == np.float64
    check_env(plain.unwrapped, skip_render_check=True)   # the env itself is unchanged (Gymnasium's checker)
    obs, _ = flat.reset(seed=4)
    full, _ = plain.reset(seed=4)
    assert obs.shape == (K * D,) and obs in flat.observation_space
    np.testing.assert_array_equal(obs.reshape(K, D), full)       # row-major: arm a is obs[a * d:(a + 1) * d]
    obs, reward, _, _, info = flat.step(2)
    full, reward_full, _, _, info_full = plain.step(2)
    np.testing.assert_array_equal(obs.reshape(K, D), full)
    assert reward == reward_full and info["regret"] == info_full["regret"]


def test_an_agent_driven_through_the_flat_observation_plays_the_same_run():
    def play(env, shape):
        agent = make_agent("elim-nonprivate")
        obs, _ = env.reset(seed=1)
        agent.reset(env.unwrapped.bandit_spec(), rng=1)
        arms, regret = [], 0.0
        for _ in range(T):
            phi = obs.reshape(shape)
            arm = agent.act(phi)
            obs, reward, _, truncated, info = env.step(arm)
            agent.update(phi[arm], reward)
            arms.append(arm)
            regret += info["regret"]
        assert truncated
        return arms, regret

    flat = play(FlattenObservation(gym.make("PrivLinCB-v0", n_arms=K, dim=D, horizon=T)), (K, D))
    plain = play(gym.make("PrivLinCB-v0", n_arms=K, dim=D, horizon=T), (K, D))
    assert flat == plain and len(set(flat[0])) > 1


def test_the_native_vector_env_flattens_with_gymnasiums_vector_wrapper():
    vec = gym.make_vec("PrivLinCB-v0", num_envs=2, n_arms=K, dim=D, horizon=T)
    flat = FlattenVectorObservation(gym.make_vec("PrivLinCB-v0", num_envs=2, n_arms=K, dim=D, horizon=T))
    assert flat.single_observation_space.shape == (K * D,) and flat.observation_space.shape == (2, K * D)
    obs, _ = flat.reset(seed=0)
    full, _ = vec.reset(seed=0)
    np.testing.assert_array_equal(obs.reshape(2, K, D), full)
    obs = flat.step(np.array([0, 1]))[0]
    np.testing.assert_array_equal(obs.reshape(2, K, D), vec.step(np.array([0, 1]))[0])
