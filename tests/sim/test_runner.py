"""privbandit.sim.run: the batch path equals the Gymnasium step loop, the log grid, regret, privacy checks."""

from __future__ import annotations

from typing import ClassVar

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from conftest import LeakyUniform, build_agent

import privbandit  # noqa: F401 - registers the envs
from privbandit.agents import UniformAgent, agent_names
from privbandit.privacy.ledger import PrivacyBudgetExceeded
from privbandit.sim.runner import COLUMNS, geometric_grid, run, split_seed

T = 160


def make_env(horizon: int = T, family: str = "heavy-tailed", **kw):
    return gym.make("PrivLinCB-v0", family=family, dim=3, n_arms=4, horizon=horizon, **kw)


@pytest.mark.slow
@pytest.mark.parametrize("name", agent_names())    # every registered agent: one that fails to build fails here
def test_batch_path_and_step_loop_tables_agree_to_rounding(name):
    """The runner's two modes play the same rounds with the same uniforms. Their fits sum rows in another
    order, so the contract is agreement to rounding, with other arms only at decisions within rounding of a
    tie (margin-aware: check_step_loop_equals_batch_path); at this seed no decision is that close."""
    a = run(build_agent(name), make_env(), T, seed=7, mode="batch")
    b = run(build_agent(name), make_env(), T, seed=7, mode="loop")
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-9, atol=1e-12)
    assert a.to_csv(index=False) == run(build_agent(name), make_env(), T, seed=7, mode="batch").to_csv(index=False)


def test_batch_path_equals_step_loop_on_every_round_and_any_chunking():
    a = run(UniformAgent(), make_env(family="rare-direction"), T, seed=3, mode="batch", log="all")
    b = run(UniformAgent(), make_env(family="rare-direction"), T, seed=3, mode="loop", log="all")
    c = run(UniformAgent(), make_env(family="rare-direction"), T, seed=3, mode="batch", log="all", max_chunk=7)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    pd.testing.assert_frame_equal(a, c, check_exact=True)
    assert len(a) == T and list(a["t"]) == list(range(1, T + 1))


def test_regret_is_the_envs_pseudo_regret():
    table = run(UniformAgent(), make_env(), T, seed=11, mode="loop", log="all")
    env_seed, agent_rng = split_seed(11)
    env = make_env()
    agent = UniformAgent().reset(env.unwrapped.bandit_spec(), rng=agent_rng)
    obs, _ = env.reset(seed=env_seed)
    regret = []
    for _ in range(T):
        arm = agent.act(obs)
        obs, reward, _, _, info = env.step(arm)
        regret.append(info["regret"])
    np.testing.assert_allclose(table["regret"], regret, rtol=0, atol=1e-12)
    np.testing.assert_allclose(table["cum_regret"], np.cumsum(regret), rtol=0, atol=1e-9)
    assert (table["regret"] >= -1e-12).all()


def test_table_columns_labels_and_seeds():
    a = run(UniformAgent(), make_env(), T, seed=5)
    assert tuple(a.columns) == COLUMNS
    assert set(a["agent"]) == {"uniform"} and set(a["privacy_model"]) == {"none"}
    assert set(a["family"]) == {"heavy-tailed"} and set(a["env"]) == {"PrivLinCB-v0"}
    assert (a["seed"] == 5).all() and (a["horizon"] == T).all() and a["t"].iloc[-1] == T
    same = run(UniformAgent(), make_env(), T, seed=5)
    other = run(UniformAgent(), make_env(), T, seed=6)
    pd.testing.assert_frame_equal(a, same, check_exact=True)
    assert not np.array_equal(a["cum_regret"], other["cum_regret"])
    labelled = run(UniformAgent(), make_env(), T, seed=5, labels=dict(agent="u", env="ht"))
    assert set(labelled["agent"]) == {"u"} and set(labelled["env"]) == {"ht"}


def test_geometric_grid():
    g = geometric_grid(2 ** 24, 8)
    assert g[0] == 1 and g[-1] == 2 ** 24 and np.all(np.diff(g) > 0)
    assert len(g) < 24 * 8 + 10  # T = 2^24 stays small on disk
    assert list(geometric_grid(5, 8)) == [1, 2, 3, 4, 5]
    assert geometric_grid(1000, 2)[-1] == 1000
    ratios = g[1:].astype(float) / g[:-1]
    assert ratios[-50:].max() < 2 ** (1 / 8) * 1.01


def test_split_seed_is_documented_derivation():
    env_seed, rng = split_seed(3)
    env_ss, agent_ss = np.random.SeedSequence(3).spawn(2)
    words = env_ss.generate_state(4, dtype=np.uint32)
    assert env_seed == sum(int(w) << (32 * i) for i, w in enumerate(words))
    assert rng.random() == np.random.default_rng(agent_ss).random()
    s1, _ = split_seed(np.random.SeedSequence(3))
    assert s1 == env_seed


class _Honest(LeakyUniform):
    noise_scale: ClassVar[float] = 1.0


def test_the_ledger_is_checked_at_the_end_of_every_run():
    with pytest.raises(PrivacyBudgetExceeded):
        run(LeakyUniform(), make_env(), T, seed=0)
    table = run(_Honest(), make_env(), T, seed=0)
    spent = table["epsilon_spent"].unique()
    assert spent.size == 1 and 0.99 < spent[0] <= 1.0 + 1e-9
    assert set(table["privacy_model"]) == {"jdp"} and set(table["epsilon"]) == {1.0}


def test_bad_arguments():
    with pytest.raises(ValueError, match="mode"):
        run(UniformAgent(), make_env(), T, mode="fast")
    with pytest.raises(ValueError, match="log"):
        run(UniformAgent(), make_env(), T, log="linear")
    with pytest.raises(ValueError, match="horizon"):
        run(UniformAgent(), make_env(), T + 1)
    with pytest.raises(TypeError, match="Agent"):
        run(object(), make_env(), T)
    with pytest.raises(ValueError, match="seed"):
        run(UniformAgent(), make_env(), T, seed=-1)
    with pytest.raises(ValueError, match="labels"):
        run(UniformAgent(), make_env(), T, labels=dict(colour="red"))
