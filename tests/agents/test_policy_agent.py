"""PolicyAgent: a user's epoch agent in one method, its arms drawn from the law it returns; the runner's Protocol."""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
import pytest

from privbandit.agents import PolicyAgent, check_agent, clone, uniform_choice
from privbandit.bandit_spec import BanditSpec
from privbandit.constraints import Interval
from privbandit.oracles import ContractError
from privbandit.privacy import PrivacyLedger, PrivacySpec
from privbandit.protocols import AgentProtocol, FitProtocol
from privbandit.sim import run

ENV = dict(family="rare-direction", dim=3, n_arms=3)


class Greedy(PolicyAgent):
    """Greedy on the latest IW-Regression-DP estimate, exploring uniformly with probability ``explore``."""

    default_oracle = "iw-regression-dp"
    explore = 0.1
    parameter_constraints = {"explore": [Interval(numbers.Real, 0.0, 1.0, closed="both")]}

    def policy(self, features, estimate):
        m, k = features.shape[:2]
        p = np.full((m, k), self.explore / k)
        p[np.arange(m), np.argmax(estimate.mean(features), axis=1)] += 1.0 - self.explore
        return p


class Pooled(Greedy):
    """Greedy on the mean of every release's theta (a second hyperparameter without a default)."""

    parameter_constraints = {"weight": [Interval(numbers.Real, 0.0, None, closed="neither")]}

    def combine(self, estimates):
        return np.mean([e.theta for e in estimates], axis=0) * self.weight if estimates else None

    def policy(self, features, theta):
        return np.eye(features.shape[1])[np.argmax(features @ theta, axis=1)]


def test_a_policy_agent_passes_the_contract_and_declares_its_hyperparameters():
    check_agent(lambda: Greedy(epsilon=1.0))
    check_agent(lambda: Pooled(epsilon=1.0, weight=2.0, first_epoch=4))
    agent = Greedy(epsilon=1.0, explore=0.25)
    assert agent.explore == 0.25 and agent.privacy == PrivacySpec("jdp", 1.0, 1e-5)
    assert list(agent.get_params()) == ["oracle", "first_epoch", "growth", "explore"]
    assert repr(clone(agent, explore=0.5)).endswith("explore=0.5)")
    with pytest.raises(ValueError, match=r"explore must be in \[0.0, 1.0\], got 1.5"):
        Greedy(epsilon=1.0, explore=1.5)
    with pytest.raises(TypeError, match=r"got unknown keyword argument\(s\) \['explor'\]; its hyperparameters are "
                                        r"\['explore'\]"):
        Greedy(epsilon=1.0, explor=0.5)
    with pytest.raises(TypeError, match="Pooled needs the keyword argument 'weight'"):
        Pooled(epsilon=1.0)
    assert list(Pooled.parameter_constraints)[-2:] == ["explore", "weight"]      # merged with the parents'


def test_the_arms_are_drawn_from_the_law_the_policy_returns():
    spec = BanditSpec(n_arms=4, dim=3, horizon=64)
    agent = Greedy(epsilon=1.0, explore=0.3, first_epoch=8).reset(spec, rng=7)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 4, 3)) / 3.0
    assert np.array_equal(agent.action_probabilities(x), np.full((8, 4), 0.25))   # nothing released: uniform
    agent.update(x[np.arange(8), agent.act_batch(x)], rng.uniform(-1, 1, 8))
    assert agent.estimate is agent.estimates[-1]
    probs = agent.action_probabilities(x)
    assert np.allclose(probs.max(axis=1), 0.7 + 0.3 / 4) and np.allclose(probs.sum(axis=1), 1.0)
    before = agent.action_rng_state
    uniforms_rng = np.random.default_rng(0)               # the agent's generator, copied through its state
    uniforms_rng.bit_generator.state = before
    uniforms = uniforms_rng.random((8, 1))
    assert np.array_equal(agent.act_batch(x), uniform_choice(probs, uniforms[:, 0]))


def test_a_policy_that_returns_no_law_is_refused_with_its_name():
    class Bad(Greedy):
        def policy(self, features, estimate):
            return np.ones(features.shape[:2])

    spec = BanditSpec(n_arms=3, dim=3, horizon=8)
    agent = Bad(epsilon=1.0).reset(spec, rng=0)
    x = np.full((1, 3, 3), 0.1)
    agent.update(x[0, agent.act(x[0])], 0.5)
    with pytest.raises(ValueError, match="Bad.policy must return non-negative probabilities whose rows sum to 1"):
        agent.act(x[0])


def test_a_policy_that_reads_the_unreleased_fit_is_caught():
    class Peeking(Greedy):
        def policy(self, features, estimate):
            seen = np.full(features.shape[:2], float(self.fit.n_seen % 2))   # the current epoch's rows
            seen[:, 0] += 1.0
            return seen / seen.sum(axis=1, keepdims=True)

    with pytest.raises(ContractError):
        check_agent(lambda: Peeking(epsilon=1.0))


class Plain:
    """A uniform agent that inherits nothing: only the methods of AgentProtocol."""

    name = "plain"
    privacy = PrivacySpec.none()
    ledger = PrivacyLedger()

    def reset(self, spec, rng=None):
        self.spec, self.t, self.rng, self.ledger = spec, 0, np.random.default_rng(rng), PrivacyLedger()
        return self

    def rounds_until_update(self):
        return self.spec.horizon - self.t

    def act_batch(self, features):
        return np.minimum((self.rng.random(features.shape[0]) * features.shape[1]).astype(np.int64),
                          features.shape[1] - 1)

    def act(self, features):
        return int(self.act_batch(features[None])[0])

    def action_probabilities(self, features):
        return np.full(features.shape[:-1], 1.0 / features.shape[-2])

    def update(self, chosen_features, rewards):
        self.t += np.atleast_1d(rewards).shape[0]


def test_the_runner_needs_only_the_protocol():
    assert isinstance(Plain(), AgentProtocol) and isinstance(Greedy(epsilon=1.0), AgentProtocol)
    assert not isinstance(object(), AgentProtocol)
    table = run(Plain(), "PrivLinCB-v0", 32, seed=1, env_kwargs=ENV)
    assert table["agent"].unique().tolist() == ["plain"] and table["t"].iloc[-1] == 32
    pd.testing.assert_frame_equal(table, run(Plain(), "PrivLinCB-v0", 32, seed=1, env_kwargs=ENV))
    fit = Greedy(epsilon=1.0).oracle.start(4, dim=2)
    assert isinstance(fit, FitProtocol)
