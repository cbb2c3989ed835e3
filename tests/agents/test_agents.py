"""Every registered agent: step loop vs batch path (margin-aware), ledgers within budget, LDP data flow, learning."""

import contextlib
import math

import gymnasium as gym
import numpy as np
import pytest
from conftest import RecordedRandomizers, planted_twin

import privbandit  # noqa: F401  (registers the envs)
from privbandit.agents import BanditSpec, EliminationAgent, agent_is_private, agent_names, make_agent
from privbandit.agents.checks import check_step_loop_equals_batch_path, play_batch, synthetic_stream
from privbandit.agents.elimination import theory_confidence
from privbandit.agents.linucb import LDPUCBAgent, LinUCBAgent, SSLinUCBAgent
from privbandit.agents.simple import EpsilonGreedyAgent
from privbandit.oracles import Ridge, oracle_names
from privbandit.privacy import PrivacyBudgetExceeded, SymmetricGaussianMechanism
from privbandit.privacy.replay import ReleaseTape

# the private agents and their models, from the registry (a hand list would leave a new agent out silently)
MODELS = {n: make_agent(n, epsilon=1.0, delta=1e-5).privacy.model for n in agent_names() if agent_is_private(n)}
JDP = {n for n, model in MODELS.items() if model == "jdp"}
LDP = {n for n, model in MODELS.items() if model == "ldp"}
GLM = {"elim-glm-jdp", "elim-glm-ldp"}
LEARNERS = sorted(set(agent_names()) - {"uniform"})


def _make(name, epsilon=1.0, **kw):
    if name in JDP | LDP:
        kw = dict(epsilon=epsilon, delta=1e-5, **kw)
    return make_agent(name, **kw)       # an agent that fails to build fails its tests (never skipped)


def test_the_private_agents_come_from_the_registry_with_their_models():
    assert set(MODELS) == {n for n in agent_names() if agent_is_private(n)} and set(MODELS.values()) <= {"jdp", "ldp"}
    assert {"elim-jdp", "elim-ssp", "squarecb-dpsgd", "linucb-jdp"} <= JDP
    assert {"elim-ldp", "elim-ldp-ssp", "squarecb-ldp-sgd", "ldp-ucb"} <= LDP
    assert not JDP & LDP and "uniform" not in MODELS and "linucb" not in MODELS


def _env(name, horizon, family="isotropic", k=5, d=5, **kw):
    env_id = "PrivGLMCB-v0" if name in GLM else "PrivLinCB-v0"
    return gym.make(env_id, n_arms=k, dim=d, horizon=horizon, family=family, max_episode_steps=horizon, **kw)


def step_loop(agent, env, horizon, seed):
    """The plain Gymnasium loop: act on the observation, step, update with the chosen row."""
    obs, _ = env.reset(seed=seed)
    agent.reset(env.unwrapped.bandit_spec(), rng=seed)
    actions, regret = np.empty(horizon, np.int64), np.empty(horizon)
    for t in range(horizon):
        a = agent.act(obs)
        nxt, r, _, _, info = env.step(a)
        agent.update(obs[a], r)
        actions[t], regret[t] = a, info["regret"]
        obs = nxt
    return actions, regret


def batch_path(agent, env, horizon, seed):
    """The batch path: act_batch for as many rounds as the policy is fixed, one update per batch."""
    env.reset(seed=seed)
    agent.reset(env.unwrapped.bandit_spec(), rng=seed)
    actions, regret = np.empty(horizon, np.int64), np.empty(horizon)
    t = 0
    while t < horizon:
        n = min(agent.rounds_until_update(), horizon - t)
        batch = env.unwrapped.sample_batch(n)
        a = agent.act_batch(batch.features)
        rows = np.arange(n)
        agent.update(batch.features[rows, a], batch.rewards[rows, a])
        er = batch.expected_rewards
        actions[t:t + n], regret[t:t + n] = a, er.max(axis=1) - er[rows, a]
        t += n
    return actions, regret


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(agent_names()))
def test_step_loop_and_batch_path_agree_and_the_ledger_holds(name):
    """On the env's stream the step loop and the batch path choose the same arms but at rounding ties
    (margin-aware, README "Reproducibility"); the Gymnasium loop and the batch path each keep the ledger."""
    horizon = 150
    env = _env(name, horizon)
    env.reset(seed=3)
    rounds = env.unwrapped.sample_batch(horizon)
    check_step_loop_equals_batch_path(lambda: _make(name), rng=3, stream=(rounds.features, rounds.rewards),
                                      spec=env.unwrapped.bandit_spec())
    looped = _make(name)
    step_loop(looped, _env(name, horizon), horizon, seed=3)
    agent = _make(name)
    batch_path(agent, _env(name, horizon), horizon, seed=3)
    for played in (looped, agent):
        _assert_the_ledger_holds(name, played, horizon)


