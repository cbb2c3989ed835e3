"""IW-Vector-LDP (one L2-ball report of (psi, svec H) per user) and the pooled agent on it, elim-ldp-vec."""

from __future__ import annotations

import math

import numpy as np
import pytest
from agent_helpers import DIM, EPS, PLANT, audit_user, released_values_only, under_noised
from agent_helpers import pooled_data as _data
from conftest import RecordedRandomizers, planted_twin

from privbandit.agents import check_agent, make_agent
from privbandit.agents.checks import check_ledger_within_budget, play_batch, synthetic_stream
from privbandit.agents.pooled import PooledReleases, PooledStatistics
from privbandit.linalg import psd_sqrt
from privbandit.oracles import make_oracle
from privbandit.oracles.iw_vec_ldp import VectorIWStatistic, VectorLDPRelease, svec, svec_size, unsvec
from privbandit.privacy import L2BallChannel, l2_ball_channel_magnitude


def _fit(x, y, rng=7, **kwargs):
    fit = make_oracle("iw-vector-ldp", epsilon=1.0, delta=1e-5, **kwargs).start(x.shape[0], dim=x.shape[1], rng=rng)
    fit.add(x, y)
    return fit


def _spd(d, seed, spread=10.0):
    """A symmetric positive definite matrix, symmetric to the last bit whatever BLAS kernel made the product."""
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    a = (q * np.geomspace(1.0 / spread, spread, d)) @ q.T
    return (a + a.T) / 2.0


# -- the statistic and its bound ---------------------------------------------------------------------------------

def test_svec_is_an_isometry_and_unsvec_inverts_it():
    a = np.random.default_rng(0).standard_normal((4, 4))
    a = a + a.T
    v = svec(a)
    assert v.shape == (svec_size(4),) == (10,)
    assert np.linalg.norm(v) == pytest.approx(np.linalg.norm(a), rel=1e-14)
    np.testing.assert_allclose(unsvec(v, 4), a, rtol=0, atol=1e-14)


@pytest.mark.parametrize("u_seed", [None, 1, 2])
def test_the_statistic_is_psi_and_the_scaled_gram_with_norm_at_most_sqrt_one_plus_b(u_seed):
    d, bound = 4, 0.5
    u = np.eye(d) if u_seed is None else _spd(d, u_seed)
    stat = VectorIWStatistic(u, psd_sqrt(u), 1.0 / math.sqrt(bound))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((400, d))
    x *= bound * rng.uniform(0, 1, (400, 1)) ** 0.2 / np.linalg.norm(x, axis=1, keepdims=True)
    x[0] = 0.0
    y = rng.choice([-1.0, 0.0, 1.0, 0.3], 400)
    s = stat(x, y)
    assert s.shape == (400, d + svec_size(d))
    assert np.all(np.linalg.norm(s, axis=1) <= math.sqrt(1.0 + bound) * (1 + 1e-12))
    assert np.all(s[0] == 0.0)                                  # defined (0) at phi = 0
    i = 5
    ux = u @ x[i]
    np.testing.assert_allclose(s[i, :d], ux * y[i] / np.linalg.norm(ux), rtol=1e-12)
    vx = psd_sqrt(u) @ x[i]
    np.testing.assert_allclose(unsvec(s[i, d:], d) * math.sqrt(bound), np.outer(vx, vx) / np.linalg.norm(ux),
                               rtol=1e-10, atol=1e-14)


# -- the oracle's randomizer, ledger and release ----------------------------------------------------------------

