"""privbandit.sim.run_many: several agents on the same rounds, drawn once, each table exactly run()'s."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from conftest import build_agent

import privbandit  # noqa: F401 - registers the envs
from privbandit.agents import UniformAgent, agent_names, make_agent
from privbandit.agents.base import Agent
from privbandit.privacy.ledger import PrivacyBudgetExceeded
from privbandit.sim import run, run_many

T = 160


def make_env(horizon: int = T, family: str = "heavy-tailed", **kw):
    return gym.make("PrivLinCB-v0", family=family, dim=3, n_arms=4, horizon=horizon, **kw)


def test_every_registered_agent_gets_its_own_run_on_shared_rounds():
    names = agent_names()
    tables = run_many([build_agent(n) for n in names], make_env(), T, seed=5, max_chunk=37)
    assert len(tables) == len(names)
    for name, table in zip(names, tables):
        alone = run(build_agent(name), make_env(), T, seed=5)
        pd.testing.assert_frame_equal(table, alone, check_exact=True, obj=name)


def test_tables_do_not_depend_on_the_company_or_the_order():
    names = ["elim-jdp", "linucb", "squarecb-ldp-sgd"]
    together = run_many([build_agent(n) for n in names], make_env(family="spiky"), T, seed=2)
    reverse = run_many([build_agent(n) for n in reversed(names)], make_env(family="spiky"), T, seed=2)
    for table, other in zip(together, reversed(reverse)):
        pd.testing.assert_frame_equal(table, other, check_exact=True)


def test_a_seed_sequence_gives_every_agent_the_same_draws_as_a_run_with_an_equal_one():
    ss = lambda: np.random.SeedSequence(99)                    # noqa: E731 - a fresh, equal SeedSequence
    a, b = run_many([build_agent("elim-glm-ldp"), build_agent("elim-glm-ldp")], make_env(), T, seed=ss())
    alone = run(build_agent("elim-glm-ldp"), make_env(), T, seed=ss())    # (it spawns from its Generator)
    pd.testing.assert_frame_equal(a, alone, check_exact=True)
    pd.testing.assert_frame_equal(b, alone, check_exact=True)


def test_labels_env_ids_and_timings():
    tables = run_many([UniformAgent(), make_agent("linucb")], "PrivLinCB-v0", 64, seed=1,
                      labels=[dict(agent="u"), None], env_kwargs=dict(n_arms=3, dim=2))
    assert list(tables[0]["agent"].unique()) == ["u"] and list(tables[1]["agent"].unique()) == ["linucb"]
    alone = run(make_agent("linucb"), "PrivLinCB-v0", 64, seed=1, env_kwargs=dict(n_arms=3, dim=2))
    pd.testing.assert_frame_equal(tables[1], alone, check_exact=True)
    for table in tables:
        assert table.attrs["agent_seconds"] > 0 and table.attrs["env_seconds"] > 0
    assert tables[0].attrs["env_seconds"] == tables[1].attrs["env_seconds"]


class _Scribbler(UniformAgent):
    """Writes into the features it is shown: on shared rounds that would change the other agents' rounds."""

    def act_batch(self, features):
        features[..., 0] = 0.0
        return super().act_batch(features)


def test_shared_rounds_are_read_only():
    with pytest.raises(ValueError, match="read-only"):
        run_many([_Scribbler(), UniformAgent()], make_env(), T, seed=0)


def test_every_ledger_is_checked():
    from conftest import LeakyUniform

    with pytest.raises(PrivacyBudgetExceeded):
        run_many([UniformAgent(), LeakyUniform()], make_env(), T, seed=0)


def test_bad_arguments():
    agent = UniformAgent()
    with pytest.raises(TypeError, match="agents must be a non-empty sequence of privbandit Agents, got object"):
        run_many([agent, object()], make_env(), T)
    with pytest.raises(TypeError, match="got an empty sequence"):
        run_many([], make_env(), T)
    with pytest.raises(ValueError, match="agents must be distinct"):
        run_many([agent, agent], make_env(), T)
    with pytest.raises(ValueError, match=r"labels must have one entry per agent \(2\), got 1"):
        run_many([agent, UniformAgent()], make_env(), T, labels=[None])
    with pytest.raises(ValueError, match="log"):
        run_many([agent], make_env(), T, log="linear")
    with pytest.raises(ValueError, match="max_chunk"):
        run_many([agent], make_env(), T, max_chunk=0)
    with pytest.raises(ValueError, match="horizon"):
        run_many([agent], make_env(), T + 1)
    with pytest.raises(ValueError, match="labels may only override"):
        run_many([agent], make_env(), T, labels=[dict(colour="red")])
    assert isinstance(run_many(agent, make_env(), 8)[0], pd.DataFrame) and isinstance(agent, Agent)
