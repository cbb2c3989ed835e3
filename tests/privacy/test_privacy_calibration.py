"""Calibration of the Gaussian mechanism: the realised delta never exceeds the target (`def:Guassian-channel`).

The realised delta at epsilon is computed in closed form (Balle & Wang 2018, :func:`gaussian_delta`) and
cross-checked against dp-accounting's privacy-loss-distribution accountant, an independent implementation.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from privbandit.privacy import (
    analytic_noise_multiplier,
    compose_gaussian_multipliers,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_sigma,
    paper_sigma_alpha,
)

EPSILONS = (0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0, 60.0)
DELTAS = (1e-12, 1e-6, 1e-5, 1e-3, 0.1, 0.5)
SENSITIVITIES = (0.003, 1.0, 37.0)
GRID = list(itertools.product(EPSILONS, DELTAS, SENSITIVITIES))


def pld_delta(epsilon: float, sigma: float, sensitivity: float, interval: float = 1e-3) -> float:
    """delta(epsilon) of one Gaussian release by dp-accounting's PLD (a pessimistic upper bound)."""
    pld = pld_lib.from_gaussian_mechanism(sigma, sensitivity=sensitivity, value_discretization_interval=interval)
    return float(pld.get_delta_for_epsilon(epsilon))


@pytest.mark.parametrize("method", ["analytic", "paper"])
def test_realised_delta_never_exceeds_target(method):
    for eps, delta, sens in GRID:
        sigma = gaussian_sigma(eps, delta, sens, method=method)
        realised = gaussian_delta(eps, sigma / sens)
        assert realised <= delta, (method, eps, delta, sens, sigma, realised)


def test_reported_round_trip_case_meets_its_target():
    """The fresh-install failure: eps 0.1, delta 1e-5, sensitivity 0.003 realised 1.0000000000001124e-05."""
    sigma = gaussian_sigma(0.1, 1e-5, 0.003)
    assert gaussian_delta(0.1, sigma / 0.003) <= 1e-5


@pytest.mark.parametrize("method", ["analytic", "paper"])
def test_sigma_meets_target_after_the_round_trip_for_any_sensitivity(method):
    """sigma / sensitivity certifies the target for sensitivities spread over 24 orders of magnitude.

    The multiplier alone meeting the target is not enough: ``z * s / s`` can come out an ulp below ``z``,
    and at the boundary one ulp is a realised delta above the target.
    """
    rng = np.random.default_rng(20261126)
    sensitivities = 10.0 ** rng.uniform(-12, 12, size=400)
    for eps, delta in itertools.product((0.1, 1.0, 3.0), (1e-5, 1e-3)):
        for sens in sensitivities:
            sigma = gaussian_sigma(eps, delta, float(sens), method=method)
            assert gaussian_delta(eps, sigma / sens) <= delta, (method, eps, delta, sens, sigma)


@pytest.mark.parametrize("method", ["analytic", "paper"])
def test_closed_form_delta_agrees_with_dp_accounting_pld(method):
    # A sub-grid (PLD is slow for huge sigma); sensitivity only rescales, so one sensitivity per point.
    grid = itertools.product((0.1, 1.0, 5.0), (1e-6, 1e-3, 0.1))
    for (eps, delta), sens in zip(grid, itertools.cycle(SENSITIVITIES)):
        sigma = gaussian_sigma(eps, delta, sens, method=method)
        closed = gaussian_delta(eps, sigma / sens)
        pld = pld_delta(eps, sigma, sens)
        # PLD's pessimistic discretisation is an upper bound, close to the exact value.
        assert pld >= closed * (1 - 1e-9) - 1e-15
        assert pld <= closed * 1.05 + 1e-9, (eps, delta, sens, closed, pld)
        # And the independent accountant also certifies the target (up to its discretisation slack).
        assert pld <= delta * 1.05 + 1e-12


def test_analytic_sigma_is_tight():
    """The analytic multiplier is the smallest: 0.1% less noise breaks the target."""
    for eps, delta in itertools.product((0.1, 1.0, 5.0), (1e-8, 1e-5, 1e-2)):
        z = analytic_noise_multiplier(eps, delta)
        assert gaussian_delta(eps, z) <= delta
        assert gaussian_delta(eps, z * 0.999) > delta


