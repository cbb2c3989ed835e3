"""The local fits' one-row path (issue 14, third pass): the step loop's row through the randomizer without the
batch machinery gives the general path's outputs bit for bit, with the same draws, and anything that is not
the library's own (a subclass, a patch, a user's statistic, a row near a bound) takes the general path."""

from __future__ import annotations

import numpy as np
import pytest

from privbandit.links import identity_link, logistic_link
from privbandit.oracles import make_oracle
from privbandit.oracles.base import LocalEpochFit
from privbandit.oracles.glm_ldp import GLMGradientStatistic
from privbandit.oracles.iw_ldp import IWRegressionStatistic, SpectralStatistic
from privbandit.oracles.ssp_local import SufficientStatistic
from privbandit.privacy import (
    GaussianMechanism,
    L2BallChannel,
    LaplaceMechanism,
    LocalRandomizer,
    SymmetricGaussianMechanism,
)
from privbandit.privacy import randomizers
from privbandit.privacy.clipping import certainly_within

U = 2.0 ** -53


def _psd(rng, d):
    a = rng.normal(size=(d, d))
    u = a @ a.T / d + 0.1 * np.eye(d)
    vals, vecs = np.linalg.eigh(u)
    return u, (vecs * np.sqrt(vals)) @ vecs.T


def _statistics(rng, d):
    u, u_half = _psd(rng, d)
    w = rng.normal(size=d)
    return [SpectralStatistic(u, u_half), IWRegressionStatistic(u, 1.0 / np.sqrt(0.7)),
            GLMGradientStatistic(u, w, identity_link()), GLMGradientStatistic(u, w, logistic_link()),
            GLMGradientStatistic(u, 40.0 * w, identity_link()), SufficientStatistic()]


def _rows(rng, n, d, bound=1.0):
    """Random rows inside the ball, a zero row, rows at the bound and a strided (non-contiguous) view."""
    x = rng.normal(size=(n, d))
    x *= bound * rng.uniform(0, 1, (n, 1)) / np.linalg.norm(x, axis=1, keepdims=True)
    x[0] = 0.0
    x[1] *= bound / np.linalg.norm(x[1])
    x[2, :] = 0.0
    x[2, 0] = bound
    return x


def test_every_row_statistic_is_tested_here():
    assert set(randomizers._ROW_STATISTICS) == {SpectralStatistic, IWRegressionStatistic, GLMGradientStatistic,
                                                  SufficientStatistic}


@pytest.mark.parametrize("d", [1, 2, 3, 7, 10, 16, 32])
def test_row_statistics_equal_the_batch_statistic_of_that_row_bit_for_bit(d):
    rng = np.random.default_rng(d)
    wide = rng.normal(size=(40, 2 * d))
    for stat in _statistics(rng, d):
        x, y = _rows(rng, 40, d), rng.uniform(-1, 1, 40)
        y[3], y[4] = 1.0, -1.0
        x[5] = wide[5, ::2]                                   # (copied: a strided row takes the general path)
        for t in range(40):
            row = x[t]
            before = row.copy()
            one = stat._row(row, float(y[t]))
            batch = stat(row[None, :].copy(), np.array([y[t]]))[0]
            assert one.dtype == np.float64 and one.shape == batch.shape
            assert one.tobytes() == batch.tobytes(), (type(stat).__name__, t)
            assert np.array_equal(row, before)


def _randomizers(rng, d):
    u, u_half = _psd(rng, d)
    gauss = GaussianMechanism(sensitivity=2.0, sigma=1.7)
    return [LocalRandomizer(SpectralStatistic(u, u_half), 1.0, SymmetricGaussianMechanism(2.0, 1.3), 1.0),
            LocalRandomizer(IWRegressionStatistic(u, 1.0), np.sqrt(2.0), GaussianMechanism(2 * np.sqrt(2.0), 2.0)),
            LocalRandomizer(GLMGradientStatistic(u, rng.normal(size=d), identity_link()), 2.0,
                            GaussianMechanism(4.0, 3.0)),
            LocalRandomizer(SufficientStatistic(), 0.5, gauss, 1.0)]      # radius too small: rows projected


