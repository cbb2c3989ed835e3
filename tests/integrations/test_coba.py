"""coba integration: a coba Experiment runs privbandit agents on privbandit envs beside coba's own learners,
and the privbandit learner plays inside coba exactly what ``run`` plays for the same seed."""

from __future__ import annotations

import importlib
import sys

import gymnasium as gym
import numpy as np
import pytest

from privbandit.agents import make_agent
from privbandit.sim import collect_feedback, run

coba = pytest.importorskip("coba", reason="coba is not installed (pip install 'privbandit[coba]')")
from privbandit.integrations.coba import CobaEnvironment, CobaLearner, _ArmRewards, pseudo_regret  # noqa: E402

T = 300


def make_env() -> gym.Env:
    return gym.make("PrivLinCB-v0", dim=3, n_arms=4, horizon=T)


def run_experiment(cenv: CobaEnvironment, learners: list) -> coba.Result:
    return coba.Experiment(cenv, learners).run(quiet=True, processes=1)


@pytest.mark.parametrize(("name", "kwargs"), [("squarecb-nonprivate", {}),
                                              ("elim-jdp", dict(epsilon=1.0, delta=1e-5))])
def test_a_coba_experiment_runs_a_privbandit_agent_beside_coba_learners(name, kwargs):
    env = make_env()
    cenv = CobaEnvironment(env, seed=5)
    ours = CobaLearner.for_environment(make_agent(name, **kwargs), cenv)
    result = run_experiment(cenv, [ours, coba.RandomLearner(), coba.LinUCBLearner(features=["a"])])
    rows = result.interactions.to_pandas()
    assert len(rows) == 3 * T                            # coba swallows learner errors: every row must be there
    assert rows["reward"].between(-1, 1).all()
    regret = pseudo_regret(result, cenv)
    assert set(regret["learner"]) == {f"privbandit:{name}", "Random", "LinUCB"}
    mine = regret[regret["learner"] == f"privbandit:{name}"]
    np.testing.assert_array_equal(mine["t"], np.arange(1, T + 1))
    # inside coba the agent plays the arms, rewards and propensities of the batch path for the same seed
    fb = collect_feedback(make_agent(name, **kwargs), env, seed=5)
    np.testing.assert_array_equal(mine["arm"], fb.action)
    np.testing.assert_allclose(mine["reward"], fb.reward, rtol=0, atol=5e-6)
    stored = rows[rows["learner_id"] == mine["learner_id"].iloc[0]]
    np.testing.assert_allclose(stored["probability"], fb.pscore, rtol=0, atol=5e-6)
    np.testing.assert_array_equal(mine["regret"], run(make_agent(name, **kwargs), env, seed=5, log="all")["regret"])
    learners = result.learners.to_pandas().set_index("family")
    assert learners.loc[f"privbandit:{name}", "epsilon"] == (kwargs.get("epsilon", float("inf")))
    # coba's learners get a pseudo-regret too; playing at random costs regret linear in T
    random = regret[regret["learner"] == "Random"]
    assert len(random) == T and random["cum_regret"].iloc[-1] > 0.02 * T


@pytest.mark.filterwarnings("ignore::privbandit.privacy.clipping.ClippingWarning")   # coba's rewards exceed [-1, 1]
def test_the_learner_builds_its_spec_from_a_coba_environment_with_contexts():
    envs = coba.Environments.from_linear_synthetic(120, n_actions=3, n_context_features=2, n_action_features=0)
    ours = CobaLearner(make_agent("squarecb-nonprivate"), horizon=120, bound=2.0, seed=1)
    result = coba.Experiment(envs, [ours, coba.RandomLearner()]).run(quiet=True, processes=1)
    rows = result.interactions.to_pandas()
    assert len(rows) == 2 * 120 and rows["reward"].between(-2, 2).all()
    # one task, so coba used the learner itself (no copy): its agent played every interaction with
    # phi(x, a_i) = e_i (x) x, K = 3 actions, d = 3 * 2
    assert (ours.agent.spec.n_arms, ours.agent.spec.dim, ours.agent.t) == (3, 6, 120)
    assert rows[rows["learner_id"] == 0]["probability"].between(0, 1).all()