def _assert_the_ledger_holds(name, agent, horizon):
    spent = agent.ledger.check(agent.privacy)
    p = agent.privacy
    if name in JDP | LDP:
        assert p.model == ("jdp" if name in JDP else "ldp") and p.epsilon == 1.0 and p.delta == 1e-5
        assert 0 < spent <= 1.0 + 1e-9, "a private agent must have spent some, and at most all, of its budget"
        assert agent.ledger.n_records <= horizon
        kinds = {r.kind for r in agent.ledger.releases}
        assert kinds == ({"local"} if name in LDP else {"central"})
    else:
        assert not p.is_private and not agent.ledger.releases
    assert agent.rounds_until_update() == 0


@pytest.mark.parametrize("name", sorted(JDP | LDP))
def test_every_record_of_a_full_run_is_within_budget_at_small_epsilon(name):
    horizon = 255
    agent = _make(name, epsilon=0.3)
    batch_path(agent, _env(name, horizon), horizon, seed=0)
    assert agent.ledger.check(agent.privacy) <= 0.3 * (1 + 1e-9)
    for rec in (0, 1, 100, 254):
        assert agent.ledger.record_epsilon(rec, 1e-5) <= 0.3 * (1 + 1e-9)


def test_ledger_check_catches_overspending():
    agent = _make("linucb-jdp", epsilon=1.0)
    batch_path(agent, _env("linucb-jdp", 64), 64, seed=0)
    from privbandit.privacy import PrivacySpec
    with pytest.raises(PrivacyBudgetExceeded):
        agent.ledger.check(PrivacySpec("jdp", 0.5, 1e-5))


# --- local DP: raw rows never reach aggregation ------------------------------------------------------
@pytest.mark.parametrize("name", sorted(LDP))
def test_local_agents_hand_every_row_to_a_randomizer_and_act_on_its_outputs_only(name):
    """Every row reaches a randomizer the agent built (recorded through the public ``mechanism`` seam) once, and
    the agent's policy depends on the rows only through what the randomizers released: replaying one run's
    releases on other users leaves the final policy unchanged, bit for bit."""
    seen = RecordedRandomizers()
    agent = planted_twin(name, seen, epsilon=1.0, delta=1e-5)
    batch_path(agent, _env(name, 127), 127, seed=1)
    assert seen.randomizers
    assert sum(x.shape[0] for calls in seen.inputs for x, _ in calls) == 127
    assert sum(o.shape[0] for calls in seen.outputs for o in calls) == 127

    def final_policy(stream, tape=None):
        agent = _make(name)
        with ReleaseTape(replay=tape) as recorded:
            play_batch(agent, *stream, 1)
        return agent.action_probabilities(synthetic_stream(5, 5, 20, 9)[0]), recorded

    first, tape = final_policy(synthetic_stream(5, 5, 127, 1))
    second, _ = final_policy(synthetic_stream(5, 5, 127, 2), tape)
    np.testing.assert_array_equal(first, second)


# --- learning: every learner beats uniform random on an easy instance --------------------------------
class TwoArmFamily:
    """An easy instance: arm predictors fixed at +-0.72 (gap 1.44 with theta = (0.8, 0.6)) plus a noisy coordinate."""

    def sample(self, n, rng):
        x = np.empty((n, 2, 2))
        x[:, :, 0] = [0.9, -0.9]
        x[:, :, 1] = np.clip(0.4 * rng.standard_normal((n, 2)), -0.4, 0.4)
        return x


# Budgets at which each learner clearly learns within the test's horizon. Local SSP's and the IW-GLM
# oracles' widths shrink slowly at these sizes (local SSP like n^{-1/4}), so they need a large epsilon here;
# the agents suite (privbandit bench --suite agents) measures them at epsilon in {0.1, 0.3, 1}.
EASY_EPS = {"elim-glm-jdp": 30.0, "elim-glm-ldp": 30.0, "elim-ldp-ssp": 1000.0, "elim-ldp": 8.0,
            "elim-ldp-greedy": 8.0, "squarecb-ldp-sgd": 8.0, "ldp-ucb": 8.0}
