"""The public API by name: budgets required (private) or refused (non-private), clear errors on bad input."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import privbandit  # noqa: F401  (registers the envs)
from privbandit.agents import BanditSpec, agent_is_private, agent_names, make_agent
from privbandit.links import identity_link
from privbandit.oracles import Estimate, make_oracle, oracle_class, oracle_names
from privbandit.sim.runner import run

PRIVATE_AGENTS = [n for n in agent_names() if agent_is_private(n)]
NONPRIVATE_AGENTS = [n for n in agent_names() if agent_is_private(n) is False]
PRIVATE_ORACLES = [n for n in oracle_names() if oracle_class(n).privacy_models != ("none",)]


# -- budgets by name ---------------------------------------------------------------------------------

def test_the_registry_says_which_agents_are_private():
    assert {"elim-jdp", "elim-ldp", "linucb-jdp", "ldp-ucb", "squarecb-dpsgd"} <= set(PRIVATE_AGENTS)
    assert {"uniform", "linucb", "elim-nonprivate", "squarecb-nonprivate", "epsilon-greedy"} <= set(NONPRIVATE_AGENTS)
    assert set(PRIVATE_AGENTS) | set(NONPRIVATE_AGENTS) == set(agent_names())


@pytest.mark.parametrize("name", PRIVATE_AGENTS)
def test_a_private_agent_by_name_requires_epsilon(name):
    with pytest.raises(ValueError, match=rf"{name} is private: choose a budget, e\.g\. make_agent\('{name}', epsilon="):
        make_agent(name)
    with pytest.raises(ValueError, match="is private"):
        make_agent(name, delta=1e-6)
    assert make_agent(name, epsilon=0.5).privacy.epsilon == 0.5


@pytest.mark.parametrize("name", NONPRIVATE_AGENTS)
def test_a_nonprivate_agent_by_name_refuses_a_budget(name):
    for budget in ({"epsilon": 1}, {"delta": 1e-5}):
        with pytest.raises(ValueError, match=rf"{name} is non-private: it takes no epsilon/delta"):
            make_agent(name, **budget)


def test_the_nonprivate_error_names_the_private_counterpart():
    with pytest.raises(ValueError, match=r"linucb is non-private.*its private counterpart is linucb-jdp"):
        make_agent("linucb", epsilon=1)
    with pytest.raises(ValueError, match=r"counterpart is elim-jdp"):
        make_agent("elim-nonprivate", epsilon=1)


def test_an_oracle_instance_carries_its_own_budget():
    oracle = make_oracle("iw-regression-dp", epsilon=0.3)
    assert make_agent("elim-jdp", oracle=oracle).privacy.epsilon == 0.3


@pytest.mark.parametrize("name", PRIVATE_ORACLES)
def test_a_private_oracle_by_name_requires_epsilon(name):
    want = rf"{name} is private: choose a budget, e\.g\. make_oracle\('{name}', epsilon="
    with pytest.raises(ValueError, match=want):
        make_oracle(name)
    assert make_oracle(name, epsilon=0.5).privacy.epsilon == 0.5


def test_a_nonprivate_oracle_by_name_refuses_a_budget():
    for budget in ({"epsilon": 1}, {"delta": 1e-5}, {"epsilon": 1, "model": "none"}):
        with pytest.raises(ValueError, match="ridge is non-private: it takes no epsilon/delta"):
            make_oracle("ridge", **budget)
    assert not make_oracle("ridge").privacy.is_private


def test_a_privacy_spec_and_a_budget_are_not_both_accepted():
    from privbandit.privacy import PrivacySpec

    with pytest.raises(ValueError, match="not both"):
        make_oracle("ssp", privacy=PrivacySpec("jdp", 1.0, 1e-5), epsilon=2.0)


# -- Estimate inputs ---------------------------------------------------------------------------------

def _estimate() -> Estimate:
    return Estimate(np.array([0.5, -0.5, 0.0]), identity_link(), np.eye(3), 0.1)


@pytest.mark.parametrize("method", ["width", "mean", "bounds", "predictor"])
def test_estimate_refuses_nan_and_inf_features(method):
    x = np.full((4, 3), 0.2)
    x[2, 1] = np.nan
    with pytest.raises(ValueError, match="features must contain only finite values"):
        getattr(_estimate(), method)(x)
    x[2, 1] = np.inf
    with pytest.raises(ValueError, match="features must contain only finite values"):
        getattr(_estimate(), method)(x)


@pytest.mark.parametrize("method", ["width", "mean", "bounds", "predictor"])
@pytest.mark.parametrize("shape", [(4, 2), (3, 4), (2,), ()])
def test_estimate_refuses_the_wrong_dimension(method, shape):
    with pytest.raises(ValueError, match=r"features must have shape \(\.\.\., 3\) \(the estimate's dimension d\)"):
        getattr(_estimate(), method)(np.zeros(shape))


def test_estimate_accepts_any_leading_shape():
    est = _estimate()
    x = np.full((2, 5, 3), 0.2)
    assert est.width(x).shape == (2, 5) and est.mean(x[0, 0]).shape == ()
    np.testing.assert_allclose(est.width(x), 0.1 * np.linalg.norm(x, axis=-1))


# -- run with an env id ------------------------------------------------------------------------------

def test_run_accepts_an_env_id():
    kw = dict(dim=3, n_arms=4, family="spiky")
    by_id = run(make_agent("elim-nonprivate"), "PrivLinCB-v0", horizon=64, seed=3, env_kwargs=kw)
    by_env = run(make_agent("elim-nonprivate"), gym.make("PrivLinCB-v0", horizon=64, **kw), seed=3)
    assert by_id.equals(by_env) and by_id.horizon.iloc[0] == 64 and by_id.dim.iloc[0] == 3


def test_run_with_a_bad_env_id_or_stray_env_kwargs_says_so():
    with pytest.raises(ValueError, match="registered Gymnasium id.*'NoSuchEnv-v0'"):
        run(make_agent("uniform"), "NoSuchEnv-v0", horizon=8)
    with pytest.raises(ValueError, match="env_kwargs applies only when env is given by id"):
        run(make_agent("uniform"), gym.make("PrivLinCB-v0", horizon=8), env_kwargs={"dim": 3})


# -- ldp-1d and the horizon ----------------------------------------------------------------------------

def test_ldp_1d_takes_one_dimensional_x():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 500)
    y = np.clip(0.4 * x + 0.1 * rng.standard_normal(500), -1, 1)
    oracle = make_oracle("ldp-1d", epsilon=1.0)
    flat, column = oracle.fit(x, y, rng=1), oracle.fit(x[:, None], y, rng=1)
    np.testing.assert_array_equal(flat.theta, column.theta)
    fit = oracle.start(500, dim=1, rng=1)
    fit.add(x[:100], y[:100])
    fit.add(x[100], y[100])                   # one row: a scalar x and its reward
    fit.add(x[101:, None], y[101:])
    np.testing.assert_allclose(fit.result().theta, column.theta, rtol=1e-12)   # same draws, summed in pieces
    with pytest.raises(ValueError, match="one entry per feature row"):
        oracle.fit(x, y[:-1])


def test_updating_past_the_horizon_says_so():
    agent = make_agent("elim-nonprivate").reset(BanditSpec(n_arms=2, dim=2, horizon=3), rng=0)
    x = np.eye(2) * 0.5
    for _ in range(3):
        agent.update(x[agent.act(x)], 0.1)
    with pytest.raises(ValueError, match=r"horizon is T=3 .*reset\(spec, rng\)"):
        agent.update(x[0], 0.1)
    agent = make_agent("linucb").reset(BanditSpec(n_arms=2, dim=2, horizon=3), rng=0)
    with pytest.raises(ValueError, match=r"update got 4 rows at round 0 but the horizon is T=3"):
        agent.update(np.full((4, 2), 0.5), np.zeros(4))

