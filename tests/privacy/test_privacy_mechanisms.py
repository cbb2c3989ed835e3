"""Mechanisms: shapes, vectorisation, noise laws, the L2-ball channel's unbiasedness and covariance.

Statistical checks use tolerances from the central limit theorem: an estimate of a mean from n draws
with per-draw standard deviation s is asserted within 5 s / sqrt(n) (a false alarm has probability
< 1e-6 per check), with fixed seeds.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import special

from privbandit.oracles.simple_ldp import PAIR_L1_RADIUS, SignPairStatistic
from privbandit.privacy import (
    ClippingWarning,
    GaussianMechanism,
    L2BallChannel,
    LaplaceMechanism,
    LaplacePair,
    LocalRandomizer,
    SymmetricGaussianMechanism,
    gaussian_sigma,
    l2_ball_channel_magnitude,
    project_rows,
)
from privbandit.privacy.randomizers import clearly_inside

Z = 5.0  # CLT tolerance in standard errors


def test_gaussian_shapes_reproducibility_and_noise_law():
    mech = GaussianMechanism.calibrated(1.0, 1e-5, sensitivity=0.5)
    assert mech.sigma == pytest.approx(gaussian_sigma(1.0, 1e-5, 0.5))
    assert mech.noise_multiplier == pytest.approx(mech.sigma / 0.5)
    assert mech.epsilon(1e-5) == pytest.approx(1.0, rel=1e-6)
    entry = mech.ledger_entry()
    assert entry.family == "gaussian" and entry.parameter == pytest.approx(mech.noise_multiplier)
    for shape in [(), (7,), (50, 3), (4, 3, 3)]:
        assert mech.release(np.zeros(shape), rng=1).shape == shape
    a = mech.release(np.ones((20000, 5)), rng=7)
    b = mech.release(np.ones((20000, 5)), rng=7)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a[0], a[1])  # each row gets its own noise
    noise = (a - 1.0).ravel()
    n = noise.size
    assert abs(noise.mean()) <= Z * mech.sigma / math.sqrt(n)
    # Var of the sample variance of a Gaussian is 2 sigma^4 / n.
    assert abs(noise.var() - mech.sigma ** 2) <= Z * math.sqrt(2 / n) * mech.sigma ** 2
    corr = np.corrcoef(a[:, 0], a[:, 1])[0, 1]
    assert abs(corr) <= Z / math.sqrt(a.shape[0])


def test_symmetric_gaussian_is_symmetric_with_iid_upper_triangle():
    d, m = 4, 40000
    mech = SymmetricGaussianMechanism.calibrated(0.5, 1e-6, sensitivity=0.2)
    assert mech.ledger_entry().family == "gaussian"
    base = np.eye(d) * 0.3 + 0.1
    out = mech.release(np.broadcast_to(base, (m, d, d)), rng=3)
    assert out.shape == (m, d, d)
    np.testing.assert_array_equal(out, np.swapaxes(out, -1, -2))  # exactly symmetric
    iu = np.triu_indices(d)
    upper = (out - base)[:, iu[0], iu[1]]  # (m, d(d+1)/2): diagonal and off-diagonal entries
    s = mech.sigma
    np.testing.assert_array_less(np.abs(upper.mean(axis=0)), Z * s / math.sqrt(m))
    np.testing.assert_array_less(np.abs(upper.var(axis=0) - s ** 2), Z * math.sqrt(2 / m) * s ** 2)
    corr = np.corrcoef(upper.T)
    off = corr[~np.eye(corr.shape[0], dtype=bool)]
    assert np.max(np.abs(off)) <= Z / math.sqrt(m)
    # A single matrix works too and is symmetric.
    one = mech.release(base, rng=0)
    np.testing.assert_array_equal(one, one.T)


def test_laplace_mechanism_scale_and_variance():
    mech = LaplaceMechanism.calibrated(0.5, sensitivity=2.0)
    assert mech.scale == pytest.approx(4.0) and mech.pure_epsilon == pytest.approx(0.5)
    assert mech.ledger_entry().parameter == pytest.approx(2.0)  # scale / sensitivity = 1 / epsilon
    noise = mech.release(np.zeros((100000,)), rng=5)
    # Laplace(b): mean 0, variance 2 b^2, E|X| = b; Var|X| = b^2.
    assert abs(noise.mean()) <= Z * math.sqrt(2) * 4.0 / math.sqrt(noise.size)
    assert abs(np.abs(noise).mean() - 4.0) <= Z * 4.0 / math.sqrt(noise.size)


def test_laplace_pair_is_unbiased_with_scale_three_over_epsilon():
    eps = 0.8
    pair = LaplacePair(eps)
    assert pair.mechanism.scale == pytest.approx(3.0 / eps)
    assert pair.ledger_entry().parameter == pytest.approx(1 / eps)
    m = 100000
    x = np.tile([-0.7, 0.0, 0.4, 1.0], m // 4)
    y = np.tile([0.5, 1.0, -1.0, -0.2], m // 4)
    psi, cap_psi = pair.release(x, y, rng=11)
    assert psi.shape == cap_psi.shape == (m,)
    sd = math.sqrt(2) * 3.0 / eps
    for k, (xi, yi) in enumerate(zip([-0.7, 0.0, 0.4, 1.0], [0.5, 1.0, -1.0, -0.2])):
        tol = Z * sd / math.sqrt(m // 4)
        assert abs(psi[k::4].mean() - np.sign(xi) * yi) <= tol
        assert abs(cap_psi[k::4].mean() - abs(xi)) <= tol
    # The two coordinates carry independent noise.
    assert abs(np.corrcoef(psi, cap_psi)[0, 1]) <= Z / math.sqrt(m)


def test_l2_ball_magnitude_closed_forms():
    # d = 1: sqrt(pi) Gamma(1) / Gamma(1/2) = 1, so M = r (e^eps + 1) / (e^eps - 1).
    for eps in (0.1, 1.0, 3.0):
        assert l2_ball_channel_magnitude(eps, 1, 2.0) == pytest.approx(2.0 * (math.exp(eps) + 1) / (math.exp(eps) - 1))
    # General d: M tanh(eps/2) E|z_1| = r for z uniform on the unit sphere
    # (E|z_1| = Gamma(d/2)/(sqrt(pi) Gamma((d+1)/2))).
    for d in (2, 3, 10, 200):
        e_abs = math.exp(special.gammaln(d / 2) - special.gammaln((d + 1) / 2)) / math.sqrt(math.pi)
        assert l2_ball_channel_magnitude(0.7, d) * math.tanh(0.35) * e_abs == pytest.approx(1.0)


@pytest.mark.parametrize("d, eps, radius", [(1, 1.0, 1.0), (3, 0.5, 1.0), (6, 2.0, 0.5)])
def test_l2_ball_channel_unbiased_with_second_moment_m2_over_d(d, eps, radius):
    chan = L2BallChannel(eps, d, radius)
    assert chan.ledger_entry().family == "pure" and chan.ledger_entry().parameter == eps
    big_m = chan.magnitude
    rng = np.random.default_rng(2024 + d)
    inputs = [np.zeros(d), 0.5 * radius * np.eye(d)[0], radius * rng.normal(size=d)]
    inputs[2] *= radius / np.linalg.norm(inputs[2])
    n = 200000
    for v in inputs:
        z = chan.release(np.broadcast_to(v, (n, d)), rng=rng)
        assert z.shape == (n, d)
        np.testing.assert_allclose(np.linalg.norm(z, axis=1), big_m, rtol=1e-12)
        # Unbiased: each coordinate has variance <= E[Z_i^2] = M^2 / d.
        np.testing.assert_array_less(np.abs(z.mean(axis=0) - v), Z * big_m / math.sqrt(d * n))
        # E[Z Z^T] = (M^2/d) I exactly; Var(Z_i Z_j) <= M^4 E[u_i^2 u_j^2] <= 3 M^4 / (d (d + 2)).
        second = z.T @ z / n
        tol = Z * big_m ** 2 * math.sqrt(3 / (d * (d + 2)) / n)
        np.testing.assert_array_less(np.abs(second - big_m ** 2 / d * np.eye(d)), tol)
        # Hence Cov(Z) = (M^2/d) I - v v^T <= (M^2/d) I (the covariance bound).


def test_l2_ball_channel_hemisphere_probability_is_the_privacy_ratio():
    # For ||v|| = r, P(<Z, v> > 0) = e^eps / (1 + e^eps) and for -v it is 1 / (1 + e^eps): ratio e^eps.
    eps, d, n = 1.3, 4, 200000
    chan = L2BallChannel(eps, d)
    v = np.array([0.0, 0.6, 0.0, 0.8])
    p_plus = np.mean(chan.release(np.broadcast_to(v, (n, d)), rng=1) @ v > 0)
    p_minus = np.mean(chan.release(np.broadcast_to(-v, (n, d)), rng=2) @ v > 0)
    pi = math.exp(eps) / (1 + math.exp(eps))
    tol = Z * math.sqrt(0.25 / n)
    assert abs(p_plus - pi) <= tol and abs(p_minus - (1 - pi)) <= tol
    # An interior input: P = (1/2 + ||v||/2r) pi + (1/2 - ||v||/2r)(1 - pi).
    w = 0.25 * v
    p_w = np.mean(chan.release(np.broadcast_to(w, (n, d)), rng=3) @ v > 0)
    assert abs(p_w - (0.625 * pi + 0.375 * (1 - pi))) <= tol


def test_project_rows_projects_onto_the_ball_and_keeps_inside_rows():
    stats = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    with pytest.warns(Warning, match="projected"):
        out = project_rows(stats, 1.0)
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])
    mats = np.stack([np.eye(2) * 5, np.eye(2) * 0.1])
    with pytest.warns(Warning, match="projected"):
        out = project_rows(mats, 1.0)
    np.testing.assert_allclose(np.linalg.norm(out.reshape(2, -1), axis=1), [1.0, math.sqrt(0.02)])


def test_local_randomizer_gaussian_calibration_and_refusals():
    def stat(f, r):
        return f * r[:, None]

    rand = LocalRandomizer.gaussian(stat, 1.5, 0.5, 1e-6, feature_bound=1.5)
    assert rand.channel.sensitivity == pytest.approx(3.0)
    assert rand.channel.sigma == pytest.approx(gaussian_sigma(0.5, 1e-6, 3.0))
    assert rand.ledger_entry() == rand.channel.ledger_entry()
    sym = LocalRandomizer.gaussian(lambda f, r: np.einsum("ni,nj->nij", f, f), 1.0, 1.0, 1e-5, symmetric=True)
    out = sym(np.full((5, 3), 0.2), np.zeros(5), rng=0)
    assert out.shape == (5, 3, 3)
    np.testing.assert_array_equal(out, np.swapaxes(out, 1, 2))
    # Under-calibrated channels are refused: sensitivity below 2R, or an L2-ball of smaller radius.
    with pytest.raises(ValueError, match="not be private"):
        LocalRandomizer(stat, 1.0, GaussianMechanism(sensitivity=1.9, sigma=10.0))
    with pytest.raises(ValueError, match="not be private"):
        LocalRandomizer(stat, 1.0, SymmetricGaussianMechanism(sensitivity=1.0, sigma=10.0))
    with pytest.raises(ValueError, match="radius"):
        LocalRandomizer(stat, 1.0, L2BallChannel(1.0, 3, radius=0.5))
    LocalRandomizer(stat, 1.0, GaussianMechanism(sensitivity=2.0, sigma=10.0))  # exactly 2R is fine


def test_local_randomizer_calibrates_a_laplace_channel_in_l1():
    """A Laplace channel's sensitivity is an L1 diameter, so its radius is L1 and rows are projected in L1.

    x = (1/2, 1/2, 1/2, 1/2) has ||x||_2 = 1 but ||x||_1 = 2: the old guard compared the L1 sensitivity 2 with
    twice the L2 radius 1, passed x and -x unprojected, and the pre-noise outputs differed by 4 in L1.
    """
    mech = LaplaceMechanism(sensitivity=2.0, scale=2.0)
    rand = LocalRandomizer(lambda f, r: f * r[:, None], 1.0, mech)
    x = np.full((1, 4), 0.5)
    with pytest.warns(ClippingWarning, match="projected"):
        a = rand(x, np.ones(1), rng=3)
    with pytest.warns(ClippingWarning, match="projected"):
        b = rand(x, -np.ones(1), rng=3)  # same noise: the difference is the pre-noise difference
    assert np.abs(a - b).sum() <= mech.sensitivity * (1 + 1e-12)
    assert rand.norm == "L1"
    with pytest.raises(ValueError, match="L1 sensitivity"):
        LocalRandomizer(lambda f, r: f * r[:, None], 1.0, LaplaceMechanism(sensitivity=1.9, scale=2.0))


@pytest.mark.parametrize("bound", [1.0, 0.3, 7.0])
def test_ldp_1d_pair_fits_the_l1_ball_of_its_laplace_sensitivity(bound):
    """The centred pair of ldp-1d lies in the L1 ball of radius 3/2 (diameter 3 = the Laplace sensitivity)
    for every valid row, rows at |x| = B included: no projection, no warning."""
    pair = LaplacePair(1.0)
    rand = LocalRandomizer(SignPairStatistic(bound), PAIR_L1_RADIUS, pair.mechanism, bound)
    assert 2 * rand.radius == pair.mechanism.sensitivity == LaplacePair.L1_SENSITIVITY
    rng = np.random.default_rng(0)
    x = bound * np.concatenate([rng.uniform(-1, 1, 500), [1.0, -1.0, 0.0]])[:, None]
    x[:100] = bound * (1 + 1e-13) * np.where(x[:100] < 0, -1.0, 1.0)  # at the bound up to rounding
    stats = SignPairStatistic(bound)(x, rng.choice([-1.0, 1.0], size=x.shape[0]))
    assert np.all(np.abs(stats).sum(axis=1) <= PAIR_L1_RADIUS)
    rand(x, np.ones(x.shape[0]), rng=1)  # a ClippingWarning would be an error


def test_local_randomizer_rows_are_independent_and_centred():
    rand = LocalRandomizer.gaussian(lambda f, r: f * r[:, None], 1.0, 1.0, 1e-5)
    m = 50000
    x = np.tile([0.6, -0.8], (m, 1))
    y = np.full(m, 0.5)
    out = rand(x, y, rng=9)
    s = rand.channel.sigma
    np.testing.assert_array_less(np.abs(out.mean(axis=0) - [0.3, -0.4]), Z * s / math.sqrt(m))
    assert abs(np.corrcoef(out[:-1, 0], out[1:, 0])[0, 1]) <= Z / math.sqrt(m)


def test_local_randomizer_with_l2_ball_channel_is_unbiased():
    d, n = 3, 100000
    chan = L2BallChannel(1.0, d, radius=1.0)
    rand = LocalRandomizer(lambda f, r: f * r[:, None], 1.0, chan)
    x = np.tile([0.0, 0.6, 0.8], (n, 1))
    out = rand(x, np.full(n, -0.5), rng=4)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), chan.magnitude)
    np.testing.assert_array_less(np.abs(out.mean(axis=0) - [0.0, -0.3, -0.4]), Z * chan.magnitude / math.sqrt(d * n))


def test_project_rows_shortcut_returns_what_the_projection_returns():
    """Rows clearly inside the ball skip the projection; near the boundary (within 1e-13 relative) and outside,
    the result equals scale_to_ball's, in L2 and L1, with the warning when a row is projected."""
    from privbandit.privacy.clipping import scale_to_ball

    rng = np.random.default_rng(4)
    for ord_ in (2, 1):
        for rel in (0.5, 1.0 - 1e-11, 1.0 - 1e-13, 1.0, 1.0 + 1e-15, 1.0 + 1e-13, 2.0):
            stats = rng.standard_normal((50, 3, 3))
            flat = stats.reshape(50, -1)
            norms = np.linalg.norm(flat, ord=ord_, axis=1)
            stats = stats / norms[:, None, None] * 1.7 * rel
            expect, over = scale_to_ball(stats.reshape(50, -1), 1.7, ord_)
            if over.any():
                with pytest.warns(ClippingWarning, match="projected"):
                    out = project_rows(stats, 1.7, ord_)
            else:
                out = project_rows(stats, 1.7, ord_)
            np.testing.assert_array_equal(out.reshape(50, -1), expect)
            if rel < 1.0 - 1e-12:
                assert out is stats, "rows clearly inside must take the shortcut"