def _same_draws(randomizer, x, y, seed):
    """(the row path's output or None, the general path's output, whether both generators end in one state)."""
    g1, g2 = np.random.default_rng(seed), np.random.default_rng(seed)
    one = randomizer._privatize_row(x, y, g1)
    with _maybe_warning():
        general = randomizer.privatize_clipped(x[None, :].copy(), np.array([y]), g2)[0]
    if one is None:
        return None, general, g1.bit_generator.state == np.random.default_rng(seed).bit_generator.state
    return one, general, g1.bit_generator.state == g2.bit_generator.state


class _maybe_warning:
    """Projected rows warn on the general path; that is its business here."""

    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self._w.__exit__(*exc)


@pytest.mark.parametrize("d", [1, 3, 10])
def test_the_row_path_draws_what_the_general_path_draws_or_declines_before_drawing(d):
    rng = np.random.default_rng(100 + d)
    took = declined = 0
    for randomizer in _randomizers(rng, d):
        x, y = _rows(rng, 30, d), rng.uniform(-1, 1, 30)
        over = x[1] * (1.0 + 4 * U)                           # just over the bound: clipped on the general path
        for t, row in enumerate(list(x) + [over, x[1] * (1.0 - 2 * U)]):
            one, general, same_state = _same_draws(randomizer, row, float(y[t % 30]), t)
            assert same_state
            if one is None:
                declined += 1
            else:
                took += 1
                assert one.tobytes() == general.tobytes()
    assert took > 50 and declined >= 3        # both branches ran (the bound rows and the projected ones decline)


def test_rows_at_or_over_the_bound_and_statistics_over_the_radius_decline():
    d = 4
    rng = np.random.default_rng(0)
    gauss = GaussianMechanism(sensitivity=3.0, sigma=1.0)
    rand = LocalRandomizer(SufficientStatistic(), 1.5, gauss, 1.0)
    unit = np.ones(d) / 2.0                                   # norm exactly 1 = B
    assert rand._privatize_row(unit, 0.5, rng) is None
    assert rand._privatize_row(unit * (1 + 1e-15), 0.5, rng) is None
    assert rand._privatize_row(unit * 0.5, 0.5, rng) is not None
    small = LocalRandomizer(SufficientStatistic(), 0.1, GaussianMechanism(0.2, 1.0), 1.0)
    assert small._privatize_row(unit * 0.5, 0.5, rng) is None  # ||s|| > 0.1: the projection (and its warning)
    assert rand._privatize_row((np.ones(2 * d) * 0.25)[::2], 0.5, rng) is None      # strided


def test_anything_not_the_librarys_own_takes_the_general_path(monkeypatch):
    d = 3
    rng = np.random.default_rng(0)
    x, y = np.full(d, 0.2), 0.3
    gauss = GaussianMechanism(sensitivity=4.0, sigma=1.0)
    stat = SufficientStatistic()
    assert LocalRandomizer(stat, 1.0, gauss)._privatize_row(x, y, rng) is not None

    class MyStat(SufficientStatistic):
        pass

    class MyGauss(GaussianMechanism):
        pass

    class MyRandomizer(LocalRandomizer):
        def __call__(self, features, rewards, rng=None):
            return super().__call__(features, rewards, rng)

    def user_stat(a, b):
        return a * b[:, None]

    assert LocalRandomizer(MyStat(), 1.0, gauss)._privatize_row(x, y, rng) is None
    assert LocalRandomizer(user_stat, 1.0, gauss)._privatize_row(x, y, rng) is None
    assert LocalRandomizer(stat, 1.0, MyGauss(4.0, 1.0))._privatize_row(x, y, rng) is None
    assert LocalRandomizer(stat, 1.0, LaplaceMechanism(4.0, 1.0))._privatize_row(x, y, rng) is None
    assert LocalRandomizer(WeightedLabel(), 1.0, L2BallChannel(1.0, d, 1.0))._privatize_row(x, y, rng) is None
    assert MyRandomizer(stat, 1.0, gauss)._privatize_row(x, y, rng) is None
    for cls, name in [(SufficientStatistic, "__call__"), (GaussianMechanism, "_add_noise"),
                      (GaussianMechanism, "release"), (LocalRandomizer, "_privatize"),
                      (LocalRandomizer, "privatize_clipped"), (LocalRandomizer, "__call__")]:
        with monkeypatch.context() as m:
            real = getattr(cls, name)
            m.setattr(cls, name, lambda self, *a, _real=real, **k: _real(self, *a, **k))
            assert LocalRandomizer(stat, 1.0, gauss)._privatize_row(x, y, rng) is None, (cls, name)
    assert LocalRandomizer(stat, 1.0, gauss)._privatize_row(x, y, rng) is not None


