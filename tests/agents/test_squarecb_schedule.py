"""SquareCB's gamma schedules: the theorem's (the registered defaults, unchanged) and the calibrated one."""

from __future__ import annotations

import math

import numpy as np
import pytest
from agent_helpers import estimates_on

from privbandit.agents import agent_is_private, agent_names, check_agent, make_agent
from privbandit.agents.checks import play_batch, synthetic_stream
from privbandit.agents.squarecb import (
    CALIBRATED_ERROR_CONSTANTS,
    CALIBRATED_GAMMA_SCALE,
    SquareCBAgent,
    calibrated_error,
    iw_l2_rate,
    l2_rate,
)


class Recording(SquareCBAgent):
    """SquareCB that keeps each epoch's gamma."""

    def reset(self, spec, rng=None):
        self.gammas: list[float] = []
        return super().reset(spec, rng)

    def combine(self, estimates):
        law = super().combine(estimates)
        if estimates:                       # once per release
            self.gammas.append(law.gamma)
        return law


def _gammas(name, stream=None, rng=5, **kwargs):
    base = make_agent(name, epsilon=1.0, **kwargs) if agent_is_private(name) else make_agent(name, **kwargs)
    agent = Recording(base.oracle, **{k: v for k, v in base.get_params().items() if k != "oracle"})
    x, r = stream if stream is not None else synthetic_stream(4, 3, 300, 0)
    played = play_batch(agent, x, r, rng)
    return agent, played