def test_every_user_is_randomized_once_by_the_pure_epsilon_l2_ball_channel():
    x, y = _data()
    seen = RecordedRandomizers()
    fit = _fit(x, y, mechanism=seen)
    (r,) = seen.randomizers
    assert isinstance(r.channel, L2BallChannel)
    assert r.channel.dim == 4 + svec_size(4) and r.channel.epsilon == 1.0
    assert r.radius == pytest.approx(math.sqrt(2.0), rel=1e-8) and r.channel.radius >= r.radius
    fit.result()
    summary = fit.ledger.summary()
    assert [(e["start"], e["stop"], e["mechanism"], e["kind"]) for e in summary] == [(0, 600, "l2-ball", "local")]
    assert fit.ledger.guarantee(1e-5) == pytest.approx(1.0)


def test_the_release_is_the_servers_means_and_the_channels_bound_on_the_noise():
    x, y = _data()
    d, size = 4, 4 + svec_size(4)
    seen = RecordedRandomizers()
    rel = _fit(x, y, mechanism=seen).result().release
    mean = seen.returned().mean(axis=0)
    assert isinstance(rel, VectorLDPRelease) and rel.n == 600
    np.testing.assert_allclose(rel.psi, mean[:d], rtol=1e-12)
    np.testing.assert_allclose(rel.gram, unsvec(mean[d:], d), rtol=1e-12)          # B = 1: c = 1
    m = l2_ball_channel_magnitude(1.0, size, math.sqrt(2.0) * (1 + 1e-9))
    assert rel.noise_sd_psi == pytest.approx(m / math.sqrt(size * 600), rel=1e-12)
    assert rel.noise_sd_gram == pytest.approx(rel.noise_sd_psi, rel=1e-12)
    assert np.array_equal(rel.weighting, np.eye(d)) and not np.array_equal(rel.u_next, np.eye(d))


def test_the_pooled_psi_and_gram_are_unbiased_for_their_statistics():
    """Many users: the released means sit within 4 noise sds of the means of the unnoised statistics."""
    rng = np.random.default_rng(5)
    n, d = 40_000, 3
    x = rng.uniform(-1, 1, (n, d)) / math.sqrt(d)
    y = np.clip(x @ [0.6, -0.8, 0.0] + 0.2 * rng.standard_normal(n), -1, 1)
    u = _spd(d, 4, spread=3.0)
    rel = _fit(x, y, rng=11, initial_u=u).result().release
    s = VectorIWStatistic(u, psd_sqrt(u), 1.0)(x, y).mean(axis=0)
    assert np.all(np.abs(rel.psi - s[:d]) <= 4 * rel.noise_sd_psi)
    assert np.all(np.abs(svec(rel.gram) - s[d:]) <= 4 * rel.noise_sd_gram)
    assert np.array_equal(rel.weighting, u)


def test_pooling_a_vector_release_maps_it_to_original_coordinates_with_its_noise_bound():
    u = np.diag([4.0, 0.25])
    gram = np.diag([2.0, -0.5])          # H_hat: U^{1/2} A U^{1/2}, with a negative (noise) eigenvalue
    rel = VectorLDPRelease(weighting=u, u_next=u, psi=np.array([1.0, 2.0]), gram=gram, n=100, lam=0.1,
                           noise_sd_psi=0.01, noise_sd_gram=0.02, bound=1.0)
    stats = PooledStatistics.zeros(2)
    stats.add(rel, 2.0)
    np.testing.assert_allclose(stats.gram, 100 * np.diag([0.5, 0.0]), atol=1e-12)      # U^{-1/2} psd(H) U^{-1/2}
    np.testing.assert_allclose(stats.shift, 100 * np.diag([0.0, 2.0]), atol=1e-12)
    np.testing.assert_allclose(stats.xty, 100 * np.array([0.25, 8.0]), rtol=1e-12)
    np.testing.assert_allclose(stats.reg, 100 * 0.1 * np.diag([0.25, 4.0]), rtol=1e-12)
    np.testing.assert_allclose(stats.sampling, 100 * np.diag([1 / 16, 16.0]), rtol=1e-12)
    noise = 100 ** 2 * (0.01 ** 2 * np.diag([1 / 16, 16.0]) + 4.0 * 0.02 ** 2 * 4.0 * np.diag([0.25, 4.0]))
    np.testing.assert_allclose(stats.noise, noise, rtol=1e-12)
    assert stats.n == 100


