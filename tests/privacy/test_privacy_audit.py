"""Empirical privacy audits with power: real mechanisms pass, a planted bug (sigma / 3) is caught.

Each audit runs the mechanism 1e5 times on D and on a neighbour D' chosen at the declared sensitivity,
estimates delta at the target epsilon on a 1-D projection (hockey-stick over half-lines, Clopper-Pearson
error bars, 95% confidence) and checks (epsilon, delta):

- the real mechanism: no evidence of a violation (``delta_lower <= delta``);
- the same mechanism with sigma divided by 3 (true delta(epsilon) ~ 0.06 instead of 1e-5): a violation.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np
import pytest

from privbandit.privacy import (
    AuditResult,
    GaussianMechanism,
    LaplaceMechanism,
    LaplacePair,
    LocalRandomizer,
    SymmetricGaussianMechanism,
    audit_delta,
    clip_features,
    clopper_pearson,
    gaussian_delta,
)

EPS, DELTA, N_DRAWS = 1.0, 1e-5, 100_000
pytestmark = pytest.mark.slow


def vector_gaussian_case(divide: float = 1.0):
    """A mean of n clipped features released by a Gaussian; D' negates one record (x' = -x)."""
    n, d, bound = 40, 4, 2.0
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d))
    x[0] *= 10.0  # far outside the ball: clipped onto it
    x2 = x.copy()
    x2[0] = -x[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stat, stat2 = clip_features(x, bound).mean(axis=0), clip_features(x2, bound).mean(axis=0)
    mech = GaussianMechanism.calibrated(EPS, DELTA, sensitivity=2 * bound / n)
    assert np.linalg.norm(stat - stat2) == pytest.approx(mech.sensitivity)  # the neighbour is extreme
    mech = replace(mech, sigma=mech.sigma / divide)
    return (lambda k, g: mech.release(np.broadcast_to(stat, (k, d)), g),
            lambda k, g: mech.release(np.broadcast_to(stat2, (k, d)), g), None, mech.noise_multiplier)


def symmetric_gaussian_case(divide: float = 1.0):
    """SymPriv of H = mean of phi phi^T (||phi|| <= B); D' swaps one record for an orthogonal one."""
    n, d, bound = 30, 3, 1.0
    x = np.tile(np.eye(d)[0] * bound, (n, 1))
    x2 = x.copy()
    x2[0] = np.eye(d)[1] * bound
    h, h2 = x.T @ x / n, x2.T @ x2 / n
    sens = math.sqrt(2) * bound ** 2 / n  # sup ||phi phi^T - phi' phi'^T||_F / n
    assert np.linalg.norm(h - h2) == pytest.approx(sens)
    mech = SymmetricGaussianMechanism.calibrated(EPS, DELTA, sensitivity=sens)
    mech = replace(mech, sigma=mech.sigma / divide)
    iu = np.triu_indices(d)
    diff = (h - h2)[iu]

    def project(out):  # the likelihood-ratio statistic of the upper triangle
        return out[:, iu[0], iu[1]] @ diff

    return (lambda k, g: mech.release(np.broadcast_to(h, (k, d, d)), g),
            lambda k, g: mech.release(np.broadcast_to(h2, (k, d, d)), g), project, mech.noise_multiplier)


def local_randomizer_case(divide: float = 1.0):
    """A LocalRandomizer of s(phi, y) = phi y (radius B) on one user's record; D' = (-phi, y)."""
    d, bound = 3, 1.5
    phi = np.array([1.0, -2.0, 0.5])
    phi *= bound / np.linalg.norm(phi)
    rand = LocalRandomizer.gaussian(lambda f, r: f * r[:, None], bound, EPS, DELTA, feature_bound=bound)
    rand = replace(rand, channel=replace(rand.channel, sigma=rand.channel.sigma / divide))

    def run(record):
        return lambda k, g: rand(np.broadcast_to(record, (k, d)), np.ones(k), rng=g)

    return run(phi), run(-phi), None, rand.channel.noise_multiplier


CASES = {"vector-gaussian": vector_gaussian_case, "symmetric-gaussian": symmetric_gaussian_case,
         "local-randomizer": local_randomizer_case}