# Recorded with the code before the calibrated schedule existed (synthetic_stream(4, 3, 300, 0), rng 5).
RECORDED = {
    "squarecb-jdp-iw": ([0.07834434393426408, 0.07834434393426408, 0.11079563372705858, 0.15668868786852816,
                         0.22159126745411717, 0.3133773757370563, 0.44318253490823434, 0.6267547514741126,
                         0.37161985293580707], 426),
    "squarecb-dpsgd": ([0.38894292436630756, 0.38894292436630756, 0.4599584493317449, 0.5512220371503149,
                        0.663988124510389, 0.8017525467583844, 0.9692274735638842, 1.1722599375557192,
                        0.8800768486090128], 432),
    "squarecb-ldp-sgd": ([0.6469752706308605, 0.6469752706308605, 0.7170629091218244, 0.7954551332452695,
                          0.8831035231034042, 0.9810773214187607, 1.0905763020095423, 1.2129455050844624,
                          1.033414471395903], 427),
    "squarecb-nonprivate": ([1.6329931618554523, 1.6329931618554523, 2.3094010767585034, 3.2659863237109046,
                             4.618802153517007, 6.531972647421809, 9.237604307034013, 13.063945294843618,
                             7.745966692414835], 409),
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_the_registered_default_schedules_give_the_recorded_gammas_and_actions(name):
    agent, played = _gammas(name)
    gammas, action_sum = RECORDED[name]
    assert agent.gamma_schedule == "paper" and agent.gamma_scale == 1.0
    np.testing.assert_allclose(agent.gammas, gammas, rtol=1e-12)
    assert int(np.sum(played.actions)) == action_sum


def test_the_calibrated_gamma_is_the_scale_times_sqrt_k_over_the_calibrated_error():
    agent, _ = _gammas("squarecb-jdp-iw-cal")
    assert agent.gamma_schedule == "calibrated" and agent.gamma_scale == CALIBRATED_GAMMA_SCALE
    ends = np.diff(np.concatenate([[0], agent.epoch_ends]))
    for est, n, gamma in zip(agent.estimates, ends, agent.gammas):
        err = calibrated_error("iw", int(n), dim=3, lam=est.info["lam"], gamma=est.info["gamma"])
        assert gamma == pytest.approx(CALIBRATED_GAMMA_SCALE * math.sqrt(4 / err), rel=1e-12)
    # explores less than the theorem's gamma on the same stream (the reason it exists)
    assert np.all(np.array(agent.gammas) > 10 * np.array(RECORDED["squarecb-jdp-iw"][0]))


def test_the_calibrated_error_is_the_rate_without_its_union_bound_factor_times_the_measured_constant():
    n, d = 4096, 10
    conf = 1 / math.e                                         # log(1/conf) = 1
    assert calibrated_error("none", n, dim=d) == pytest.approx(CALIBRATED_ERROR_CONSTANTS["none"] * d / n)
    assert calibrated_error("jdp", n, dim=d, epsilon=0.5) == pytest.approx(
        CALIBRATED_ERROR_CONSTANTS["jdp"] * l2_rate("jdp", n, dim=d, epsilon=0.5, confidence=conf) ** 2)
    assert calibrated_error("iw", n, dim=d, lam=0.01, gamma=0.3) == pytest.approx(
        CALIBRATED_ERROR_CONSTANTS["iw"] * iw_l2_rate(n, dim=d, lam=0.01, gamma=0.3, confidence=conf) ** 2)
    # a smaller epsilon means a larger error, hence a smaller gamma
    assert calibrated_error("ldp", n, dim=d, epsilon=0.3) > calibrated_error("ldp", n, dim=d, epsilon=3.0)
    with pytest.raises(ValueError, match="kind must be one of"):
        calibrated_error("jdp-iw", n, dim=d)
    with pytest.raises(ValueError, match="needs the fit's lam and gamma"):
        calibrated_error("iw", n, dim=d)


def test_the_schedule_option_names_its_choices():
    with pytest.raises(ValueError, match="gamma_schedule"):
        make_agent("squarecb-jdp-iw", epsilon=1.0, gamma_schedule="calibrate")


def _cal():
    return Recording("iw-regression-dp", epsilon=1.0, delta=1e-5, gamma_schedule="calibrated",
                     gamma_scale=CALIBRATED_GAMMA_SCALE)


class _Leaky(Recording):
    """A planted bug: the calibrated error also reads the fit's unreleased running sum of Psi."""

    def _calibrated_error(self, n, estimate):
        return super()._calibrated_error(n, estimate) * (1.0 + 1e-6 * abs(float(self.fit._psi_mat[0, 0])))


def _leaky():
    return _Leaky("iw-regression-dp", epsilon=1.0, delta=1e-5, gamma_schedule="calibrated",
                  gamma_scale=CALIBRATED_GAMMA_SCALE)


def same_gammas_on_other_users(factory) -> bool:
    """Whether replaying one run's releases on a stream whose every user (features and rewards) differs gives
    the same gamma in every epoch and the same final policy, bit for bit."""
    first, tape = estimates_on(factory, synthetic_stream(4, 3, 240, 1))
    second, _ = estimates_on(factory, synthetic_stream(4, 3, 240, 2), tape)
    assert len(first.gammas) == len(second.gammas) == len(first.epoch_ends) > 4
    probe = synthetic_stream(4, 3, 50, 9)[0]
    return first.gammas == second.gammas and np.array_equal(first.action_probabilities(probe),
                                                            second.action_probabilities(probe))


def test_the_calibrated_schedule_reads_public_values_only():
    """Other users' data, the same releases: the same gammas; a planted read of the fit's raw sum is caught."""
    assert same_gammas_on_other_users(_cal)
    assert not same_gammas_on_other_users(_leaky)


def test_the_calibrated_agent_is_registered_so_the_contract_checks_and_audits_cover_it():
    """test_checks runs check_agent on every name of agent_names(); the audits run on every private one."""
    assert "squarecb-jdp-iw-cal" in agent_names() and agent_is_private("squarecb-jdp-iw-cal")
    agent = make_agent("squarecb-jdp-iw-cal", epsilon=1.0)
    assert agent.gamma_schedule == "calibrated" and agent.gamma_scale == CALIBRATED_GAMMA_SCALE


@pytest.mark.parametrize("name", ["squarecb-dpsgd", "squarecb-ldp-sgd"])
def test_the_other_oracles_calibrated_schedules_keep_the_agent_contract(name):
    """Not registered (documented keyword arguments): checked here."""
    kwargs = dict(gamma_schedule="calibrated", gamma_scale=CALIBRATED_GAMMA_SCALE)
    check_agent(lambda: make_agent(name, epsilon=1.0, **kwargs), horizon=64, rng=0)