# -- 1. the per-user audit and its planted under-noised twin ------------------------------------------------------

def _agents_randomizers(name="elim-ldp-vec", horizon=96, first_epoch=32):
    """The randomizers agent ``name`` builds on a stream (one per epoch; the later ones warm-started), seen through
    its oracle's ``mechanism`` seam."""
    built = []
    agent = planted_twin(name, lambda r: built.append(r) or r, epsilon=EPS, delta=1e-5,
                         first_epoch=first_epoch)
    x, r = synthetic_stream(DIM, 3, horizon, 0)
    play_batch(agent, x, r, 0)
    return built


@pytest.mark.parametrize("name", ["elim-ldp-vec", "elim-glm-ldp-vec"])
def test_each_users_view_passes_the_audit_and_the_under_noised_twin_is_refuted(name):
    rands = _agents_randomizers(name)
    assert len(rands) >= 2 and not np.array_equal(rands[-1].statistic.u, np.eye(DIM))     # warm-started
    assert all(r.statistic.radius == 0.5 and r.radius == pytest.approx(math.sqrt(1.5), rel=1e-8) for r in rands)
    for k, r in enumerate([rands[0], rands[-1]]):
        res, eps_lower, reach = audit_user(r, seed=300 + k)
        assert reach > 0.5                      # the pair is far apart in the channel's ball
        assert not res.violates(1e-5) and eps_lower <= EPS
        twin = under_noised(r, PLANT)
        assert twin.channel.magnitude < r.channel.magnitude and twin.ledger_entry() != r.ledger_entry()
        bug, bug_eps, _ = audit_user(r, seed=400 + k, divide=PLANT)
        assert bug.violates(1e-5) and bug_eps > 2 * EPS


# -- the agent ---------------------------------------------------------------------------------------------------

def vec(**kwargs):
    return make_agent("elim-ldp-vec", epsilon=1.0, delta=1e-5, **{"first_epoch": 16, **kwargs})


def test_elim_ldp_vec_keeps_the_agent_contract():
    check_agent(vec(), horizon=256)


def test_elim_ldp_vec_spends_exactly_epsilon_once_per_user():
    check_ledger_within_budget(vec(), horizon=300)
    x, r = synthetic_stream(4, 3, 300, 0)
    agent = vec()
    play_batch(agent, x, r, 0)
    spent = [agent.ledger.record_epsilon(u, 1e-5) for u in range(300)]
    assert np.allclose(spent, 1.0, rtol=1e-9)
    assert {(e["mechanism"], e["kind"]) for e in agent.ledger.summary()} == {("l2-ball", "local")}


def test_each_epoch_uses_the_u_the_previous_release_stepped_to():
    x, r = synthetic_stream(4, 3, 112, 0)
    agent = vec()
    play_batch(agent, x, r, 0)
    releases = [e.release for e in agent.estimates]
    assert len(releases) >= 3 and all(isinstance(rel, VectorLDPRelease) for rel in releases)
    assert np.array_equal(releases[0].weighting, np.eye(3))
    for before, after in zip(releases, releases[1:]):
        assert np.array_equal(after.weighting, before.u_next)
    assert np.array_equal(agent.learner.fit_oracle(agent.learning, agent.oracle).initial_u, releases[-1].u_next)


def test_the_pooled_estimate_reads_randomized_outputs_only():
    assert released_values_only(lambda **kwargs: vec(**{"growth": 2.0, **kwargs}))     # the replay's 4 epochs


def test_the_agent_refuses_other_oracles():
    with pytest.raises(TypeError, match="IWVectorLDP"):
        make_agent("elim-ldp-vec", oracle=make_oracle("ssp-local", epsilon=1.0))
    assert isinstance(vec().learner, PooledReleases)