PER_ROUND = {"linucb", "linucb-jdp", "ldp-ucb", "glm-ucb", "gloc"}


@pytest.mark.slow
@pytest.mark.parametrize("name", LEARNERS)
def test_learning_agents_beat_uniform_random(name):
    horizon = 2 ** 9 if name in PER_ROUND else 2 ** 15 if name in {"elim-ldp", "elim-glm-ldp"} else 2 ** 14

    def env():
        env_id = "PrivGLMCB-v0" if name in GLM else "PrivLinCB-v0"
        return gym.make(env_id, n_arms=2, dim=2, horizon=horizon, family=TwoArmFamily(), theta=[0.8, 0.6],
                        noise="gaussian", noise_scale=0.3, max_episode_steps=horizon)

    agent = _make(name, epsilon=EASY_EPS.get(name, 4.0))
    _, reg = batch_path(agent, env(), horizon, seed=11)
    _, base = batch_path(make_agent("uniform"), env(), horizon, seed=11)
    assert reg.sum() < 0.5 * base.sum(), f"{name}: regret {reg.sum():.1f} vs uniform {base.sum():.1f}"


# --- the baselines' internals ----------------------------------------------------------------------
def test_linucb_sherman_morrison_matches_the_direct_inverse():
    rng = np.random.default_rng(0)
    agent = LinUCBAgent(lam=0.5).reset(BanditSpec(3, 4, 50), rng=0)
    x = rng.standard_normal((20, 4)) * 0.2  # rows inside the bound B = 1 (agents clip rows above it)
    y = rng.uniform(-1, 1, 20)
    for i in range(10):
        agent.update(x[i], y[i])
    agent2 = LinUCBAgent(lam=0.5, batch_size=10).reset(BanditSpec(3, 4, 50), rng=0)
    agent2.update(x[:10], y[:10])
    v = 0.5 * np.eye(4) + x[:10].T @ x[:10]
    for a in (agent, agent2):
        np.testing.assert_allclose(a.v_inv, np.linalg.inv(v), atol=1e-10)
        np.testing.assert_allclose(a.theta_, np.linalg.solve(v, x[:10].T @ y[:10]), atol=1e-10)
        assert a.logdet == pytest.approx(np.linalg.slogdet(v / 0.5)[1])
        want_beta = math.sqrt(2 * math.log(1 / 0.05) + np.linalg.slogdet(v / 0.5)[1]) + math.sqrt(0.5)
        assert a.beta_ == pytest.approx(want_beta)
    phi = rng.standard_normal((7, 3, 4))
    s_one = np.concatenate([agent._scores(phi[i:i + 1]) for i in range(7)])
    np.testing.assert_allclose(s_one, agent._scores(phi), atol=1e-12)


def _exact_aug(x, y):
    v = np.concatenate([x, y[:, None]], axis=1)
    return v.T @ v


@pytest.mark.parametrize("chunks", [[1] * 37, [5, 3, 16, 1, 12], [37]])
def test_tree_aggregation_prefix_sums_are_exact_without_noise(chunks):
    rng = np.random.default_rng(1)
    horizon = 37
    noiseless = lambda m: SymmetricGaussianMechanism(m.sensitivity, 1e-300)  # noqa: E731  (through the seam)
    agent = SSLinUCBAgent(epsilon=1.0, delta=1e-5, batch_size=1, mechanism=noiseless).reset(BanditSpec(3, 2, horizon),
                                                                                            rng=0)
    x = rng.uniform(-0.5, 0.5, (horizon, 2))
    y = rng.uniform(-1, 1, horizon)
    t = 0
    for c in chunks:
        agent.batch_size = c               # refresh exactly at the end of each chunk
        agent.t = t
        agent._observe(x[t:t + c], y[t:t + c])
        t += c
        agent.t = t
        np.testing.assert_allclose(agent._noisy_sum(t), _exact_aug(x[:t], y[:t]), atol=1e-12)