def test_project_rows_projects_rows_whose_squared_norm_overflows():
    """With a radius whose square overflows (> ~1.3e154) the shortcut is off: a row far outside the ball, whose
    sum of squares is inf too, is still projected onto it (it used to pass unprojected, inf <= inf)."""
    stats = np.array([[1e170, 0.0], [1e100, 0.0]])
    with pytest.warns(ClippingWarning, match="1 local statistic"):
        out = project_rows(stats, 1e155)
    np.testing.assert_array_equal(out, [[1e155, 0.0], [1e100, 0.0]])


def test_the_randomizer_hands_its_statistic_clipped_rows_and_adds_the_channels_noise():
    """The statistic sees features clipped to the feature bound and rewards to [-1, 1] (rows inside as they are,
    one ClippingWarning per clip), and each output is that statistic plus N(0, sigma^2) per entry."""
    seen = []

    def stat(f, r):
        seen.append((f.copy(), r.copy()))
        return f * r[:, None]

    rand = LocalRandomizer.gaussian(stat, 0.8, 1.0, 1e-5, feature_bound=0.8)
    sigma = rand.channel.sigma
    rng = np.random.default_rng(6)
    x = rng.uniform(-1, 1, (40, 4))
    x /= np.linalg.norm(x, axis=1, keepdims=True) * rng.uniform(1.0, 1.5, (40, 1))   # norms in (0.67, 1]
    y = rng.uniform(-1, 1, 40)
    y[0] = 1.5
    with pytest.warns(ClippingWarning) as caught:
        rand(x, y, 0)
    assert {str(w.message).split()[1] for w in caught} >= {"feature", "reward(s)"}
    f, r = seen[-1]
    norms = np.linalg.norm(x, axis=1)
    np.testing.assert_allclose(np.linalg.norm(f, axis=1), np.minimum(norms, 0.8), rtol=1e-12)
    np.testing.assert_array_equal(f[norms <= 0.79], x[norms <= 0.79])
    np.testing.assert_array_equal(r, np.clip(y, -1.0, 1.0))
    # The law of the outputs: one row repeated n times, inside both balls, so the noise is all that varies.
    n = 40000
    row, reward = np.array([0.3, -0.2, 0.1, 0.4]), 0.5
    out = rand(np.tile(row, (n, 1)), np.full(n, reward), 7)
    noise = out - row * reward
    np.testing.assert_array_less(np.abs(noise.mean(axis=0)), Z * sigma / math.sqrt(n))
    np.testing.assert_array_less(np.abs(noise.var(axis=0) - sigma ** 2), Z * math.sqrt(2 / n) * sigma ** 2)
    inside = x[norms <= 0.79]
    np.testing.assert_array_equal(rand(inside, y[1:len(inside) + 1], 3), rand(inside, y[1:len(inside) + 1], 3))


