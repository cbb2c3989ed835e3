"""ldp-glm-sgd, Han et al. (2021)'s LDP-SGD: arguments, the step loop and the batch path, the privacy calibration,
the ledger, learning, and the audit with its under-noised twin."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
from conftest import RecordedRandomizers

import privbandit  # noqa: F401  (registers the envs)
from privbandit.agents import BanditSpec, LDPGLMSGDAgent, check_agent, make_agent
from privbandit.agents.audit import audit_agent
from privbandit.agents.checks import check_step_loop_equals_batch_path, synthetic_stream
from privbandit.agents.ldp_glm import GLMGradientStatistic
from privbandit.links import identity_link, logistic_link
from privbandit.privacy import GaussianMechanism, L2BallChannel
from privbandit.privacy.calibration import analytic_noise_multiplier, gaussian_sigma
from privbandit.privacy.randomizers import padded
from privbandit.sim import run

EPS, DELTA = 1.0, 1e-5
SPEC = BanditSpec(n_arms=4, dim=3, horizon=64, bound=1.0, link=logistic_link(2.0))


def gradient_noise_sd(epsilon, delta, bound=1.0):
    """The Gaussian channel's per-coordinate noise sd: z(epsilon, delta) 2 R with R = 2 B (1 + 1e-9), ~ 4 z B."""
    return gaussian_sigma(epsilon, delta, 2.0 * padded(2.0 * bound))


@pytest.mark.parametrize(("kwargs", "words"), [
    (dict(epsilon=0.0), "epsilon"), (dict(epsilon=1.0, delta=1.0), "delta"), (dict(epsilon=1.0, eta=0.0), "eta"),
    (dict(epsilon=1.0, lam=-0.1), "lam"), (dict(epsilon=1.0, norm_bound=0.0), "norm_bound"),
    (dict(epsilon=1.0, batch_size=0), "batch_size"), (dict(epsilon=1.0, channel="laplace"), "channel"),
])
def test_bad_arguments_are_refused_naming_the_argument(kwargs, words):
    with pytest.raises(ValueError, match=words):
        make_agent("ldp-glm-sgd", **kwargs)


def test_a_budget_is_required_and_the_claim_is_local():
    with pytest.raises((TypeError, ValueError), match="epsilon"):
        make_agent("ldp-glm-sgd")
    assert make_agent("ldp-glm-sgd", epsilon=0.5, delta=1e-6).privacy.model == "ldp"


@pytest.mark.slow
@pytest.mark.parametrize("kwargs", [{}, dict(batch_size=5, channel="l2-ball", norm_bound=None)])
def test_the_agent_keeps_the_contract(kwargs):
    check_agent(lambda: make_agent("ldp-glm-sgd", epsilon=EPS, **kwargs), horizon=128)


@pytest.mark.parametrize("batch_size", [1, 4])
def test_step_loop_and_batch_path_end_at_the_same_iterate(batch_size):
    """The same rows and seed, fed one at a time or one batch at a time: the same iterate (to rounding) and the
    same releases; the stated batch fixes the policy for exactly batch_size rounds."""
    feats, rewards = synthetic_stream(SPEC.n_arms, SPEC.dim, SPEC.horizon, rng=1)
    check_step_loop_equals_batch_path(lambda: LDPGLMSGDAgent(batch_size=batch_size), stream=(feats, rewards),
                                      spec=SPEC)
    step = LDPGLMSGDAgent(batch_size=batch_size).reset(SPEC, rng=3)
    batch = LDPGLMSGDAgent(batch_size=batch_size).reset(SPEC, rng=3)
    arms = np.zeros(SPEC.horizon, dtype=np.int64)
    for t in range(SPEC.horizon):
        arms[t] = step.act(feats[t])
        step.update(feats[t, arms[t]], rewards[t, arms[t]])
    t = 0
    while t < SPEC.horizon:
        m = batch.rounds_until_update()
        assert m == min(batch_size, SPEC.horizon - t)
        batch.act_batch(feats[t:t + m])
        rows = np.arange(t, t + m)
        batch.update(feats[rows, arms[rows]], rewards[rows, arms[rows]])
        t += m
    np.testing.assert_allclose(batch.theta_, step.theta_, rtol=1e-12, atol=1e-14)
    assert batch.ledger.releases == step.ledger.releases


