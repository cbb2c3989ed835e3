"""Pieces of the local fits: their norm, the summing fits' running sums, the ledger's records and
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


def _rows(rng, n, d, bound=1.0):
    """Random rows inside the ball, a zero row, rows at the bound and a strided (non-contiguous) view."""
    x = rng.normal(size=(n, d))
    x *= bound * rng.uniform(0, 1, (n, 1)) / np.linalg.norm(x, axis=1, keepdims=True)
    x[0] = 0.0
    x[1] *= bound / np.linalg.norm(x[1])
    x[2, :] = 0.0
    x[2, 0] = bound
    return x


def test_vector_norm_is_the_euclidean_norm():
    """The local fits' norm (``vector_norm``, used by the ellipsoid projection) is numpy's Euclidean norm."""
    from privbandit.oracles.iw_ldp import vector_norm

    rng = np.random.default_rng(5)
    for d in range(1, 9):
        v = rng.normal(size=d) * rng.uniform(0.05, 3.0)
        np.testing.assert_allclose(vector_norm(v), np.linalg.norm(v), rtol=1e-15)
    assert vector_norm(np.zeros(3)) == 0.0


@pytest.mark.parametrize("name", ["ssp-local", "iw-regression-ldp"])
def test_summing_fits_give_one_estimate_row_by_row_and_in_blocks(name):
    """A summing local fit fed one row per call (the step loop) or blocks of 7 adds the same randomized outputs to
    its running sums: the same estimate (to rounding: sums in another order) and the same ledger."""
    oracle = make_oracle(name, epsilon=1.0, delta=1e-5)
    rng = np.random.default_rng(0)
    n = 300
    x, y = _rows(rng, n, 3), rng.uniform(-1, 1, n)
    one, blocks = oracle.start(n, dim=3, bound=1.0, rng=1), oracle.start(n, dim=3, bound=1.0, rng=1)
    for t in range(n):
        one.add(x[t], float(y[t]))
    for i in range(0, n, 7):
        blocks.add(x[i:i + 7], y[i:i + 7])
    a, b = one.result(), blocks.result()
    np.testing.assert_allclose(a.theta, b.theta, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.width_matrix, b.width_matrix, rtol=1e-9, atol=1e-12)
    assert one.ledger.releases == blocks.ledger.releases and one.ledger.releases


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