def test_symmetric_gaussian_refuses_asymmetric_input():
    mech = SymmetricGaussianMechanism(sensitivity=1.0, sigma=1.0)
    m = np.eye(3) * 1e3
    m[0, 1] += 2e-6                                   # above 1e-9 * max|M|
    with pytest.raises(ValueError, match="symmetric"):
        mech.release(m, rng=0)
    m[0, 1] = 5e-7                                    # below: symmetrised
    out = mech.release(m, rng=0)
    np.testing.assert_array_equal(out, out.T)


def test_symmetric_noise_has_its_shape_is_exactly_symmetric_and_follows_its_seed():
    """SymPriv's noise for a batch of any size: the requested shape, Z = Z^T exactly, the same draws for the same
    seed, other draws for another seed and for each matrix of a batch; a non-square shape is refused."""
    mech = SymmetricGaussianMechanism(sensitivity=1.0, sigma=1.3)
    for shape in [(3, 3), (2, 5, 5), (4, 1, 1), (0, 3, 3), (7, 10, 10)]:
        out = mech.noise(shape, np.random.default_rng(1))
        assert out.shape == shape
        np.testing.assert_array_equal(out, np.swapaxes(out, -1, -2))
        np.testing.assert_array_equal(out, mech.noise(shape, np.random.default_rng(1)))
        if out.size:
            assert not np.array_equal(out, mech.noise(shape, np.random.default_rng(2)))
        if len(shape) == 3 and shape[0] > 1:
            assert not np.array_equal(out[0], out[1])
    with pytest.raises(ValueError):
        mech.noise((2, 3), 0)


