"""Elimination's play rules among the survivors (spanner, UCB, greedy), epoch schedules and ridge pooling.

The privacy rules of the practical agents are tested here: a play rule reads only the estimates released
at epoch ends, the current context and the agent's own uniforms (perturbing the current epoch's unreleased
fit state changes no action of that epoch; a planted rule that reads it is caught), and schedules and
exploration rates are public (two runs with different rewards share them).
"""

import copy

import gymnasium as gym
import numpy as np
import pytest

import privbandit  # noqa: F401  (registers the envs)
from privbandit.agents import (
    BanditSpec,
    EliminationAgent,
    agent_descriptions,
    barycentric_spanner,
    epoch_schedule,
    make_agent,
)
from privbandit.agents.base import doubling_schedule
from privbandit.agents.elimination import cube_root_exploration, surviving_actions
from privbandit.links import identity_link, logistic_link
from privbandit.oracles import Estimate, Ridge

PLAYS = ("spanner", "ucb", "greedy")


def _env(horizon, d=3, k=5, family="isotropic", seed=0):
    env = gym.make("PrivLinCB-v0", n_arms=k, dim=d, horizon=horizon, family=family, max_episode_steps=horizon)
    env.reset(seed=seed)
    return env


def _train(agent, horizon, rounds, d=3, k=5, seed=0):
    """Reset ``agent`` and play ``rounds`` rounds of a ``horizon``-round env through the batch path."""
    env = _env(horizon, d, k, seed=seed)
    agent.reset(env.unwrapped.bandit_spec(), rng=seed)
    while agent.t < rounds:
        n = min(agent.rounds_until_update(), rounds - agent.t)
        b = env.unwrapped.sample_batch(n)
        a = agent.act_batch(b.features)
        agent.update(b.features[np.arange(n), a], b.rewards[np.arange(n), a])
    return agent, env


# --- epoch schedules --------------------------------------------------------------------------------
def test_default_schedule_is_the_paper_doubling_and_options_are_geometric():
    for h in (1, 2, 3, 4, 7, 8, 100, 1023, 1024, 5000):
        want, j = [], 0
        while 2 ** (j + 1) - 1 < h:
            want.append(2 ** (j + 1) - 1)
            j += 1
        np.testing.assert_array_equal(doubling_schedule(h), want + [h])
        np.testing.assert_array_equal(epoch_schedule(h), want + [h])
    np.testing.assert_array_equal(epoch_schedule(100, first_epoch=10, growth=1.5), [10, 25, 47, 81, 100])
    np.testing.assert_array_equal(epoch_schedule(60, first_epoch=8, growth=2.0), [8, 24, 56, 60])
    np.testing.assert_array_equal(epoch_schedule(5, first_epoch=50), [5])
    small = epoch_schedule(1000, growth=1.0001)          # lengths grow by at least one round: always ends
    assert small[-1] == 1000 and np.all(np.diff(np.diff(np.concatenate([[0], small]))[:-1]) >= 1)
    agent = make_agent("elim-nonprivate", first_epoch=8, growth=3.0).reset(BanditSpec(2, 2, 500), rng=0)
    np.testing.assert_array_equal(agent.epoch_ends, [8, 32, 104, 320, 500])


