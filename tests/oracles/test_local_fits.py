"""Pieces of the local fits: the ellipsoid projection, the summing fits' running sums, the ledger's records and
the randomizer's checks of its radius and feature bound."""

from __future__ import annotations

import numpy as np
import pytest

from privbandit.oracles import make_oracle
from privbandit.oracles.ssp_local import SufficientStatistic
from privbandit.privacy import (
    GaussianMechanism,
    LocalRandomizer,
)

U = 2.0 ** -53


def _psd(rng, d):
    a = rng.normal(size=(d, d))
    u = a @ a.T / d + 0.1 * np.eye(d)
    vals, vecs = np.linalg.eigh(u)
    return u, (vecs * np.sqrt(vals)) @ vecs.T


def _rows(rng, n, d, bound=1.0):
    """Random rows inside the ball, a zero row, rows at the bound and a strided (non-contiguous) view."""
    x = rng.normal(size=(n, d))
    x *= bound * rng.uniform(0, 1, (n, 1)) / np.linalg.norm(x, axis=1, keepdims=True)
    x[0] = 0.0
    x[1] *= bound / np.linalg.norm(x[1])
    x[2, :] = 0.0
    x[2, 0] = bound
    return x


def _project_ellipsoid_with_norm(v, u, eig):
    """project_ellipsoid as it was written, with np.linalg.norm (the reference)."""
    from scipy import optimize

    vals, vecs = eig
    c = vecs.T @ v
    vals = np.maximum(vals, 0.0)
    if np.linalg.norm(vals * c) <= 1.0:
        return v

    def excess(mu):
        return float(np.linalg.norm(vals * c / (1.0 + mu * vals * vals)) - 1.0)

    hi = 1.0
    while excess(hi) > 0:
        hi *= 4.0
    mu = optimize.brentq(excess, 0.0, hi, xtol=1e-14, rtol=1e-12)
    w = vecs @ (c / (1.0 + mu * vals * vals))
    norm = np.linalg.norm(u @ w)
    return w / norm if norm > 1.0 else w


def test_project_ellipsoid_is_unchanged_bit_for_bit():
    from privbandit.oracles.glm_ldp import project_ellipsoid
    from privbandit.oracles.iw_ldp import vector_norm

    rng = np.random.default_rng(5)
    inside = 0
    for _ in range(400):
        d = int(rng.integers(1, 8))
        u, _ = _psd(rng, d)
        v = rng.normal(size=d) * rng.uniform(0.05, 3.0)
        eig = np.linalg.eigh(u)
        a, b = project_ellipsoid(v, u, eig), _project_ellipsoid_with_norm(v, u, eig)
        assert a.tobytes() == b.tobytes()
        inside += a is v
        assert vector_norm(v) == np.linalg.norm(v)
    assert 50 < inside < 350                  # both branches ran


def test_summing_fits_add_in_place_with_the_same_sums():
    """SummingLocalFit adds each output to its running sum in place: the sum is the one a fresh array gets."""
    oracle = make_oracle("ssp-local", epsilon=1.0, delta=1e-5)
    rng = np.random.default_rng(0)
    x, y = _rows(rng, 20, 3), rng.uniform(-1, 1, 20)
    fit = oracle.start(20, dim=3, bound=1.0, rng=1)
    buffer = fit._sum
    expected = np.zeros_like(buffer)
    for t in range(20):
        before = fit.rng.bit_generator.state
        fit.add(x[t], float(y[t]))
        g = np.random.default_rng(0)
        g.bit_generator.state = before
        expected = expected + fit._randomizer_(x[t][None].copy(), y[t:t + 1], g)[0]
    assert fit._sum is buffer and fit._sum.tobytes() == expected.tobytes()


def test_ledger_record_takes_valid_ints_as_they_are_and_checks_the_rest():
    from privbandit.privacy import PrivacyLedger
    from privbandit.privacy.mechanisms import MechanismEntry

    e, f = MechanismEntry("gaussian", 1.0, "g"), MechanismEntry("gaussian", 1.0, "g")
    ledger = PrivacyLedger()
    ledger.record(0, 2, e, kind="local", label="a")
    ledger.record(2, 3, f, kind="local", label="a")        # an equal entry (not the same object) merges
    ledger.record(3, 3, e, kind="local", label="a")        # empty: nothing
    ledger.record(np.int64(3), np.int64(5), e, kind="local", label="b")
    ledger.record(5, 6, e, kind="central", label="b")
    assert [(r.start, r.stop, r.kind, r.label) for r in ledger.releases] == [
        (0, 3, "local", "a"), (3, 5, "local", "b"), (5, 6, "central", "b")]
    assert all(type(r.start) is int and type(r.stop) is int for r in ledger.releases)
    for bad in [dict(start=-1, stop=2), dict(start=3, stop=2), dict(start=1.0, stop=2), dict(start=True, stop=2)]:
        with pytest.raises((ValueError, TypeError)):
            ledger.record(bad["start"], bad["stop"], e)
    with pytest.raises(ValueError, match="kind"):
        ledger.record(6, 7, e, kind="locale", label="b")
    with pytest.raises(ValueError, match="kind"):
        ledger.record(6, 6, e, kind="locale")
    assert len(ledger.releases) == 3


def test_a_randomizer_keeps_positive_floats_and_checks_everything_else():
    gauss = GaussianMechanism(sensitivity=4.0, sigma=1.0)
    r = LocalRandomizer(SufficientStatistic(), 1.5, gauss, 0.5)
    assert type(r.radius) is float and r.radius == 1.5 and r.feature_bound == 0.5
    r = LocalRandomizer(SufficientStatistic(), np.float64(1.5), gauss, 1)
    assert type(r.radius) is float and type(r.feature_bound) is float
    for bad in (0.0, -1.0, np.inf, np.nan, "1"):
        with pytest.raises((ValueError, TypeError), match="radius"):
            LocalRandomizer(SufficientStatistic(), bad, gauss)
        with pytest.raises((ValueError, TypeError), match="feature_bound"):
            LocalRandomizer(SufficientStatistic(), 1.0, gauss, bad)