@pytest.mark.parametrize("kind", ["gaussian", "symmetric", "laplace"])
def test_the_randomizer_releases_the_projected_statistic_with_the_channels_noise(kind):
    """Rows whose statistic lies inside, on and beyond the radius: the statistic is projected onto the ball (with
    the warning beyond it) and the output is that projection plus the channel's noise (mean 0; variance sigma^2,
    or 2 b^2 for Laplace; SymPriv symmetric)."""
    n = 20000
    if kind == "symmetric":
        channel = SymmetricGaussianMechanism(sensitivity=2.0, sigma=0.7)
        stat = lambda f, r: f[:, :, None] * f[:, None, :] * r[:, None, None]     # noqa: E731
        var = 0.7 ** 2
    elif kind == "laplace":
        channel = LaplaceMechanism(sensitivity=2.0, scale=1.3)
        stat = lambda f, r: f * r[:, None] / math.sqrt(f.shape[1])               # noqa: E731
        var = 2 * 1.3 ** 2
    else:
        channel = GaussianMechanism(sensitivity=2.0, sigma=0.7)
        stat = lambda f, r: f * r[:, None]                                        # noqa: E731
        var = 0.7 ** 2
    rand = LocalRandomizer(stat, 0.5, channel, feature_bound=1.0)
    unit = np.asarray(stat(np.array([[0.6, 0.8]]), np.ones(1)), dtype=float)[0]
    unit_size = np.abs(unit).sum() if kind == "laplace" else np.linalg.norm(unit)      # ~1, beyond the radius
    for size in (0.4, 0.5, unit_size):                 # the statistic inside, at and beyond the radius 0.5
        x, y = np.tile([0.6, 0.8], (n, 1)), np.full(n, size / unit_size)
        target = unit * (size / unit_size)
        if size > 0.5:
            with pytest.warns(ClippingWarning, match="projected"):
                out = rand(x, y, 5)
            target = target * 0.5 / size
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error" if size < 0.5 else "ignore", ClippingWarning)   # at 0.5: rounding
                out = rand(x, y, 5)
        noise = (out - target).reshape(n, -1)
        if kind == "symmetric":
            np.testing.assert_array_equal(out, np.swapaxes(out, -1, -2))
        np.testing.assert_array_less(np.abs(noise.mean(axis=0)), Z * math.sqrt(var / n))
        # Var of a sample variance: (m4 - sigma^4) / n, m4 = 3 sigma^4 (Gaussian) or 6 b^4 = 1.5 var^2 (Laplace)
        kurt = 5.0 if kind == "laplace" else 2.0
        np.testing.assert_array_less(np.abs(noise.var(axis=0) - var), Z * math.sqrt(kurt / n) * var)