def test_paper_sigma_formula_and_its_half_delta_claim():
    # sigma_alpha = 4 sqrt(log(2.5/delta)) / epsilon; Delta = sensitivity / 2.
    for eps, delta, sens in itertools.product((0.05, 0.3, 1.0), (1e-9, 1e-5, 0.5), (0.1, 2.0)):
        alpha = paper_sigma_alpha(eps, delta)
        assert alpha == pytest.approx(4 * math.sqrt(math.log(2.5 / delta)) / eps, rel=1e-14)
        assert gaussian_sigma(eps, delta, sens, method="paper") == pytest.approx(alpha * sens / 2, rel=1e-14)
        # def:Guassian-channel: N(F(z), sigma_alpha^2 Delta^2) is (alpha, beta/2)-DP for alpha, beta in (0, 1].
        assert gaussian_delta(eps, alpha / 2) <= delta / 2


def test_paper_sigma_outside_the_papers_regime_is_never_below_analytic():
    # For epsilon > 1 the paper's formula alone can fail (e.g. epsilon = 20, delta = 0.1): the library
    # returns the larger of the two there.
    raw = paper_sigma_alpha(20.0, 0.1) / 2
    assert gaussian_delta(20.0, raw) > 0.1  # the paper's formula alone is not private here
    for eps, delta in itertools.product((1.5, 20.0, 60.0), (1e-6, 0.1)):
        paper = gaussian_sigma(eps, delta, 1.0, method="paper")
        assert paper >= gaussian_sigma(eps, delta, 1.0, method="analytic")
        assert paper >= paper_sigma_alpha(eps, delta) / 2


@pytest.mark.parametrize("eps, delta, expected", [(1.0, 1e-5, 0.5291), (0.1, 1e-6, 0.4729)])
def test_analytic_to_paper_sigma_ratio(eps, delta, expected):
    ratio = gaussian_sigma(eps, delta, 1.0) / gaussian_sigma(eps, delta, 1.0, method="paper")
    print(f"analytic/paper sigma ratio at (eps={eps}, delta={delta:g}): {ratio:.4f}")
    assert ratio == pytest.approx(expected, abs=5e-4)


def test_analytic_never_above_paper_in_the_papers_regime():
    for eps, delta in itertools.product((0.01, 0.1, 0.5, 1.0), (1e-12, 1e-6, 1e-3, 0.5, 0.99)):
        assert gaussian_sigma(eps, delta, 1.0) <= gaussian_sigma(eps, delta, 1.0, method="paper")


def test_gaussian_epsilon_inverts_gaussian_delta():
    for z, delta in itertools.product((0.3, 1.0, 4.0, 50.0), (1e-9, 1e-5, 0.01)):
        eps = gaussian_epsilon(z, delta)
        assert gaussian_delta(eps, z) <= delta
        if eps > 0:
            assert gaussian_delta(eps * (1 - 1e-6), z) > delta * (1 - 1e-6)
    # A huge multiplier reaches delta at epsilon 0.
    assert gaussian_epsilon(1e6, 0.5) == 0.0


def test_gaussian_delta_monotone_and_limits():
    eps = np.linspace(0, 10, 41)
    for z in (0.2, 1.0, 5.0):
        d = np.array([gaussian_delta(e, z) for e in eps])
        assert np.all(np.diff(d) <= 1e-15)
        # epsilon = 0: delta is the total variation 2 Phi(1/(2z)) - 1.
        assert d[0] == pytest.approx(math.erf(1 / (2 * z) / math.sqrt(2)), rel=1e-12)
    assert gaussian_delta(math.inf, 0.5) == 0.0
    for bad in (-0.1, math.nan):
        with pytest.raises(ValueError, match="epsilon"):
            gaussian_delta(bad, 1.0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        gaussian_delta(1.0, 0.0)
    zs = [0.2, 0.5, 1.0, 3.0]
    ds = [gaussian_delta(1.0, z) for z in zs]
    assert all(a > b for a, b in zip(ds, ds[1:]))  # more noise, less delta


def test_compose_gaussian_multipliers():
    assert compose_gaussian_multipliers([2.0, 2.0, 2.0, 2.0]) == pytest.approx(1.0)
    assert compose_gaussian_multipliers([3.0]) == pytest.approx(3.0)
    z = np.array([0.7, 1.3, 5.0])
    assert compose_gaussian_multipliers(z) == pytest.approx(float(np.sum(z ** -2) ** -0.5))
    assert compose_gaussian_multipliers([]) == math.inf
    with pytest.raises(ValueError, match="multipliers"):
        compose_gaussian_multipliers([1.0, 0.0])