@pytest.mark.parametrize("cls", [SSLinUCBAgent, LDPUCBAgent])
def test_noisy_gram_agents_bound_the_rows_their_mechanism_sees(cls):
    """Rows over the bound handed to ``update`` are clipped (features to B, rewards to [-1, 1], with a warning)
    before any noise: the mechanism's exact inputs and releases (recorded by a
    :class:`~privbandit.privacy.replay.ReleaseTape`) are those of the clipped rows, from the same draws, and the
    ledgers agree."""
    from privbandit.privacy import ClippingWarning
    from privbandit.privacy.clipping import clip_features, clip_rewards

    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (8, 3)) * np.array([[1.0], [3.0]] * 4)        # every other row has norm > B = 1
    y = rng.uniform(-2, 2, 8)
    with pytest.warns(ClippingWarning):
        xc, yc = clip_features(x, 1.0), clip_rewards(y)
    released = []
    for rows, warns in (((xc, yc), False), ((x, y), True)):
        with ReleaseTape() as tape:
            agent = cls(epsilon=1.0, delta=1e-5, batch_size=8).reset(BanditSpec(2, 3, 16), rng=5)
            with pytest.warns(ClippingWarning) if warns else contextlib.nullcontext():
                agent.update(*rows)
        released.append((tape, agent.ledger.summary()))
    (inside, ledger_in), (clipped, ledger_clipped) = released
    assert len(inside) == len(clipped) >= 1 and ledger_in == ledger_clipped
    for a, b in zip(inside.inputs + inside.outputs, clipped.inputs + clipped.outputs):
        np.testing.assert_array_equal(a, b)
    assert max(np.abs(v).max() for v in inside.inputs) > 0


def test_tree_aggregation_composes_to_exactly_epsilon():
    horizon = 2 ** 6 - 1                   # L = 6 levels; record 0 enters one node of every level
    agent = SSLinUCBAgent(epsilon=0.7, delta=1e-6).reset(BanditSpec(2, 2, horizon), rng=0)
    rng = np.random.default_rng(0)
    for _ in range(horizon):
        agent.update(rng.uniform(-0.5, 0.5, 2), rng.uniform(-1, 1))
    assert agent.levels == 6
    touched = [r for r in agent.ledger.releases if r.start <= 0 < r.stop]
    assert len(touched) == 6
    assert agent.ledger.record_epsilon(0, 1e-6) == pytest.approx(0.7, rel=1e-6)
    assert agent.ledger.check(agent.privacy) == pytest.approx(0.7, rel=1e-6)
    assert agent.mechanism_.sensitivity == pytest.approx(math.sqrt(2) * 2.0)   # sqrt(2) (B^2 + 1), B = 1


def test_ldp_ucb_randomizer_is_calibrated_on_the_joint_statistic():
    agent = LDPUCBAgent(epsilon=0.5, delta=1e-6).reset(BanditSpec(2, 3, 10, bound=2.0), rng=0)
    rnd = agent.randomizer
    assert rnd.radius == pytest.approx(2.0 ** 2 + 1, rel=1e-8)
    assert isinstance(rnd.channel, SymmetricGaussianMechanism)
    assert rnd.channel.epsilon(1e-6) == pytest.approx(0.5, rel=1e-6)
    out = rnd(np.ones((4, 3)) * 0.5, np.ones(4), np.random.default_rng(0))
    assert out.shape == (4, 4, 4)
    np.testing.assert_allclose(out, np.swapaxes(out, 1, 2))


def test_epsilon_greedy_probabilities_and_schedule():
    agent = EpsilonGreedyAgent(explore_scale=0.5).reset(BanditSpec(4, 2, 100), rng=0)
    phi = 0.3 * np.random.default_rng(0).standard_normal((5, 4, 2))  # norms <= B = 1 (rows above B are clipped)
    np.testing.assert_allclose(agent.action_probabilities(phi), 0.25)   # eps_0 = 1: uniform
    agent.update(np.array([[1.0, 0.0]]), [1.0])
    assert agent.explore_ == pytest.approx(0.5 * (2 / 1) ** (1 / 3))
    agent.update(np.array([[1.0, 0.0], [0.0, 1.0]]), [1.0, -1.0])
    assert agent.explore_ == pytest.approx(0.5 * (2 / 3) ** (1 / 3))
    p = agent.action_probabilities(phi)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    best = np.argmax(phi @ agent.theta_, axis=1)
    np.testing.assert_allclose(p[np.arange(5), best], 1 - agent.explore_ + agent.explore_ / 4)