def test_the_randomizer_refuses_nan_statistics_and_asymmetric_matrices():
    """A statistic that returns NaN on clipped rows, or an asymmetric matrix for SymPriv, is refused."""
    gauss = LocalRandomizer(lambda f, r: f * np.nan, 1.0, GaussianMechanism(sensitivity=2.0, sigma=1.0))
    with pytest.raises(ValueError, match="NaN or inf"):
        gauss(np.ones((1, 2)) * 0.1, np.zeros(1), 0)
    skew = LocalRandomizer(lambda f, r: f[:, :, None] * np.array([[0.0, 0.1], [0.0, 0.0]]), 1.0,
                           SymmetricGaussianMechanism(sensitivity=2.0, sigma=1.0))
    with pytest.raises(ValueError, match="symmetric"):
        skew(np.full((1, 2), 0.5), np.zeros(1), 0)


def test_clearly_inside_is_false_on_nan_inf_and_overflow():
    for ord_ in (1, 2):
        assert clearly_inside(np.full((3, 2), 0.1), 1.0, ord_)
        for bad in (np.nan, np.inf, -np.inf, 1e200):
            stats = np.full((3, 2), 0.1)
            stats[1, 0] = bad
            assert not clearly_inside(stats, 1e300, ord_) or (bad == 1e200 and ord_ == 1)


