"""IW-Vector-LDP's public Gram radius r: the Gram statistic of phi shrunk to r, psi unchanged, a narrower channel."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privbandit.linalg import psd_sqrt
from privbandit.oracles import make_oracle
from privbandit.oracles.iw_vec_ldp import VectorIWStatistic, svec, svec_size, unsvec
from privbandit.privacy import l2_ball_channel_magnitude

D = 4


def _rows(n, seed, d=D):
    """Heavy-tailed rows: uniform directions, norms from 0.02 to 1 (many below 0.25), rewards in {-1, 1}."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((n, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    x = u * np.minimum(1.0, 0.02 * rng.pareto(1.5, n)[:, None] + 0.02)
    y = np.where(rng.random(n) < (1 + x @ np.linspace(-0.8, 0.6, d)) / 2, 1.0, -1.0)
    return x, y


def _spd(d, seed):
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    return (q * np.geomspace(0.2, 5.0, d)) @ q.T


def _release(x, y, rng=7, **kwargs):
    fit = make_oracle("iw-vector-ldp", epsilon=1.0, delta=1e-5, **kwargs).start(x.shape[0], dim=x.shape[1], rng=rng)
    fit.add(x, y)
    return fit, fit.result().release


@pytest.mark.parametrize("u_seed", [None, 3])
def test_the_gram_radius_shrinks_the_gram_statistic_only(u_seed):
    x, y = _rows(500, 0)
    u = np.eye(D) if u_seed is None else _spd(D, u_seed)
    r = 0.1
    full = VectorIWStatistic(u, psd_sqrt(u), 1.0)(x, y)
    shrunk = VectorIWStatistic(u, psd_sqrt(u), 1.0 / math.sqrt(r), r)(x, y)
    np.testing.assert_array_equal(shrunk[:, :D], full[:, :D])               # psi reads U phi's direction only
    k = np.minimum(1.0, r / np.linalg.norm(x, axis=1))
    assert 0.05 < np.mean(k < 1) < 0.9                                         # both kinds of rows are present
    np.testing.assert_allclose(shrunk[:, D:] * math.sqrt(r), full[:, D:] * k[:, None], rtol=1e-12, atol=1e-15)
    assert np.all(np.linalg.norm(shrunk, axis=1) <= math.sqrt(1.0 + r) * (1 + 1e-12))
    # and it is the plain statistic of the shrunk rows
    plain = VectorIWStatistic(u, psd_sqrt(u), 1.0 / math.sqrt(r))(x * k[:, None], y)
    np.testing.assert_allclose(shrunk, plain, rtol=1e-10, atol=1e-14)


def test_a_gram_radius_narrows_the_channel_and_keeps_one_pure_entry_per_user():
    x, y = _rows(600, 1)
    size = D + svec_size(D)
    fit, rel = _release(x, y, gram_radius=0.25)
    _, default = _release(x, y)
    m = l2_ball_channel_magnitude(1.0, size, math.sqrt(1.25) * (1 + 1e-9))
    assert rel.noise_sd_psi == pytest.approx(m / math.sqrt(size * 600), rel=1e-12)
    assert rel.noise_sd_gram == pytest.approx(rel.noise_sd_psi * math.sqrt(0.25), rel=1e-12)      # sd / c
    assert rel.noise_sd_psi < 0.8 * default.noise_sd_psi and rel.noise_sd_gram < 0.5 * default.noise_sd_gram
    summary = fit.ledger.summary()
    assert [(e["start"], e["stop"], e["mechanism"], e["kind"]) for e in summary] == [(0, 600, "l2-ball", "local")]
    assert fit.ledger.guarantee(1e-5) == pytest.approx(1.0)


@pytest.mark.parametrize("radius", [1.0, 5.0])
def test_a_gram_radius_at_or_above_b_changes_nothing(radius):
    x, y = _rows(300, 2)
    _, rel = _release(x, y, gram_radius=radius)
    _, default = _release(x, y)
    for name in ("psi", "gram", "u_next"):
        np.testing.assert_array_equal(getattr(rel, name), getattr(default, name))
    assert (rel.noise_sd_psi, rel.noise_sd_gram) == (default.noise_sd_psi, default.noise_sd_gram)


def test_the_released_means_are_unbiased_for_the_shrunk_statistic():
    """40,000 users: psi and H sit within 4 noise sds of the means of the shrunk statistic (not of the full one)."""
    x, y = _rows(40_000, 5, d=3)
    u, r = _spd(3, 4), 0.02
    _, rel = _release(x, y, rng=11, initial_u=u, gram_radius=r)
    s = VectorIWStatistic(u, psd_sqrt(u), 1.0 / math.sqrt(r), r)(x, y).mean(axis=0)
    assert np.all(np.abs(rel.psi - s[:3]) <= 4 * rel.noise_sd_psi)
    gram = svec(rel.gram) / math.sqrt(r)                              # the release holds H / c; s holds c H
    assert np.all(np.abs(gram - s[3:]) <= 4 * rel.noise_sd_gram / math.sqrt(r))
    full = unsvec(VectorIWStatistic(u, psd_sqrt(u), 1.0)(x, y).mean(axis=0)[3:], 3)
    assert np.any(np.abs(svec(rel.gram) - svec(full)) > 4 * rel.noise_sd_gram)   # and not the unshrunk one's


@pytest.mark.parametrize("bad", [0.0, -0.5, float("nan")])
def test_a_gram_radius_must_be_positive(bad):
    with pytest.raises(ValueError, match="gram_radius"):
        make_oracle("iw-vector-ldp", epsilon=1.0, delta=1e-5, gram_radius=bad)