def test_the_gradient_statistic_is_bounded_by_the_stated_radius():
    """||phi (clip(nu(<phi, theta>)) - y)|| <= 2 B on the input domain, for any iterate (the identity link's
    prediction is clipped to [-1, 1])."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((500, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = rng.choice([-1.0, 1.0], 500)
    for link in (logistic_link(6.0), identity_link()):
        g = GLMGradientStatistic(rng.standard_normal(3) * 50, link)(x, y)
        assert np.linalg.norm(g, axis=1).max() <= 2.0 + 1e-12
    agent = LDPGLMSGDAgent(epsilon=EPS).reset(SPEC, rng=0)
    assert agent.randomizer.radius == pytest.approx(2.0 * SPEC.bound, rel=1e-8)


def test_the_noise_sd_is_the_stated_formula():
    """sigma = z(epsilon, delta) * 2 R, R = 2 B (1 + 1e-9), on every batch's randomizer; B scales it."""
    for bound in (1.0, 2.5):
        spec = BanditSpec(n_arms=3, dim=2, horizon=16, bound=bound, link=logistic_link(2.0))
        agent = LDPGLMSGDAgent(epsilon=EPS, delta=DELTA, batch_size=4).reset(spec, rng=0)
        formula = analytic_noise_multiplier(EPS, DELTA) * 4.0 * bound
        assert agent.randomizer.channel.sigma == pytest.approx(formula, rel=1e-8)
        assert agent.randomizer.channel.sigma == gradient_noise_sd(EPS, DELTA, bound)
        assert agent.randomizer.channel.sensitivity >= 2 * agent.randomizer.radius
        x = np.full((4, 2), bound / np.sqrt(2.0))
        agent.update(x, np.ones(4))
        assert agent.randomizer.channel.sigma == pytest.approx(formula, rel=1e-8)      # a new batch, same noise


def measured_noise_sd(hook=None, n: int = 20_000) -> float:
    """The sd of what the agent releases on n users of one fixed record (one batch), about its unnoised statistic:
    its randomizer, given ``hook`` through the agent's ``mechanism`` seam, recorded there."""
    seen = RecordedRandomizers()
    agent = LDPGLMSGDAgent(epsilon=EPS, delta=DELTA, batch_size=n,
                           mechanism=seen if hook is None else lambda r: seen(hook(r)))
    agent.reset(dataclasses.replace(SPEC, horizon=n), rng=0)
    x, y = np.tile([0.6, 0.0, 0.8], (n, 1)), np.ones(n)
    agent.update(x, y)
    return float(np.std(seen.returned(0) - seen.randomizers[0].statistic(x, y)))


class UnderNoised(GaussianMechanism):
    """The planted bug: a thousandth of the noise behind the ledger's back (the entry is the honest one)."""

    def release(self, values, rng=None):
        return GaussianMechanism(self.sensitivity, self.sigma / 1000).release(values, rng)


def under_noised(randomizer):
    """The twin's ``mechanism`` hook: each batch's randomizer on an :class:`UnderNoised` channel."""
    channel = randomizer.channel
    return dataclasses.replace(randomizer, channel=UnderNoised(channel.sensitivity, channel.sigma))


def make_under_noised_twin(*, epsilon, delta=1e-5, **kwargs):
    """ldp-glm-sgd whose channel releases a thousandth of its noise (planted through its public ``mechanism`` seam;
    its ledger says the honest sigma), as a factory for
    ``privbandit audit --agent tests.test_ldp_glm:make_under_noised_twin``."""
    return LDPGLMSGDAgent(epsilon=epsilon, delta=delta, mechanism=under_noised, **kwargs)