@pytest.mark.parametrize("kwargs, match", [
    ({"first_epoch": 0}, "first_epoch"), ({"first_epoch": 2.5}, "first_epoch"), ({"growth": 1.0}, "growth"),
    ({"growth": 0.5}, "growth"), ({"growth": float("nan")}, "growth"), ({"growth": float("inf")}, "growth"),
    ({"play": "thompson"}, "play"), ({"pooling": "iw"}, "pooling"),
    ({"exploration": lambda t: 0 * t}, "play='greedy'"), ({"play": "greedy", "exploration": 0.1}, "exploration"),
])
def test_bad_options_raise_naming_the_argument(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make_agent("elim-nonprivate", **kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        EliminationAgent("ridge", **kwargs)


def test_exploration_rates_must_be_rates():
    agent, env = _train(make_agent("elim-nonprivate", play="greedy", exploration=lambda t: 2.0 + 0 * t), 64, 1)
    with pytest.raises(ValueError, match="exploration"):
        agent.act(env.unwrapped.sample_batch(1).features[0])
    rate = cube_root_exploration(10)
    np.testing.assert_allclose(rate(np.array([1, 10, 80, 640])), [1.0, 1.0, 0.5, 0.25])


# --- pooling ------------------------------------------------------------------------------------------
def test_ridge_pooling_releases_ridge_on_all_past_rows():
    horizon = 200
    env = _env(horizon)
    agent = make_agent("elim-ucb").reset(env.unwrapped.bandit_spec(), rng=1)
    xs, ys = [], []
    while agent.t < horizon:
        n = agent.rounds_until_update()
        b = env.unwrapped.sample_batch(n)
        a = agent.act_batch(b.features)
        xs.append(b.features[np.arange(n), a])
        ys.append(b.rewards[np.arange(n), a])
        agent.update(xs[-1], ys[-1])
        want = Ridge().fit(np.concatenate(xs), np.concatenate(ys))
        got = agent.estimates[-1]
        np.testing.assert_allclose(got.theta, want.theta, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got.width_matrix, want.width_matrix, rtol=1e-10, atol=1e-12)
        assert got.width_scale == want.width_scale and got.info["n"] == agent.t
    assert len(agent.estimates) == len(agent.epoch_ends) > 5 and not agent.ledger.releases


@pytest.mark.parametrize("oracle", ["iw-regression-dp", "ssp", "iw-regression-ldp"])
def test_private_oracles_never_pool(oracle):
    with pytest.raises(ValueError, match="private oracles never pool"):
        EliminationAgent(oracle, epsilon=1.0, delta=1e-5, pooling="ridge")
    with pytest.raises(ValueError, match="never pool"):
        make_agent("elim-jdp", epsilon=1.0, delta=1e-5, pooling="ridge")


# --- the registered practical agents ----------------------------------------------------------------
def test_practical_agents_are_registered_with_their_play_rule_and_paper_label():
    desc = agent_descriptions()
    assert "UCB play" in desc["elim-ucb"] and "alg:batch-cb-meta" in desc["elim-ucb"]
    assert "alg:batch-cb-JDP with UCB play" in desc["elim-jdp-ucb"]
    assert "greedy play" in desc["elim-ldp-greedy"] and "appdx:regret-upper-LDP" in desc["elim-ldp-greedy"]
    ucb, jdp, ldp = (make_agent("elim-ucb"), make_agent("elim-jdp-ucb", epsilon=1.0, delta=1e-5),
                     make_agent("elim-ldp-greedy", epsilon=1.0, delta=1e-5))
    assert (ucb.play, ucb.pooling, ucb.privacy.model) == ("ucb", "ridge", "none")
    assert (jdp.play, jdp.oracle.name, jdp.privacy.model) == ("ucb", "iw-regression-dp", "jdp")
    assert (ldp.play, ldp.oracle.name, ldp.privacy.model) == ("greedy", "iw-regression-ldp", "ldp")
    greedy = make_agent("elim-jdp", epsilon=1.0, delta=1e-5, play="greedy")
    assert greedy.play == "greedy" and greedy.name == "elim-jdp"
    assert make_agent("elim-jdp-ucb", epsilon=1.0, delta=1e-5, first_epoch=1).first_epoch == 1
    assert make_agent("elim-jdp", epsilon=1.0, delta=1e-5).play == "spanner"   # the paper's default


# --- exact action probabilities -------------------------------------------------------------------
@pytest.mark.parametrize("play", PLAYS)
def test_action_probabilities_are_exact_for_every_rule(play):
    kw = {"exploration": lambda t: np.full(t.shape, 0.3)} if play == "greedy" else {}
    agent, env = _train(make_agent("elim-nonprivate", play=play, **kw), 2 ** 12, 1500, d=3, k=6, seed=2)
    x = env.unwrapped.sample_batch(40).features
    x[:, 5] = x[:, 2]                        # a duplicated arm: exact ties, broken by the uniforms
    p = agent.action_probabilities(x)
    alive = surviving_actions(agent.estimate.informative, x, width_cap=agent.width_cap)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(p[~alive] == 0) and (~alive).any(), "the instance must eliminate something"
    assert np.all(p >= 0)
    n = 20_000
    rng = np.random.default_rng(3)
    for i in range(4):
        u = rng.random((n, 1))
        a = agent._choose(np.repeat(x[i:i + 1], n, axis=0), u)   # the code act/act_batch run, many uniforms
        freq = np.bincount(a, minlength=6) / n
        assert np.all(np.abs(freq - p[i]) <= 4 * np.sqrt(p[i] * (1 - p[i]) / n) + 1e-9), (play, i, freq, p[i])
    np.testing.assert_array_equal(p[3], agent.action_probabilities(x[3]))
    if play != "spanner":
        assert (np.count_nonzero(p, axis=1) >= 2).any(), "the test needs a non-degenerate distribution"


def test_greedy_explores_with_the_default_public_rate():
    agent, env = _train(make_agent("elim-nonprivate", play="greedy"), 2 ** 12, 1000, d=3, k=6, seed=2)
    x = env.unwrapped.sample_batch(1).features[0]
    p = agent.action_probabilities(x)
    span = agent.play_values(x[None].shape).spanner_of(
        x[None], surviving_actions(agent.estimates, x[None], width_cap=2.0))[0]
    eps = (3 / (agent.t + 1)) ** (1 / 3)
    best = int(np.argmax(p))
    assert p[best] == pytest.approx(1 - eps + eps * span[best] / span.sum())
    np.testing.assert_allclose(np.delete(p, best), np.delete(eps * span / span.sum(), best))


# --- the vectorised planner against the definitions ---------------------------------------------
def _pick(members, u):
    """The floor(u n)-th of the n True entries of ``members`` (the agents' uniform pick)."""
    idx = np.flatnonzero(members)
    return idx[min(int(u * idx.size), idx.size - 1)]


def _reference_play(estimates, x, u, play, eps, cap=2.0):
    """Actions and probabilities of the play rules, written from their definitions: one context at a time,
    one estimate at a time through the public Estimate API, every estimate tested (skipping those that
    cannot eliminate changes nothing), an empty test skipped, UCB's score over every estimate."""
    m, k, _ = x.shape
    acts, probs, replayed, score_by_uninformative = np.empty(m, np.int64), np.zeros((m, k)), 0, 0
    for i in range(m):
        alive, upper, skipped = np.ones(k, bool), np.full(k, np.inf), False
        for est in estimates:
            upper_before_last = upper
            f, b = est.mean(x[i]), np.minimum(est.width(x[i]), cap)
            kept = alive & (f + b >= np.max(f - b) - 1e-12)
            skipped |= not kept.any()
            alive = kept if kept.any() else alive
            upper = np.minimum(upper, f + b)
        replayed += skipped
        last = estimates[-1].mean(x[i]) + np.minimum(estimates[-1].width(x[i]), cap)
        score_by_uninformative += np.any(alive & (last < upper_before_last))
        span = barycentric_spanner(x[i][None], alive[None])[0]
        if play == "spanner":
            acts[i], probs[i] = _pick(span, u[i]), span / span.sum()
            continue
        score = upper if play == "ucb" else estimates[-1].mean(x[i])
        best = alive & (score >= np.max(score[alive]) - 1e-12)
        if play == "ucb":
            acts[i], probs[i] = _pick(best, u[i]), best / best.sum()
        else:
            acts[i] = _pick(span, u[i] / eps) if u[i] < eps else _pick(best, (u[i] - eps) / (1 - eps))
            probs[i] = eps * span / span.sum() + (1 - eps) * best / best.sum()
    return acts, probs, replayed, score_by_uninformative


@pytest.mark.parametrize("link", [identity_link(), logistic_link()], ids=["identity", "logistic"])
@pytest.mark.parametrize("play", PLAYS)
def test_vectorised_planner_matches_the_definitions(play, link):
    """The stacked, vectorised planner (all epochs' tests in one pass, replay of contexts the tests empty,
    one product for UCB's bounds) picks the arms the rules' definitions pick, with the same probabilities."""
    rng = np.random.default_rng(11)
    m, k, d, eps = 600, 6, 3, 0.3
    x = rng.standard_normal((m, k, d))
    x *= rng.uniform(0.2, 1.0, (m, k, 1)) / np.linalg.norm(x, axis=2, keepdims=True)      # inside ||phi|| <= 1
    ests = [Estimate(rng.standard_normal(d) * 0.6, link, rng.standard_normal((d, d)), s) for s in (0.4, 0.15, 0.08)]
    ests.append(Estimate(np.full(d, 0.01), link, np.eye(d), 0.05))     # cannot eliminate, often the lowest bound
    agent = EliminationAgent("ridge", play=play, **({"exploration": lambda t: np.full(np.shape(t), eps)}
                                                    if play == "greedy" else {}))
    agent.reset(BanditSpec(k, d, 10 * m), rng=0)
    agent.estimates.extend(ests)            # the releases, as the epochs' ends append them
    agent.estimate = agent.combine(agent.estimates)
    assert len(agent.estimate.informative) == 3, "the last estimate cannot eliminate: it must be skipped, not dropped"
    u = rng.random(m)
    want, want_p, replayed, low = _reference_play(ests, x, u, play, eps)
    np.testing.assert_array_equal(agent._choose(x, u[:, None]), want)
    np.testing.assert_allclose(agent.action_probabilities(x), want_p, rtol=0, atol=1e-12)
    assert replayed > 5, "inconsistent intervals must empty some test here, or the replay is untested"
    assert low > 5, "the estimate that cannot eliminate must set some UCB score, or skipping it is untested"


# --- privacy: play reads only released estimates, schedules are public ------------------------------
class PlantedLeak(EliminationAgent):
    """A planted bug: plays the argmax of the in-progress (unreleased) ridge fit of the current epoch."""

    def _choose(self, features, uniforms):
        theta = np.linalg.solve(self.fit.gram + np.eye(self.fit.dim), self.fit.xty)
        return np.argmax(features @ theta, axis=1)


def _perturb(fit, rng):
    """Add arbitrary rows to an unfinished fit and overwrite its numeric buffers."""
    room = fit.n_rounds - fit.n_seen
    if room:
        m = min(room, 3)
        fit.add(rng.uniform(-0.5, 0.5, (m, fit.dim)), rng.uniform(-1, 1, m))
    for v in vars(fit).values():
        if isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.flags.writeable and v.size:
            v[...] = rng.uniform(-5, 5, v.shape)


def unreleased_state_changes_no_action(agent, horizon=600, seed=0):
    """Whether every action equals that of a twin whose unreleased fit state was perturbed mid-epoch.

    At the start and in the middle of every epoch the agent is cloned (same uniforms to come), the clone's
    current fit (and pooled fit) is perturbed, and both act on the same contexts.
    """
    env = _env(horizon, seed=seed)
    agent.reset(env.unwrapped.bandit_spec(), rng=seed)
    rng = np.random.default_rng(seed + 1)
    while agent.t < horizon:
        n = agent.rounds_until_update()
        b = env.unwrapped.sample_batch(n)
        for lo, hi in ((0, n // 2), (n // 2, n)):
            if hi == lo:
                continue
            twin = copy.deepcopy(agent)
            _perturb(twin.fit, rng)
            if getattr(twin, "_pool", None) is not None:
                _perturb(twin._pool, rng)
            a = agent.act_batch(b.features[lo:hi])
            if not np.array_equal(a, twin.act_batch(b.features[lo:hi])):
                return False
            rows = np.arange(lo, hi)
            agent.update(b.features[rows, a], b.rewards[rows, a])
    return True


PRACTICAL = [("elim-nonprivate", {"play": p}) for p in PLAYS] + [
    ("elim-ucb", {}), ("elim-jdp-ucb", {"epsilon": 1.0, "delta": 1e-5, "first_epoch": 4}),
    ("elim-ldp-greedy", {"epsilon": 1.0, "delta": 1e-5}),
    ("elim-jdp", {"epsilon": 1.0, "delta": 1e-5, "play": "greedy"}),
]


@pytest.mark.parametrize("name, kwargs", PRACTICAL, ids=[f"{n}-{k.get('play', '')}" for n, k in PRACTICAL])
def test_play_reads_only_released_estimates(name, kwargs):
    agent = make_agent(name, **kwargs)
    assert unreleased_state_changes_no_action(agent)
    assert len(agent.estimates) >= 5, "several releases must have been acted on"


def test_a_planted_rule_reading_the_unreleased_fit_is_caught():
    assert not unreleased_state_changes_no_action(PlantedLeak("ridge"))


def _step_run(agent, feats, rewards, seed):
    """The step loop on fixed contexts and reward vectors: actions, rounds_until_update and eps_t per round."""
    horizon, k, d = feats.shape
    agent.reset(BanditSpec(k, d, horizon), rng=seed)
    acts, left, rates = np.empty(horizon, np.int64), np.empty(horizon, np.int64), np.full(horizon, np.nan)
    for t in range(horizon):
        left[t] = agent.rounds_until_update()
        if getattr(agent, "play", None) == "greedy":
            rates[t] = agent.play_values((1, k, d)).exploration_rates(1)[0]
        acts[t] = agent.act(feats[t])
        agent.update(feats[t, acts[t]], rewards[t, acts[t]])
    return acts, left, rates


@pytest.mark.slow
@pytest.mark.parametrize("name, kwargs", PRACTICAL + [("planted", {})],
                         ids=[f"{n}-{k.get('play', '')}" for n, k in PRACTICAL] + ["planted"])
def test_schedules_and_rates_are_public(name, kwargs):
    """Two runs whose rewards differ: the same schedule, and the same actions until the first release."""
    rng = np.random.default_rng(5)
    horizon, k, d = 300, 5, 3
    feats = rng.uniform(-1, 1, (horizon, k, d)) / np.sqrt(d)
    r1, r2 = rng.uniform(-1, 1, (horizon, k)), rng.uniform(-1, 1, (horizon, k))
    kwargs = dict(kwargs, first_epoch=20)
    make = (lambda: PlantedLeak("ridge", first_epoch=20)) if name == "planted" else (lambda: make_agent(name, **kwargs))
    a1, left1, rates1 = _step_run(make(), feats, r1, seed=7)
    a2, left2, rates2 = _step_run(make(), feats, r2, seed=7)
    np.testing.assert_array_equal(left1, left2)
    same = np.array_equal(a1[:20], a2[:20])
    assert same == (name != "planted"), "nothing is released in the first epoch: its actions cannot depend on rewards"
    np.testing.assert_array_equal(rates1, rates2)
    if make().play == "greedy":      # eps_t is the public rate of round t, whatever the data
        t = np.arange(1, horizon + 1)
        np.testing.assert_allclose(rates1, np.minimum(1.0, (d / t) ** (1 / 3)), rtol=1e-15)


@pytest.mark.parametrize("play", PLAYS)
@pytest.mark.parametrize("k, d, spanner", [(12, 4, True), (6, 6, True), (5, 3, False)])
def test_the_one_context_path_acts_as_the_batch_path_while_arms_are_eliminated(play, k, d, spanner):
    """act (the planner on one context) and act_batch choose the same arms, round by round, on runs where
    elimination removes arms, K > d needs the spanner's swaps and greedy play explores and exploits."""
    horizon = 1500
    env = _env(horizon, d, k, seed=4)
    b = env.unwrapped.sample_batch(horizon)
    loop = EliminationAgent(Ridge(), play=play, spanner=spanner).reset(env.unwrapped.bandit_spec(), rng=9)
    batch = EliminationAgent(Ridge(), play=play, spanner=spanner).reset(env.unwrapped.bandit_spec(), rng=9)
    arms, sizes = np.empty(horizon, np.int64), []
    for t in range(horizon):
        sizes.append(int(loop.play_values((1, k, d)).survivors(b.features[t][None]).sum()))
        arms[t] = loop.act(b.features[t])
        loop.update(b.features[t, arms[t]], b.rewards[t, arms[t]])
    t = 0
    while t < horizon:
        m = batch.rounds_until_update()
        a = batch.act_batch(b.features[t:t + m])
        np.testing.assert_array_equal(a, arms[t:t + m], err_msg=f"rounds {t}..{t + m}")
        batch.update(b.features[np.arange(t, t + m), a], b.rewards[np.arange(t, t + m), a])
        t += m
    assert min(sizes) < k, "elimination must have removed arms"


def test_a_play_rule_is_an_object_and_a_name_stands_for_a_built_in_one():
    import pandas as pd

    from privbandit.agents.elimination import PLAY_RULE_CLASSES, GreedyPlay, UCBPlay
    from privbandit.sim import run

    env = dict(family="rare-direction", dim=3, n_arms=4)
    for name, cls in PLAY_RULE_CLASSES.items():
        by_name = make_agent("elim-jdp", epsilon=1.0, play=name, first_epoch=8)
        by_object = make_agent("elim-jdp", epsilon=1.0, play=cls(), first_epoch=8)
        assert type(by_name.play_rule) is cls and by_object.play_rule == cls()
        pd.testing.assert_frame_equal(run(by_name, "PrivLinCB-v0", 200, seed=4, env_kwargs=env),
                                      run(by_object, "PrivLinCB-v0", 200, seed=4, env_kwargs=env), check_exact=True)
    assert make_agent("elim-jdp", epsilon=1.0, play=GreedyPlay(), exploration=lambda t: 0.0 * t).play == GreedyPlay()
    with pytest.raises(ValueError, match="exploration is greedy play's rate"):
        make_agent("elim-jdp", epsilon=1.0, play=UCBPlay(), exploration=lambda t: 0.0 * t)
    with pytest.raises(ValueError, match="play must be one of"):
        make_agent("elim-jdp", epsilon=1.0, play=object())


def test_a_users_play_rule_passes_the_contract():
    from privbandit.agents import check_agent
    from privbandit.agents.elimination import PlayRule

    class LowestSurvivor(PlayRule):
        """The first survivor (the lowest index), deterministically."""

        def law(self, values, features):
            alive = values.survivors(features)
            first = np.arange(alive.shape[1]) == np.argmax(alive, axis=1)[:, None]
            return [(1.0, lambda rows: first[rows])]

    check_agent(lambda: make_agent("elim-jdp", epsilon=1.0, play=LowestSurvivor(), first_epoch=4))
    agent = make_agent("elim-jdp", epsilon=1.0, play=LowestSurvivor())
    assert repr(agent).endswith("play=LowestSurvivor())")

    class Broken(LowestSurvivor):       # weights that do not sum to 1: the policy's check refuses the law
        def law(self, values, features):
            return [(0.5, lambda rows: values.survivors(features[rows]))]

    with pytest.raises(ValueError, match="policy must return non-negative probabilities whose rows sum to 1"):
        check_agent(lambda: make_agent("elim-jdp", epsilon=1.0, play=Broken(), first_epoch=4))