@pytest.mark.parametrize("name", list(CASES))
def test_real_gaussian_mechanism_passes_the_audit(name):
    run_d, run_d2, project, z = CASES[name]()
    res = audit_delta(run_d, run_d2, EPS, n_draws=N_DRAWS, rng=1, project=project)
    print(f"{name}: real delta_hat={res.delta_hat:.2e} [{res.delta_lower:.2e}, {res.delta_upper:.2e}] "
          f"(exact {gaussian_delta(EPS, z):.2e})")
    assert isinstance(res, AuditResult) and res.n_draws == N_DRAWS
    assert not res.violates(DELTA)
    assert res.delta_hat < 2e-3  # and no point estimate of a leak either


@pytest.mark.parametrize("name", list(CASES))
def test_planted_sigma_over_three_fails_the_audit(name):
    run_d, run_d2, project, z = CASES[name](divide=3.0)
    true_delta = gaussian_delta(EPS, z)
    res = audit_delta(run_d, run_d2, EPS, n_draws=N_DRAWS, rng=2, project=project)
    print(f"{name}: planted delta_hat={res.delta_hat:.4f} [{res.delta_lower:.4f}, {res.delta_upper:.4f}] "
          f"(exact {true_delta:.4f})")
    assert res.violates(DELTA)
    assert res.delta_lower > 100 * DELTA
    # The estimate is honest: its lower bound does not exceed the planted mechanism's true delta.
    assert res.delta_lower <= true_delta


def test_default_projection_also_catches_symmetric_gaussian_bug():
    run_d, run_d2, _, _ = symmetric_gaussian_case(divide=3.0)
    assert audit_delta(run_d, run_d2, EPS, n_draws=N_DRAWS, rng=3).violates(DELTA)


def test_pure_laplace_pair_passes_and_a_planted_one_fails():
    """Pure epsilon-DP: delta(epsilon) = 0. A pair with a third of its scale leaks at epsilon."""
    pair = LaplacePair(EPS)
    x, y = np.array([1.0]), np.array([1.0])
    x2, y2 = np.array([-1e-9]), np.array([1.0])

    def runner(p, xs, ys):
        return lambda k, g: np.stack(p.release(np.repeat(xs, k), np.repeat(ys, k), rng=g), axis=1)

    ok = audit_delta(runner(pair, x, y), runner(pair, x2, y2), EPS, n_draws=N_DRAWS, rng=4,
                     project=lambda out: out.sum(axis=1))
    assert not ok.violates(0.0)

    class Planted(LaplacePair):
        @property
        def mechanism(self):
            return LaplaceMechanism(3.0, 1.0 / self.epsilon)  # scale 1/eps instead of 3/eps

    bad = Planted(EPS)
    caught = audit_delta(runner(bad, x, y), runner(bad, x2, y2), EPS, n_draws=N_DRAWS, rng=5,
                         project=lambda out: out.sum(axis=1))
    assert caught.violates(0.0)


def test_clopper_pearson_bounds():
    lo, up = clopper_pearson(np.array([0, 5, 100]), 100, 0.025)
    assert lo[0] == 0.0 and up[2] == 1.0
    assert lo[1] < 0.05 < up[1]
    # Exact for k = 0: upper = 1 - alpha^(1/n).
    assert up[0] == pytest.approx(1 - 0.025 ** (1 / 100))


def test_audit_input_checks():
    def run(k, g):
        return g.standard_normal(k)

    with pytest.raises(ValueError, match="n_draws"):
        audit_delta(run, run, 1.0, n_draws=10)
    with pytest.raises(ValueError, match="epsilon"):
        audit_delta(run, run, 0.0)
    with pytest.raises(ValueError, match="confidence"):
        audit_delta(run, run, 1.0, confidence=1.0)
    with pytest.raises(ValueError, match="one row per draw"):
        audit_delta(run, lambda k, g: g.standard_normal(k + 1), 1.0, n_draws=1000)
    with pytest.raises(ValueError, match="same shape"):
        audit_delta(run, lambda k, g: g.standard_normal((k, 2)), 1.0, n_draws=1000)
    # Identical mechanisms on identical data: nothing to find.
    assert not audit_delta(run, run, 0.1, n_draws=20000, rng=0).violates(0.0)