def test_agent_arguments_are_validated():
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("no-such-agent")
    with pytest.raises(ValueError, match="non-private"):
        make_agent("elim-nonprivate", epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        make_agent("linucb-jdp", epsilon=-1.0)
    with pytest.raises(ValueError, match="apply only"):
        make_agent("elim-nonprivate", oracle=Ridge(), oracle_kwargs={"lam": 2.0})
    with pytest.raises(ValueError, match="batch_size"):
        LinUCBAgent(batch_size=0)
    with pytest.raises(ValueError, match="gamma_schedule"):
        make_agent("squarecb-nonprivate", gamma_schedule="nope")
    with pytest.raises(ValueError, match="explore_scale"):
        EpsilonGreedyAgent(explore_scale=2.0, schedule="constant")
    assert "ridge" in oracle_names()


@pytest.mark.parametrize("bound", [1.0, 2.0, 0.3, 7.0])
def test_ldp_ucb_rows_at_the_bound_pass_without_clipping(bound):
    """||phi|| = B up to rounding (x / ||x|| * B) and |y| = 1 must not trip the randomizer's projection."""
    agent = LDPUCBAgent(epsilon=1.0, delta=1e-6, batch_size=4000).reset(BanditSpec(2, 6, 4000, bound=bound), rng=0)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4000, 6)) * 10.0 ** rng.uniform(-3, 3, (4000, 1))
    x = x / np.linalg.norm(x, axis=1, keepdims=True) * bound
    y = rng.choice([-1.0, 1.0], size=4000)
    agent.update(x, y)                        # a ClippingWarning is an error under pytest
    rnd = agent.randomizer                    # the channel is calibrated to the padded radius it projects onto
    assert bound ** 2 + 1 < rnd.radius <= (bound ** 2 + 1) * (1 + 1e-8)
    assert rnd.channel.sensitivity == pytest.approx(2 * rnd.radius, rel=1e-12)
    assert rnd.channel.sensitivity >= 2 * rnd.radius


def test_theory_mode_elimination_has_the_proofs_per_epoch_confidence():
    assert theory_confidence(2 ** 10) == 2.0 ** -10 and theory_confidence(1) == 0.5
    spec = BanditSpec(n_arms=3, dim=2, horizon=100)
    theory = EliminationAgent(Ridge(constants="theory")).reset(spec, rng=0)
    practical = EliminationAgent(Ridge(confidence=0.2)).reset(spec, rng=0)
    rng = np.random.default_rng(0)
    seen = []
    for agent in (theory, practical):
        confidences = []
        while agent.t < spec.horizon:
            confidences.append(agent.fit.oracle.confidence)
            m = agent.rounds_until_update()
            agent.update(rng.uniform(-0.5, 0.5, (m, 2)), rng.uniform(-1, 1, m))
        seen.append(confidences)
    assert seen[0] == [0.01] * len(theory.epoch_ends)         # delta = 1/T in every epoch
    assert seen[1] == [0.2] * len(practical.epoch_ends)      # practical mode: the oracle's own
    assert theory.oracle.confidence == 0.05                   # the configuration itself is unchanged


@pytest.mark.parametrize("name", ["elim-ldp", "elim-ldp-ssp", "elim-jdp"])
def test_bad_rows_are_caught_at_the_agent_boundary_and_the_fit_sees_the_clipped_row(name):
    """The epoch fits skip the row checks (add_clipped), so update must still refuse
    NaN and wrong shapes, clip a row above B and a reward outside [-1, 1] with one ClippingWarning each, and
    hand a local statistic exactly the clipped row."""
    import warnings

    seen = RecordedRandomizers()       # the rows the fit hands its local randomizers, through the oracle's seam
    agent = planted_twin(name, seen, epsilon=1.0, delta=1e-5).reset(BanditSpec(3, 4, 64, bound=1.0), rng=0)
    with pytest.raises(ValueError):
        agent.update(np.array([np.nan, 0.0, 0.0, 0.0]), 0.5)
    with pytest.raises(ValueError):
        agent.update(np.zeros(5), 0.5)
    assert agent.t == 0
    row = np.array([3.0, 4.0, 0.0, 0.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent.update(row, 2.5)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2 and all(w.category.__name__ == "ClippingWarning" for w in caught), messages
    assert agent.t == 1
    if name != "elim-jdp":
        (x, y), = (row for calls in seen.inputs for row in calls)
        np.testing.assert_allclose(x, [[0.6, 0.8, 0.0, 0.0]], rtol=1e-15)
        np.testing.assert_array_equal(y, [1.0])