def test_the_environment_is_re_iterable_and_serves_the_runs_rounds():
    env = make_env()
    cenv = CobaEnvironment(env, seed=2, max_chunk=7)
    first, again = list(cenv.read()), list(cenv.read())
    assert len(first) == T and [i["actions"] for i in first] == [i["actions"] for i in again]
    features, expected = cenv.rounds()
    assert features.shape == (T, 4, 3) and expected.shape == (T, 4)
    np.testing.assert_array_equal(np.array([i["actions"] for i in first]), features)
    assert cenv.params == {"env": "PrivLinCB-v0", "family": "heavy-tailed", "n_arms": 4, "dim": 3, "horizon": T,
                           "seed": 2}


def test_rewards_are_served_by_arm_even_for_identical_rows():
    actions = [tuple([0.5, 0.0]), tuple([0.5, 0.0])]  # noqa: C409 - equal rows, distinct objects (no folding)
    assert actions[0] is not actions[1]
    rewards = _ArmRewards(actions, [1.0, -1.0])
    assert (rewards(actions[0]), rewards(actions[1])) == (1.0, -1.0)
    assert rewards([0.5, 0.0]) == 1.0                     # by value when coba passes a copy


def test_pseudo_regret_rejects_a_result_from_another_environment():
    env = make_env()
    cenv = CobaEnvironment(env, seed=5)
    result = run_experiment(cenv, [coba.RandomLearner()])
    with pytest.raises(ValueError, match="none of that round's arms"):
        pseudo_regret(result, CobaEnvironment(env, seed=6), environment_id=0)
    with pytest.raises(ValueError, match="pass environment_id"):
        pseudo_regret(result, CobaEnvironment(env, seed=6))


def test_learner_errors_name_the_problem():
    with pytest.raises(TypeError, match="agent must be a privbandit Agent"):
        CobaLearner(object(), horizon=10)
    with pytest.raises(ValueError, match="feature_map"):
        CobaLearner(make_agent("uniform"), horizon=10, feature_map="shared")
    actions = [(0.1, 0.0), (0.0, 0.1)]
    with pytest.raises(RuntimeError, match="without a predict"):
        CobaLearner(make_agent("uniform"), horizon=2).learn(None, actions[0], 1.0, 0.5)
    with pytest.raises(ValueError, match="pass horizon="):
        CobaLearner(make_agent("uniform")).predict(None, actions)
    learner = CobaLearner(make_agent("uniform"), horizon=2)
    learner.predict(None, actions)
    with pytest.raises(ValueError, match=r"learn got the action \(0\.2, 0\.0\), which is none of"):
        learner.learn(None, (0.2, 0.0), 1.0, 0.5)
    twins = [tuple([0.5]), tuple([0.5])]              # equal actions, distinct objects, given different rows
    learner = CobaLearner(make_agent("uniform"), horizon=2, feature_map=lambda context, actions: np.eye(2))
    learner.predict(None, twins)
    with pytest.raises(ValueError, match="several of the interaction's 2 actions"):
        learner.learn(None, tuple([0.5]), 1.0, 0.5)
    with pytest.raises(ValueError, match="dense context"):
        CobaLearner(make_agent("uniform"), horizon=2, feature_map="disjoint").predict({"a": 1.0}, actions)


def logged_linear_synthetic() -> coba.Environments:
    """coba's logged data: a random logging policy on a linear synthetic problem (5 actions, 5 context features)."""
    return coba.Environments.from_linear_synthetic(500, n_actions=5, n_context_features=5, n_action_features=0,
                                                   seed=1).logged(coba.RandomLearner())


def recording(agent):
    """``agent`` with every row given to ``update`` appended to ``agent.rows``."""
    agent.rows, update = [], agent.update

    def record(chosen_features, rewards):
        agent.rows.append(np.array(chosen_features, dtype=float))
        update(chosen_features, rewards)

    agent.update = record
    return agent


