"""IW-Regression-DP's public release and warm start, and the pooled joint-DP agent built on them (elim-jdp-pooled)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from agent_helpers import leaky_pooling, released_values_only
from agent_helpers import pooled_data as _data

from privbandit.agents import check_agent, make_agent
from privbandit.agents.base import Learner
from privbandit.agents.checks import check_ledger_within_budget, play_batch, synthetic_stream
from privbandit.agents.elimination import EliminationAgent
from privbandit.agents.pooled import (
    POOLED_JDP_GROWTH,
    PooledReleases,
    PooledStatistics,
    pooled_estimate,
)
from privbandit.infomatrix import spectral_update
from privbandit.linalg import psd_project, psd_sqrt, symmetric_part
from privbandit.oracles import make_oracle
from privbandit.oracles.iw_jdp import IWRelease
from privbandit.privacy.replay import ReleaseTape


def _fit(x, y, rng=7, **kwargs):
    fit = make_oracle("iw-regression-dp", epsilon=1.0, delta=1e-5, **kwargs).start(x.shape[0], dim=x.shape[1],
                                                                                   rng=rng)
    fit.add(x, y)
    return fit


# -- the oracle: warm start and public release ------------------------------------------------------------------

def test_the_default_oracle_gives_the_numbers_it_gave_before_the_warm_start_existed():
    """Recorded with the library before ``initial_w`` and ``IWRelease`` were added (same seed, same data)."""
    est = _fit(*_data()).result()
    np.testing.assert_allclose(est.theta, [0.15008196374216048, 0.029423313895156587, 0.15820181448793982,
                                           -0.10648305137008664], rtol=1e-12, atol=0)
    np.testing.assert_allclose(est.width_matrix[0], [8.910280641170592, 0.8548014738975396, -0.6829110880332936,
                                                     1.361769063250619], rtol=1e-12, atol=0)
    assert est.width_scale == pytest.approx(0.1355544171172596, rel=1e-14)


def test_a_warm_start_from_the_identity_is_the_default_bit_for_bit():
    x, y = _data()
    plain, warm = _fit(x, y).result(), _fit(x, y, initial_w=np.eye(4)).result()
    assert np.array_equal(plain.theta, warm.theta) and np.array_equal(plain.width_matrix, warm.width_matrix)
    other = _fit(x, y, initial_w=plain.width_matrix).result()      # a real warm start moves the fit
    assert not np.array_equal(other.width_matrix, plain.width_matrix)


def test_a_warm_start_must_be_a_symmetric_positive_definite_d_by_d_matrix():
    x, y = _data()
    for bad, message in ((np.eye(3), "initial_w"), (np.diag([1.0, 1.0, 1.0, -1.0]), "positive definite"),
                         (np.triu(np.ones((4, 4))), "symmetric")):
        with pytest.raises(ValueError, match=message):
            _fit(x, y, initial_w=bad)


def _replay_w(w0, h_outputs, lam):
    """W from the released H~ of each stage, by the spectral update of `alg:W-JDP` (post-processing)."""
    w = w0
    for h in h_outputs:
        half = psd_sqrt(w)
        w = spectral_update(w, symmetric_part(half @ psd_project(h) @ half + lam * w))
    return w


@pytest.mark.parametrize("kwargs", [{}, {"n_stages": 1, "w_fraction": 0.2, "initial_w": np.diag([2.0, 1, 1, 0.5])}])
def test_the_exposed_release_is_what_the_ledger_and_the_tape_say_was_released(kwargs):
    x, y = _data()
    with ReleaseTape() as tape:
        fit = _fit(x, y, **kwargs)
        est = fit.result()
    rel = est.release
    assert isinstance(rel, IWRelease) and rel.gamma is not None
    labels = [r.label for r in fit.ledger.releases]
    h_stages = [r for r in fit.ledger.releases if "H stage" in r.label]
    (reg,) = [r for r in fit.ledger.releases if r.label.endswith("(psi, Psi)")]
    assert len(h_stages) == rel.n_stages == len(tape) - 1 and labels[-1] == reg.label
    # n: the rows of the regression release; the noise sds: the ledger's multiplier times the sensitivity
    assert rel.n == reg.stop - reg.start and reg.stop == x.shape[0]
    assert h_stages[-1].stop == reg.start == sum(fit.stage_sizes[:-1]) and h_stages[0].start == 0
    sens = 2 * math.sqrt(2) * rel.bound / (rel.gamma * rel.n)
    assert rel.noise_sd_Psi == pytest.approx(reg.entry.parameter * sens, rel=1e-12)
    assert rel.noise_sd_psi == pytest.approx(rel.noise_sd_Psi / rel.bound, rel=1e-12)
    # psi~ and Psi~ are the tape's last output; W is the spectral iteration run on the tape's H~ outputs
    out = tape.outputs[-1]
    assert np.array_equal(out[:4] / rel.bound, rel.psi) and np.array_equal(out[4:].reshape(4, 4), rel.psi_mat)
    w0 = kwargs.get("initial_w", np.eye(4))
    np.testing.assert_allclose(_replay_w(w0, tape.outputs[:-1], rel.lam), rel.weighting, rtol=1e-10, atol=1e-12)
    # and the oracle's own theta is the post-processing (Psi~ + lambda I)^{-1} psi~
    np.testing.assert_allclose(est.theta, np.linalg.solve(rel.psi_mat + rel.lam * np.eye(4), rel.psi), rtol=1e-10)
    assert not rel.psi.flags.writeable and not rel.weighting.flags.writeable


def _release(psi_mat, w, psi, n=100, lam=0.1):
    return IWRelease(weighting=w, psi=psi, psi_mat=psi_mat, n=n, lam=lam, gamma=1.0, noise_sd_psi=0.01,
                     noise_sd_Psi=0.01, n_stages=1, fraction=0.2, bound=1.0)


def _pool(*releases, reg_scale=1.0):
    stats = PooledStatistics.zeros(releases[0].weighting.shape[0])
    for rel in releases:
        stats.add(rel, 1.0)
    return stats, pooled_estimate(stats, _fit(*_data()).link, reg_scale=reg_scale, z=2.0, norm_bound=1.0, kappa=1.5,
                                  rho=0.25)


def test_one_epoch_pooled_with_scale_one_is_the_oracle_estimate():
    """With W^-1 Psi~ symmetric PSD, (W^-1 Psi~ + lambda W^-1)^-1 W^-1 psi~ = (Psi~ + lambda I)^-1 psi~."""
    rng = np.random.default_rng(0)
    g = rng.standard_normal((4, 4))
    w, s = g @ g.T + np.eye(4), np.cov(rng.standard_normal((4, 20)))
    rel = _release(w @ s, w, rng.standard_normal(4))
    _, est = _pool(rel)
    np.testing.assert_allclose(est.theta, np.linalg.solve(rel.psi_mat + rel.lam * np.eye(4), rel.psi), rtol=1e-9)
    assert np.all(np.linalg.eigvalsh(est.width_matrix) >= 0)
    # two epochs weigh by their users: the same release twice is the same estimate
    _, twice = _pool(rel, rel)
    np.testing.assert_allclose(twice.theta, est.theta, rtol=1e-9)


def test_pooling_projects_each_gram_onto_the_psd_cone_in_the_w_metric():
    w = np.diag([4.0, 1.0])
    rel = _release(w @ np.diag([1.0, -0.5]), w, np.ones(2))      # W^-1 Psi~ = diag(1, -0.5): indefinite
    stats, _ = _pool(rel)
    np.testing.assert_allclose(stats.gram, 100 * np.diag([1.0, 0.0]), atol=1e-12)
    np.testing.assert_allclose(stats.reg, 100 * 0.1 * np.diag([0.25, 1.0]), rtol=1e-12)


def test_pooling_keeps_a_well_observed_rows_noise_out_of_a_weighted_up_direction():
    """Noise c in Psi~'s entry (0, 1) (W = 0.5 there, 40 on direction 1): the pooled Gram's row of direction 1 takes
    0.5 c / (0.25 + 1600) of it (the symmetric least-squares solution), not c / (2 * 0.5) (symmetrising W^-1 Psi~)."""
    w, a0, c = np.diag([0.5, 40.0]), np.diag([1.0, 0.5]), 0.1
    noise = np.array([[0.0, c], [0.0, 0.0]])
    stats, _ = _pool(_release(w @ a0 + noise, w, np.ones(2)))
    expected = 0.5 * c / (0.25 + 1600.0)
    np.testing.assert_allclose(stats.gram / 100, [[1.0, expected], [expected, 0.5]], rtol=1e-9, atol=1e-15)
    assert symmetric_part(np.linalg.solve(w, w @ a0 + noise))[1, 0] == pytest.approx(c / (2 * 0.5))   # the old way


# -- the agent --------------------------------------------------------------------------------------------------

def pooled(**kwargs):
    """The agent on short doubling epochs (16, 32, ...): the tests below count its epochs."""
    return make_agent("elim-jdp-pooled", epsilon=1.0, delta=1e-5, **{"first_epoch": 16, "growth": 2.0, **kwargs})


def test_the_default_epochs_grow_by_1_5():
    """Epochs grow 1.5x by default (POOLED_JDP_GROWTH), and the suites' entry carries version 3 (2: these epochs;
    3: the symmetric least-squares Gram), so stored cells made before either have another identity and are never
    taken for this agent's; elim-ldp-pooled's entry carries version 2 for the Gram."""
    from privbandit.bench.suites import JDP_AGENTS, LDP_AGENTS

    agent = make_agent("elim-jdp-pooled", epsilon=1.0, delta=1e-5)
    assert agent.growth == POOLED_JDP_GROWTH == 1.5 and agent.first_epoch == 256
    entry = next(a for a in JDP_AGENTS if a.label == "elim-jdp-pooled")
    assert entry.version == 3 and dict(entry.kwargs) == {}
    assert next(a for a in LDP_AGENTS if a.label == "elim-ldp-pooled").version == 2
    x, r = synthetic_stream(4, 3, 200, 0)
    agent = make_agent("elim-jdp-pooled", epsilon=1.0, delta=1e-5, first_epoch=16)
    play_batch(agent, x, r, 0)
    assert agent.epoch_ends.tolist() == [16, 40, 76, 130, 200] and len(agent.estimates) == 5  # the last too


def test_elim_jdp_pooled_keeps_the_agent_contract():
    """Release replay to a neighbour (sensitivity, other users' actions), step loop vs batch path, ledger."""
    check_agent(pooled(), horizon=256)


def test_elim_jdp_pooled_spends_exactly_its_budget_once_per_user():
    check_ledger_within_budget(pooled(), horizon=300)
    x, r = synthetic_stream(4, 3, 300, 0)
    agent = pooled()
    play_batch(agent, x, r, 0)
    spent = [agent.ledger.record_epsilon(u, 1e-5) for u in range(300)]
    assert np.allclose(spent, 1.0, rtol=1e-9)                       # every user in exactly one release at (1, 1e-5)
    assert agent.ledger.guarantee(1e-5) <= 1.0 + 1e-9
    # each epoch: one W stage on floor(0.2 n) users, then one regression release
    ends = agent.epoch_ends.tolist()
    assert len(agent.ledger.releases) == 2 * len(ends)


def test_the_agent_warm_starts_each_epoch_from_the_last_released_w():
    x, r = synthetic_stream(4, 3, 112, 0)
    agent = pooled()
    with ReleaseTape():
        play_batch(agent, x, r, 0)
    assert agent.oracle.initial_w is None
    releases = [e.release for e in agent.estimates]
    assert [rel.n_stages for rel in releases] == [1] * len(releases)
    # the next epoch's fit started from the previous release's W: its oracle carried it
    assert np.array_equal(agent.learner.fit_oracle(agent.learning, agent.oracle).initial_w, releases[-1].weighting)


def _leaky(**kwargs):
    """The pooled agent whose learner also reads its users' raw rows (:func:`agent_helpers.leaky_pooling`)."""
    return leaky_pooling(pooled(**kwargs))


def test_the_pooled_estimate_reads_released_values_only():
    """Stronger than check_agent's replay (one user changed): every user's data differs, the releases are replayed,
    and the pooled estimates, hence the policy, are bit-for-bit the same; a planted read of the fit's raw running
    sum is caught by the same test."""
    assert released_values_only(pooled)
    assert not released_values_only(_leaky)


def test_the_agent_refuses_other_oracles_and_pooling():
    with pytest.raises(TypeError, match="oracle must be an IWRegressionDP, IWRegressionLDP or IWVectorLDP"):
        make_agent("elim-jdp-pooled", oracle=make_oracle("ssp", epsilon=1.0))
    with pytest.raises(ValueError, match="pooling"):
        pooled(pooling="ridge")
    with pytest.raises(ValueError, match="reg_scale"):
        PooledReleases(reg_scale=0.0)
    with pytest.raises(TypeError, match="oracle must be an IWRegressionDP, IWRegressionLDP or IWVectorLDP"):
        EliminationAgent("ssp", epsilon=1.0, pooling=PooledReleases())
    # the parent's options stay: pooling="none" fits each epoch alone, as the elimination agent does
    assert type(pooled(pooling="none").learner) is Learner


def test_elim_jdp_ucb_is_untouched_by_the_new_agent():
    agent = make_agent("elim-jdp-ucb", epsilon=1.0, delta=1e-5)
    assert agent.oracle.n_stages is None and agent.oracle.w_fraction == 0.5
    assert type(agent).__name__ == "EliminationAgent"


def test_the_agent_plans_on_its_last_plan_window_releases():
    """plan_window=k: the elimination test and the UCB score read the last k pooled releases only; a window as long
    as the run is every release (plan_window=None), as the elimination agent does."""
    x, r = synthetic_stream(4, 3, 496, 0)
    probe = synthetic_stream(4, 3, 64, 9)[0]
    runs = {}
    for window in (1, 2, 5, None):
        agent = pooled(pooling=PooledReleases(plan_window=window))
        play_batch(agent, x, r, 0)
        assert len(agent.estimates) == 5
        recent = agent.estimates if window is None else agent.estimates[-window:]
        assert all(any(e is f for f in recent) for e in agent.estimate.informative)
        assert agent.stacked_estimates()[0].basis.shape[1] == len(recent) * 4  # theta and M^T (d = 3) per release
        runs[window] = agent.action_probabilities(probe)
    assert np.array_equal(runs[5], runs[None]) and not np.array_equal(runs[1], runs[None])