def test_the_released_noise_matches_the_formula_and_a_planted_smaller_noise_fails():
    formula = gradient_noise_sd(EPS, DELTA, SPEC.bound)
    assert measured_noise_sd() == pytest.approx(formula, rel=0.02)
    honest = LDPGLMSGDAgent(epsilon=EPS, delta=DELTA).reset(SPEC, rng=0)
    twin = make_under_noised_twin(epsilon=EPS, delta=DELTA).reset(SPEC, rng=0)
    for agent in (honest, twin):
        agent.update(np.array([0.6, 0.0, 0.8]), 1.0)
    assert twin.ledger.releases[0].entry == honest.ledger.releases[0].entry      # it claims the formula ...
    assert measured_noise_sd(under_noised) < 0.3 * formula                         # ... and releases less


def test_every_user_is_released_once_in_the_ledger():
    env = gym.make("PrivGLMCB-v0", family="heavy-tailed", dim=3, n_arms=3, horizon=50)
    for kwargs, entry in ((dict(batch_size=7), GaussianMechanism), (dict(channel="l2-ball"), L2BallChannel)):
        agent = make_agent("ldp-glm-sgd", epsilon=EPS, delta=DELTA, **kwargs)
        run(agent, env, seed=0)
        assert {r.kind for r in agent.ledger.releases} == {"local"}
        covered = np.zeros(50, dtype=int)
        for r in agent.ledger.releases:
            covered[r.start:r.stop] += 1
        assert (covered == 1).all()
        assert EPS * (1 - 1e-4) <= agent.ledger.guarantee(DELTA) <= EPS      # spent exactly, to the margins
        assert agent.ledger.releases[0].entry == agent.mechanism_.ledger_entry() and isinstance(agent.mechanism_, entry)


@pytest.mark.slow
def test_it_learns_at_a_large_epsilon():
    """Han et al.'s logistic setting (d = 2, K = 10, contexts and theta* uniform on the sphere, slope 1): at
    epsilon 50 the regret after 4096 rounds is under a fifth of uniform play's; at epsilon 0.05 it is not."""
    def regret(name, **kwargs):
        env = gym.make("PrivGLMCB-v0", family="isotropic", dim=2, n_arms=10, link="logistic",
                       link_kwargs={"scale": 1.0}, horizon=4096)
        return float(np.mean([run(make_agent(name, **kwargs), env, seed=s)["cum_regret"].iloc[-1] for s in (0, 1)]))

    uniform = regret("uniform")
    assert regret("ldp-glm-sgd", epsilon=50.0) < 0.2 * uniform
    assert regret("ldp-glm-sgd", epsilon=0.05) > 0.5 * uniform


@pytest.mark.slow
def test_the_audit_passes_the_agent_and_refutes_its_under_noised_twin():
    small = dict(max_horizon=32, n_draws=300, pilot_draws=16)
    honest = audit_agent("ldp-glm-sgd", EPS, **small)
    assert not honest.refuted and honest.ledger_ok
    twin = audit_agent(f"{__name__}:make_under_noised_twin", EPS, **small)
    assert twin.refuted and twin.refuted_empirically and not twin.refuted_by_contract
    assert twin.epsilon_lower > 2.0 and twin.ledger_ok           # the ledger alone misses it


def test_the_comparison_script_builds_their_setting_and_reports_their_units():
    """scripts/compare_han2021.py: contexts on the unit sphere in d = 2, K = 10, nu(z) = 2 sigmoid(z) - 1, and
    regrets halved to their {0, 1} rewards (uniform play's regret per round is about 0.2 in those units)."""
    from conftest import load_script

    script = load_script("compare_han2021")
    env = script.their_setting(64)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (10, 2) and np.allclose(np.linalg.norm(obs, axis=1), 1.0)
    z = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(env.unwrapped.bandit_spec().link(z), 2.0 / (1.0 + np.exp(-z)) - 1.0)
    regrets = script.final_regrets("uniform", {}, 1.0, 400, 2)
    assert regrets.shape == (2,) and 0.1 * 400 < regrets.mean() < 0.35 * 400
