"""Agents and oracles by name: a private one requires its budget, a non-private one refuses it."""

from __future__ import annotations

import pytest

import privbandit  # noqa: F401  (registers the envs)
from privbandit.agents import agent_is_private, agent_names, make_agent
from privbandit.oracles import make_oracle, oracle_class, oracle_names

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