def test_symmetry_gap_check_is_the_scaled_tolerance():
    """max |M - M^T| > 1e-9 max(1, max |M|) is refused, whatever the order in which it is evaluated."""
    mech = SymmetricGaussianMechanism(sensitivity=1.0, sigma=1.0)
    for scale, gap, ok in [(1.0, 0.9e-9, True), (1.0, 1.1e-9, False), (0.01, 1.1e-9, False),
                           (100.0, 0.9e-7, True), (100.0, 1.1e-7, False)]:
        m = np.eye(3) * scale
        m[0, 1] += gap
        if ok:
            np.testing.assert_array_equal(*(lambda o: (o, o.T))(mech.release(m, rng=0)))
        else:
            with pytest.raises(ValueError, match="symmetric"):
                mech.release(m, rng=0)


def test_release_adds_to_the_input_the_noise_its_generator_draws():
    """release(values, rng) = values + noise drawn from rng: Gaussian values + sigma z, SymPriv
    0.5 (M + M^T) + noise(shape) with the same seed (up to rounding), leaving the generator where the draw does."""
    rng = np.random.default_rng(3)
    gauss, sym = GaussianMechanism(2.0, 1.7), SymmetricGaussianMechanism(2.0, 1.3)
    for shape in [(5,), (3, 4), (1, 6, 6), (4, 4), (2, 3, 3, 3), (0, 2, 2)]:
        values = rng.normal(size=shape)
        g1, g2 = np.random.default_rng(1), np.random.default_rng(1)
        np.testing.assert_allclose(gauss.release(values, g1), values + 1.7 * g2.standard_normal(shape),
                                   rtol=1e-15, atol=1e-15)
        assert g1.bit_generator.state == g2.bit_generator.state
        if len(shape) >= 2 and shape[-1] == shape[-2]:
            m = values + np.swapaxes(values, -1, -2) * (1 + 1e-13)
            g1, g2 = np.random.default_rng(1), np.random.default_rng(1)
            expect = 0.5 * (m + np.swapaxes(m, -1, -2)) + sym.noise(shape, g2)
            np.testing.assert_allclose(sym.release(m, g1), expect, rtol=1e-14, atol=1e-14)
            assert g1.bit_generator.state == g2.bit_generator.state


def test_the_symmetry_gap_is_the_max_of_the_difference():
    """SymPriv's check takes max(M - M^T) for max |M - M^T|: M - M^T is exactly antisymmetric in IEEE
    arithmetic, so the two agree, NaN and inf included."""
    rng = np.random.default_rng(0)
    for _ in range(3000):
        d = int(rng.integers(1, 7))
        m = rng.normal(size=(d, d)) * 10.0 ** rng.integers(-300, 300)
        if rng.random() < 0.3:
            m[rng.integers(d), rng.integers(d)] = rng.choice([np.inf, -np.inf, np.nan, -0.0, 1e308, -1e308])
        with np.errstate(invalid="ignore", over="ignore"):
            a, b = float(np.max(np.abs(m - m.T))), float((m - m.T).max())
        assert a == b or (math.isnan(a) and math.isnan(b))
