"""Agents are composed of public pieces: shallow classes, a learner (how fits become releases) and one law per
play rule, given values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privbandit.agents import (
    Agent,
    EliminationAgent,
    PolicyAgent,
    agent_is_private,
    agent_names,
    check_agent,
    make_agent,
)
from privbandit.agents.base import Learner
from privbandit.agents.elimination import GreedyPlay, PlayValues, law_choice, law_probabilities
from privbandit.agents.pooled import POOLED_JDP_GROWTH, POOLED_JDP_ORACLE, PooledReleases
from privbandit.sim import run, run_many

ENV = dict(n_arms=4, dim=3)


def depth(cls: type) -> int:
    """How many classes deep below Agent ``cls`` is (Agent's direct subclasses are 1 deep)."""
    return sum(1 for c in cls.__mro__ if issubclass(c, Agent) and c is not Agent)


def _made(name):
    return make_agent(name, epsilon=1.0) if agent_is_private(name) else make_agent(name)


@pytest.mark.parametrize("name", agent_names())
def test_no_registered_agent_is_more_than_three_classes_below_agent(name):
    cls = type(_made(name))
    assert depth(cls) <= 3, f"{name}: {[c.__name__ for c in cls.__mro__ if issubclass(c, Agent)]}"


ELIMINATION_AND_SQUARECB = [n for n in agent_names() if n.startswith(("elim-", "squarecb"))]


@pytest.mark.parametrize("name", ELIMINATION_AND_SQUARECB)
def test_every_elimination_and_squarecb_agent_is_built_on_the_tutorials_base(name):
    """The base the tutorial teaches (PolicyAgent: one law per round) is the one every built-in epoch agent uses."""
    agent = _made(name)
    assert isinstance(agent, PolicyAgent), f"{name}: {[c.__name__ for c in type(agent).__mro__]}"
    assert isinstance(agent, EliminationAgent) == name.startswith("elim-")


def test_the_elimination_policy_is_the_law_its_draws_follow():
    """EliminationAgent's policy (PolicyAgent.policy) is the play rule's law, which action_probabilities reports."""
    agent = make_agent("elim-nonprivate", play="greedy", first_epoch=4)
    run(agent, "PrivLinCB-v0", horizon=64, seed=0, env_kwargs=ENV)
    x = np.random.default_rng(1).uniform(-0.5, 0.5, (3, 4, 3))
    np.testing.assert_array_equal(agent.policy(x, agent.estimate), agent.action_probabilities(x))


def test_the_depth_counts_the_chain():
    class A(Agent):
        pass

    class B(A):
        pass

    assert depth(Agent) == 0 and depth(A) == 1 and depth(B) == 2


def test_the_pooled_agent_is_elimination_with_the_pooled_learner():
    """elim-jdp-pooled is EliminationAgent given PooledReleases (and its defaults): the same arms, the same ledger."""
    composed = EliminationAgent("iw-regression-dp", epsilon=1.0, oracle_kwargs=POOLED_JDP_ORACLE,
                                pooling=PooledReleases(), play="ucb", first_epoch=256, growth=POOLED_JDP_GROWTH)
    registered = make_agent("elim-jdp-pooled", epsilon=1.0)
    a = run(composed, "PrivLinCB-v0", horizon=2000, seed=3, env_kwargs=ENV)
    b = run(registered, "PrivLinCB-v0", horizon=2000, seed=3, env_kwargs=ENV)
    pd.testing.assert_frame_equal(a.drop(columns="agent"), b.drop(columns="agent"), check_exact=True)
    assert composed.ledger.releases == registered.ledger.releases and len(composed.ledger.releases) > 4


def test_agents_sharing_one_learner_keep_their_own_run_state():
    """The learner is configuration (frozen); its run state lives on each agent: two agents built with the same
    learner instance, played side by side, give what each gives alone."""
    learner = PooledReleases()
    agents = [make_agent("elim-jdp-pooled", epsilon=1.0, pooling=learner, first_epoch=16) for _ in range(2)]
    together = run_many(agents, "PrivLinCB-v0", 600, 1, env_kwargs=ENV)
    alone = run(make_agent("elim-jdp-pooled", epsilon=1.0, pooling=learner, first_epoch=16), "PrivLinCB-v0", 600,
                seed=1, env_kwargs=ENV)
    assert agents[0].learning is not agents[1].learning
    for table in together:
        np.testing.assert_array_equal(table["cum_regret"].to_numpy(), alone["cum_regret"].to_numpy())


def test_a_users_learner_is_composed_into_elimination_and_passes_the_contract():
    class LatestOnly(Learner):
        """Each epoch's own fit, planning on the latest release only."""

        def planned(self, estimates):
            return estimates[-1:]

    check_agent(lambda: EliminationAgent("iw-regression-dp", epsilon=1.0, pooling=LatestOnly(), first_epoch=8),
                horizon=128)
    agent = EliminationAgent("ridge", pooling=LatestOnly(), first_epoch=8)
    run(agent, "PrivLinCB-v0", horizon=200, seed=0, env_kwargs=ENV)
    assert len(agent.stacked_estimates()[0].basis) and len(agent.estimate.informative) <= 1
    assert "LatestOnly()" in repr(agent)


def test_a_law_is_drawn_as_it_is_reported():
    """law_choice on evenly spread uniforms hits each arm as often as law_probabilities says (to 1/N)."""
    rng = np.random.default_rng(0)
    m, k, n = 6, 5, 4000
    a, b = rng.random((m, k)) < 0.5, rng.random((m, k)) < 0.5
    a[:, 0] = b[:, -1] = True
    eps = rng.random(m)
    law = [(eps, lambda rows: a[rows]), (1.0 - eps, lambda rows: b[rows])]
    p = law_probabilities(law, m)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    u = (np.arange(n) + 0.5) / n
    for i in range(m):
        rows_law = [(np.full(n, eps[i]), lambda rows, i=i: a[np.full(rows.shape, i)]),
                    (np.full(n, 1.0 - eps[i]), lambda rows, i=i: b[np.full(rows.shape, i)])]
        freq = np.bincount(law_choice(rows_law, u), minlength=k) / n
        np.testing.assert_allclose(freq, p[i], atol=2.0 / n)


def test_greedy_play_reads_values_only():
    """GreedyPlay's law from PlayValues alone: nothing of the agent is handed to the rule."""
    agent = make_agent("elim-nonprivate", play="greedy", first_epoch=4)
    run(agent, "PrivLinCB-v0", horizon=64, seed=0, env_kwargs=ENV)
    x = np.random.default_rng(1).uniform(-0.5, 0.5, (3, 4, 3))
    values = agent.play_values(x.shape)
    assert isinstance(values, PlayValues) and values.t == agent.t
    np.testing.assert_array_equal(law_probabilities(GreedyPlay().law(values, x), 3), agent.action_probabilities(x))


@pytest.mark.parametrize("name", ["elim-ldp-greedy", "elim-jdp-pooled"])
def test_a_played_elimination_agent_pickles_with_its_policy(name):
    """What the policy plays on (PlayValues, greedy play's default exploration rate included) pickles with the agent,
    as joblib's workers and a user saving a run need."""
    import pickle

    agent = make_agent(name, epsilon=1.0, first_epoch=16)
    run(agent, "PrivLinCB-v0", horizon=200, seed=0, env_kwargs=ENV)
    x = np.random.default_rng(2).uniform(-0.5, 0.5, (5, 4, 3))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(agent)).action_probabilities(x),
                                  agent.action_probabilities(x))