class WeightedLabel:
    def __call__(self, a, b):
        return a * b[:, None]


def _fit_state(fit):
    est = fit.result()
    parts = [est.theta, est.width_matrix, np.array([est.width_scale])]
    return b"".join(np.ascontiguousarray(p).tobytes() for p in parts), repr(fit.ledger.summary())


@pytest.mark.parametrize("name", ["iw-regression-ldp", "iw-glm-ldp", "ssp-local"])
@pytest.mark.parametrize("n_rounds", [1, 3, 9, 64])
def test_one_row_add_of_a_local_fit_is_the_block_add_of_that_row_bit_for_bit(name, n_rounds):
    """LocalEpochFit._add_row == _add_clipped(x[None].copy(), [y]) across stage ends, rows at and just over
    the bound included; the same ledger, estimate and generator state; the caller's row unchanged."""
    rng = np.random.default_rng(n_rounds)
    x, y = _rows(rng, max(n_rounds, 3), 4)[:n_rounds], rng.uniform(-1, 1, n_rounds)
    if n_rounds > 3:
        x[3] = x[1] * (1.0 + 4 * U)
    kw = dict(dim=4, bound=1.0, **({"link": logistic_link()} if "glm" in name else {}))
    oracle = make_oracle(name, epsilon=1.0, delta=1e-5)
    one, block = oracle.start(n_rounds, rng=7, **kw), oracle.start(n_rounds, rng=7, **kw)
    for t in range(n_rounds):
        row = x[t].copy()
        with _maybe_warning():                                # the row over the bound is clipped (and warns)
            one._add_row(row, float(y[t]))
            block._add_clipped(x[t][None, :].copy(), np.array([y[t]]))
        assert np.array_equal(row, x[t]) and one.n_seen == block.n_seen == t + 1
    assert one.rng.bit_generator.state == block.rng.bit_generator.state
    assert _fit_state(one) == _fit_state(block)


def test_a_fit_whose_add_rows_is_replaced_gets_it_for_every_row():
    oracle = make_oracle("ssp-local", epsilon=1.0, delta=1e-5)
    fit = oracle.start(4, dim=3, bound=1.0, rng=0)
    seen = []
    real = fit._add_rows

    def spy(stage, start, x, y):
        seen.append((start, x.shape))
        real(stage, start, x, y)

    fit._add_rows = spy
    fit._add_row(np.full(3, 0.1), 0.2)
    assert seen == [(0, (1, 3))]

    class Replaced(type(fit)):
        def _add_rows(self, stage, start, x, y):
            seen.append(("class", start))
            LocalEpochFit._add_rows(self, stage, start, x, y)

    other = Replaced(oracle, 4, 3, 1.0, identity_link(), np.random.default_rng(0))
    other._add_row(np.full(3, 0.1), 0.2)
    assert seen[-1] == ("class", 0)


def test_certainly_within_implies_the_einsum_test_and_refuses_nan_inf_overflow():
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 10, 110):
        for _ in range(2000):
            v = rng.normal(size=n) * 10.0 ** rng.integers(-100, 100)
            exact = float(np.einsum("i,i->", v, v))
            limit = exact * (1.0 + rng.uniform(-1e-13, 1e-13))
            if certainly_within(v, limit):
                assert np.einsum("i,i->", v, v) <= limit and np.einsum("ij,ij->i", v[None], v[None])[0] <= limit
        v = np.ones(n)
        assert certainly_within(v, float(n) * (1 + 1e-9)) and not certainly_within(v, float(n))
        for bad in (np.nan, np.inf, -np.inf, 1e200):
            w = v.copy()
            w[0] = bad
            assert not certainly_within(w, 1e300)
        assert not certainly_within(v * 1e-150, 1e-281) and not certainly_within(v, np.inf)


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
        fit._add_row(x[t], float(y[t]))
        g = np.random.default_rng(0)
        g.bit_generator.state = before
        expected = expected + fit._randomizer_.privatize_clipped(x[t][None].copy(), y[t:t + 1], g)[0]
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
