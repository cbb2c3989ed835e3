"""IW-Regression-LDP's public release and warm start, and the pooled local-DP agents built on them
(elim-ldp-pooled, elim-ldp-greedy-pooled)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from agent_helpers import leaky_pooling, released_values_only
from agent_helpers import pooled_data as _data
from conftest import RecordedRandomizers

from privbandit.agents import check_agent, make_agent
from privbandit.agents.checks import check_ledger_within_budget, play_batch, synthetic_stream
from privbandit.agents.pooled import PooledReleases, PooledStatistics, pooled_estimate
from privbandit.oracles import make_oracle
from privbandit.oracles.iw_jdp import IWRelease
from privbandit.oracles.iw_ldp import ball_least_squares


def _fit(x, y, rng=7, **kwargs):
    fit = make_oracle("iw-regression-ldp", epsilon=1.0, delta=1e-5, **kwargs).start(x.shape[0], dim=x.shape[1],
                                                                                    rng=rng)
    fit.add(x, y)
    return fit


# -- the oracle: warm start and public release ------------------------------------------------------------------

def test_the_default_oracle_gives_the_numbers_it_gave_before_the_warm_start_existed():
    """Recorded with the library before ``initial_u`` and the release record were added (same seed, same data)."""
    est = _fit(*_data()).result()
    np.testing.assert_allclose(est.theta, [0.25264292498324953, -0.18874221303457014, 0.33289400732072727,
                                           0.17674568520711392], rtol=1e-12, atol=0)
    np.testing.assert_allclose(est.width_matrix[0], [0.36483445705031026, -0.01320712431196696,
                                                     -0.0419259954419159, -0.005254125492803219], rtol=1e-12, atol=0)
    assert est.width_scale == pytest.approx(7.123359886114879, rel=1e-14)


def test_a_warm_start_from_the_identity_is_the_default_bit_for_bit():
    x, y = _data()
    plain, warm = _fit(x, y).result(), _fit(x, y, initial_u=np.eye(4)).result()
    assert np.array_equal(plain.theta, warm.theta) and np.array_equal(plain.width_matrix, warm.width_matrix)
    other = _fit(x, y, initial_u=plain.width_matrix).result()      # a real warm start moves the fit
    assert not np.array_equal(other.width_matrix, plain.width_matrix)


def test_a_warm_start_must_be_a_symmetric_positive_definite_d_by_d_matrix():
    x, y = _data()
    for bad, message in ((np.eye(3), "initial_u"), (np.diag([1.0, 1.0, 1.0, -1.0]), "initial_u must be .*positive"),
                         (np.triu(np.ones((4, 4))), "symmetric")):
        with pytest.raises(ValueError, match=message):
            _fit(x, y, initial_u=bad)


@pytest.mark.parametrize("kwargs", [{}, {"stages": 1, "u_fraction": 0.2, "initial_u": np.diag([2.0, 1, 1, 0.5])}])
def test_the_exposed_release_is_the_servers_means_and_the_channels_noise(kwargs):
    x, y = _data()
    seen = RecordedRandomizers()
    fit = _fit(x, y, mechanism=seen, **kwargs)
    est = fit.result()
    rel = est.release
    regression = seen.returned()            # the last stage's randomized outputs (its users')
    assert isinstance(rel, IWRelease) and rel.gamma is None
    assert rel.n == fit.stage_sizes[-1] == regression.shape[0] and rel.n_stages == len(fit.stage_sizes) - 1
    # the means of the randomized outputs the server aggregated, split into psi_hat and Psi_hat
    mean = regression.sum(axis=0) / rel.n
    assert np.array_equal(rel.psi, mean[:4]) and np.array_equal(rel.psi_mat, mean[4:].reshape(4, 4) / fit.scale)
    # the per-entry sd of the means: the channel's sigma (from the ledger) over sqrt(n), Psi's rescaled by 1/scale
    (reg,) = [r for r in fit.ledger.releases if r.stop == x.shape[0] and r.start == x.shape[0] - rel.n]
    channel = seen.randomizers[-1].channel
    sigma = channel.sigma
    assert sigma == pytest.approx(reg.entry.parameter * channel.sensitivity, rel=1e-12)
    assert rel.noise_sd_psi == pytest.approx(sigma / math.sqrt(rel.n), rel=1e-12)
    assert rel.noise_sd_Psi == pytest.approx(rel.noise_sd_psi * math.sqrt(rel.bound), rel=1e-12)
    # the oracle's own theta is the post-processing of these values, and U is its width matrix
    np.testing.assert_allclose(est.theta, ball_least_squares(rel.psi_mat + rel.lam * np.eye(4), rel.psi), rtol=1e-10)
    assert np.array_equal(rel.weighting, est.width_matrix)
    assert not rel.psi.flags.writeable and not rel.weighting.flags.writeable


def test_pooling_an_ldp_release_bounds_the_sampling_covariance_by_n_u_inverse_squared():
    u = np.diag([2.0, 0.5])
    rel = IWRelease(weighting=u, psi=np.ones(2), psi_mat=u @ np.diag([1.0, -0.5]), n=100, lam=0.1, noise_sd_psi=0.01,
                    noise_sd_Psi=0.02, n_stages=1, fraction=0.2, bound=1.0)
    stats = PooledStatistics.zeros(2)
    stats.add(rel, 1.0)
    np.testing.assert_allclose(stats.gram, 100 * np.diag([1.0, 0.0]), atol=1e-12)        # projected in the U metric
    np.testing.assert_allclose(stats.shift, 100 * np.diag([0.0, 0.5]), atol=1e-12)       # what the projection added
    np.testing.assert_allclose(stats.sampling, 100 * np.diag([0.25, 4.0]), rtol=1e-12)
    np.testing.assert_allclose(stats.noise, 100 ** 2 * (0.01 ** 2 + 0.02 ** 2) * np.diag([0.25, 4.0]), rtol=1e-12)
    est = pooled_estimate(stats, _fit(*_data()).link, reg_scale=1.0, z=2.0, norm_bound=1.0, kappa=1.5, rho=0.25)
    np.testing.assert_allclose(est.theta, np.linalg.solve(stats.gram + stats.reg, stats.xty), rtol=1e-12)


# -- the agents -------------------------------------------------------------------------------------------------

def pooled(name="elim-ldp-pooled", **kwargs):
    return make_agent(name, epsilon=1.0, delta=1e-5, **{"first_epoch": 16, **kwargs})


@pytest.mark.parametrize("name", ["elim-ldp-pooled", "elim-ldp-greedy-pooled"])
def test_the_pooled_ldp_agents_keep_the_agent_contract(name):
    """Release replay to a neighbour (sensitivity, other users' actions), step loop vs batch path, ledger."""
    check_agent(pooled(name), horizon=256)


def test_elim_ldp_pooled_spends_exactly_its_budget_once_per_user():
    check_ledger_within_budget(pooled(), horizon=300)
    x, r = synthetic_stream(4, 3, 300, 0)
    agent = pooled()
    play_batch(agent, x, r, 0)
    spent = [agent.ledger.record_epsilon(u, 1e-5) for u in range(300)]
    assert np.allclose(spent, 1.0, rtol=1e-9)                       # every user randomized once at (1, 1e-5)
    assert agent.ledger.guarantee(1e-5) <= 1.0 + 1e-9
    assert {r["kind"] for r in agent.ledger.summary()} == {"local"}


def test_the_agent_warm_starts_each_epoch_from_the_last_released_u():
    x, r = synthetic_stream(4, 3, 112, 0)
    agent = pooled()
    play_batch(agent, x, r, 0)
    assert agent.oracle.initial_u is None and agent.oracle.stages == 1 and agent.oracle.u_fraction == 0.2
    releases = [e.release for e in agent.estimates]
    assert all(isinstance(rel, IWRelease) and rel.n_stages == 1 for rel in releases)
    assert np.array_equal(agent.learner.fit_oracle(agent.learning, agent.oracle).initial_u, releases[-1].weighting)
    assert make_agent("elim-ldp-greedy-pooled", epsilon=1.0, delta=1e-5).play == "greedy"


def _leaky(**kwargs):
    """A planted bug: the pooled agent whose learner also reads its users' raw rows before the channel
    (:func:`agent_helpers.leaky_pooling`)."""
    return leaky_pooling(pooled(**kwargs))


def test_the_pooled_estimate_reads_randomized_outputs_only():
    """Every user's data differs, the randomized outputs are replayed, and the pooled estimates, hence the policy,
    are bit-for-bit the same; a planted read of the raw rows is caught by the same test."""
    assert released_values_only(pooled)
    assert not released_values_only(_leaky)


def test_the_agent_refuses_other_oracles_and_pooling():
    with pytest.raises(TypeError, match="oracle must be an IWRegressionDP, IWRegressionLDP or IWVectorLDP"):
        make_agent("elim-ldp-pooled", oracle=make_oracle("ssp-local", epsilon=1.0))
    with pytest.raises(ValueError, match="pooling"):
        pooled(pooling="ridge")
    with pytest.raises(ValueError, match="plan_window"):
        PooledReleases(plan_window=0)


def test_elim_ldp_greedy_is_untouched_by_the_new_agents():
    agent = make_agent("elim-ldp-greedy", epsilon=1.0, delta=1e-5)
    assert agent.oracle.stages is None and agent.oracle.u_fraction == 0.5 and agent.oracle.initial_u is None
    assert type(agent).__name__ == "EliminationAgent"