@pytest.mark.filterwarnings("ignore::privbandit.privacy.clipping.ClippingWarning")   # coba's rewards exceed [-1, 1]
def test_off_policy_learning_feeds_the_agent_the_logged_actions_rows():
    envs = logged_linear_synthetic()
    logged = list(envs[0].read())
    ours = CobaLearner(recording(make_agent("linucb")), horizon=500, seed=0)
    result = coba.Experiment(envs, [ours], coba.SequentialCB(learn="off")).run(quiet=True, processes=1)
    rows = result.interactions.to_pandas()
    assert len(rows) == 500
    # the row of the logged action: phi(x, a_i) = e_i (x) x with i the logged action's index
    expected = [np.kron(np.eye(5)[i["actions"].index(i["action"])], i["context"]) for i in logged]
    np.testing.assert_array_equal(np.array(ours.agent.rows), np.array(expected))
    # ... which is mostly not the arm the agent played (the test could not tell them apart otherwise)
    played = [actions.index(tuple(a)) for actions, a in zip((i["actions"] for i in logged), rows["action"])]
    assert sum(p != i["actions"].index(i["action"]) for p, i in zip(played, logged)) > 300


@pytest.mark.filterwarnings("ignore::privbandit.privacy.clipping.ClippingWarning")
def test_linucb_learning_from_logged_data_beats_random_play():
    result = coba.Experiment(logged_linear_synthetic(), [CobaLearner(make_agent("linucb"), horizon=500, seed=0),
                                                         coba.RandomLearner()],
                             coba.SequentialCB(learn="off")).run(quiet=True, processes=1)
    mean = result.interactions.to_pandas().groupby("learner_id")["reward"].mean()
    # measured: linucb 0.628, random 0.496 (0.483 when learn updated with the predicted arm's row)
    assert mean[0] > mean[1] + 0.08


def test_the_learner_is_reusable_across_experiments():
    env = make_env()
    cenv = CobaEnvironment(env, seed=5)
    learner = CobaLearner.for_environment(make_agent("squarecb-nonprivate"), cenv)
    first = run_experiment(cenv, [learner]).interactions.to_pandas()
    again = run_experiment(cenv, [learner]).interactions.to_pandas()      # the learner itself, a second time
    twice = [cenv, CobaEnvironment(make_env(), seed=5)]              # two tasks: coba evaluates copies
    both = coba.Experiment(twice, [learner]).run(quiet=True, processes=1).interactions.to_pandas()
    assert len(first) == len(again) == T and len(both) == 2 * T
    for rows in (again, both[both["environment_id"] == 0], both[both["environment_id"] == 1]):
        np.testing.assert_array_equal(np.array(list(rows["action"])), np.array(list(first["action"])))


def test_pseudo_regret_follows_the_rounds_through_shuffle_and_take():
    env = make_env()
    cenv = CobaEnvironment(env, seed=5)
    shuffled = coba.Environments([cenv]).shuffle(3).take(50)
    result = coba.Experiment(shuffled, [coba.RandomLearner()]).run(quiet=True, processes=1)
    regret = pseudo_regret(result, cenv)
    assert len(regret) == 50 and list(regret["index"]) == list(range(1, 51))
    assert len(set(regret["t"])) == 50 and list(regret["t"]) != list(range(1, 51))   # the rounds were shuffled
    features, expected = cenv.rounds()
    stored = np.array(list(result.interactions.to_pandas()["action"]))
    np.testing.assert_allclose(features[regret["t"] - 1, regret["arm"]], stored, atol=5e-6)
    gap = expected.max(axis=1) - expected[np.arange(T), :].T
    np.testing.assert_array_equal(regret["regret"], gap[regret["arm"], regret["t"] - 1])
    np.testing.assert_allclose(regret["cum_regret"], np.cumsum(regret["regret"]))


def test_without_coba_the_import_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "coba", None)
    monkeypatch.delitem(sys.modules, "privbandit.integrations.coba")
    with pytest.raises(ImportError, match=r"privbandit\[coba\]"):
        importlib.import_module("privbandit.integrations.coba")
