"""Context families: shapes, bounds, exact second moments against samples, and each family's defining property."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import trapezoid  # not np.trapezoid: numpy < 2.0 lacks it

from privbandit.envs import FAMILIES, family_names, make_family
from privbandit.envs.contexts import HeavyTailed, clipped_pareto_moment

ALL = family_names()


def test_all_six_families_are_named():
    assert set(ALL) == {"isotropic", "spiky", "rare-direction", "heavy-tailed", "heavy-tailed-direction", "low-rank"}
    assert all(FAMILIES[name].name == name for name in ALL)


@pytest.mark.parametrize("name", ALL)
def test_sample_shape_bound_and_seeding(name):
    fam = make_family(name, dim=6, n_arms=3, bound=2.0)
    x = fam.sample(500, 1)
    assert x.shape == (500, 3, 6) and x.dtype == np.float64
    assert np.linalg.norm(x, axis=2).max() <= 2.0
    assert np.abs(x).max() <= 2.0
    assert np.array_equal(x, fam.sample(500, 1))
    assert not np.array_equal(x, fam.sample(500, 2))
    assert fam.sample(0, 1).shape == (0, 3, 6)
    u = fam.theta_direction(0)
    assert u.shape == (6,) and np.linalg.norm(u) == pytest.approx(1.0)


@pytest.mark.parametrize("name", ALL)
def test_exact_second_moment_matches_the_sample(name):
    fam = make_family(name, dim=5, n_arms=2, bound=1.5)
    x = fam.sample(40_000, 3).reshape(-1, 5)
    prods = x[:, :, None] * x[:, None, :]
    emp = prods.mean(axis=0)
    se = prods.std(axis=0) / np.sqrt(len(x))
    exact = fam.second_moment()
    assert np.allclose(exact, exact.T)
    assert np.all(np.abs(emp - exact) <= 6 * se + 1e-9), np.abs(emp - exact).max()


_Q = np.linalg.qr(np.random.default_rng(0).standard_normal((5, 5)))[0]


@pytest.mark.parametrize("name, params", [
    ("rare-direction", {"direction": [1.0, 1.0, 0.0, 0.0, 2.0], "rho": 0.2}),
    ("heavy-tailed-direction", {"direction": [0.0, 3.0, 0.0, 4.0, 0.0]}),
    ("low-rank", {"rank": 2, "basis": _Q[:, :2], "noise_level": 0.3}),
    ("spiky", {"basis": _Q, "mass": 0.7}),
])
def test_rotated_families_keep_exact_moments_and_bounds(name, params):
    fam = make_family(name, dim=5, n_arms=2, bound=1.5, **params)
    x = fam.sample(40_000, 9).reshape(-1, 5)
    assert np.linalg.norm(x, axis=1).max() <= 1.5
    prods = x[:, :, None] * x[:, None, :]
    se = prods.std(axis=0) / np.sqrt(len(x))
    assert np.all(np.abs(prods.mean(axis=0) - fam.second_moment()) <= 6 * se + 1e-9)


def test_second_moment_check_has_power():
    # a family whose claimed moment is off by 10% on one entry must fail the same comparison
    fam = make_family("isotropic", dim=5, n_arms=2, bound=1.5)
    x = fam.sample(40_000, 3).reshape(-1, 5)
    wrong = fam.second_moment()
    wrong[0, 0] *= 1.1
    prods = x[:, :, None] * x[:, None, :]
    se = prods.std(axis=0) / np.sqrt(len(x))
    assert np.any(np.abs(prods.mean(axis=0) - wrong) > 6 * se)


def test_heavy_tailed_short_features_and_tail_reaching_b():
    b = 2.0
    fam = make_family("heavy-tailed", dim=4, n_arms=5, bound=b, tail=2.0, scale=0.05)
    norms = np.linalg.norm(fam.sample(40_000, 4), axis=2).ravel() / b
    # exact radius moments, checked against the sample
    for k in (1, 2):
        m = fam.radius_moment(k)
        se = np.std(norms ** k) / np.sqrt(norms.size)
        assert abs(np.mean(norms ** k) - m) <= 6 * se
    # E||phi||^2 << B E||phi|| (ratio about the scale), while isotropic has ratio 1
    ratio = fam.radius_moment(2) / fam.radius_moment(1)
    assert ratio < 0.2
    assert np.mean(norms ** 2) / np.mean(norms) < 0.2
    iso = np.linalg.norm(make_family("isotropic", dim=4, bound=b).sample(1000, 0), axis=2) / b
    assert np.mean(iso ** 2) / np.mean(iso) == pytest.approx(1.0)
    # polynomial tail: P(s > r) = (scale / r)^tail, and an atom at B of mass scale^tail
    for r in (0.1, 0.3):
        p = (0.05 / r) ** 2
        assert abs(np.mean(norms > r) - p) <= 5 * np.sqrt(p * (1 - p) / norms.size)
    p_top = 0.05 ** 2
    assert abs(np.mean(norms >= 1 - 1e-9) - p_top) <= 5 * np.sqrt(p_top / norms.size)
    assert np.median(norms) < 0.1


def test_clipped_pareto_moment_formula():
    # closed form against a fine numerical integral of P(s^k > u)
    for tail, scale, k in ((2.0, 0.05, 2), (1.5, 0.1, 1), (3.0, 0.2, 2), (2.0, 0.05, 1)):
        r = np.linspace(0, 1, 2_000_001)
        surv = np.where(r < scale, 1.0, (scale / np.maximum(r, scale)) ** tail)
        integral = trapezoid(k * r ** (k - 1) * surv, r)
        assert clipped_pareto_moment(k, tail, scale) == pytest.approx(integral, rel=1e-4)
    assert clipped_pareto_moment(2, 2.0, 1.0) == 1.0
    assert HeavyTailed(dim=3, scale=1.0).radius_moment(1) == 1.0


def test_heavy_tailed_direction_only_e_is_short():
    fam = make_family("heavy-tailed-direction", dim=4, n_arms=2, bound=1.0, mix=0.3, scale=0.05)
    x = fam.sample(30_000, 5).reshape(-1, 4)
    e = fam.direction
    on_e = np.abs(x @ e) > 0
    assert abs(on_e.mean() - 0.3) <= 5 * np.sqrt(0.3 * 0.7 / len(x))
    assert np.allclose(np.linalg.norm(x[~on_e], axis=1), 1.0)  # off e: full norm, orthogonal to e
    assert np.allclose(x[on_e] - np.outer(x[on_e] @ e, e), 0.0)  # e-features lie on e
    proj = x @ e
    assert np.mean(proj ** 2) < 0.2 * np.mean(np.abs(proj))  # E<phi,e>^2 << B E|<phi,e>|
    assert abs(np.mean(np.sign(proj[on_e]))) < 0.05  # symmetric signs
    theta = fam.theta_direction(1)
    assert (theta @ e) ** 2 == pytest.approx(0.5)


def test_rare_direction_appears_with_probability_rho():
    rho, b = 0.02, 1.5
    fam = make_family("rare-direction", dim=5, n_arms=4, bound=b, rho=rho, direction=[1, 1, 0, 0, 0])
    e = np.array([1, 1, 0, 0, 0]) / np.sqrt(2)
    x = fam.sample(25_000, 6).reshape(-1, 5)
    rare = np.all(np.isclose(x, b * e), axis=1)
    assert abs(rare.mean() - rho) <= 5 * np.sqrt(rho * (1 - rho) / len(x))
    assert np.allclose(x[~rare] @ e, 0.0)  # the rest lives in e-perp
    assert np.allclose(np.linalg.norm(x, axis=1), b)
    assert np.linalg.eigvalsh(fam.second_moment())[0] == pytest.approx(rho * b ** 2)
    assert (fam.theta_direction(0) @ e) ** 2 == pytest.approx(0.5)  # theta* values the rare direction


def test_spiky_is_zero_or_b_with_the_chosen_spectrum():
    b = 2.0
    spectrum = np.array([1.0, 0.5, 0.25, 0.05])
    fam = make_family("spiky", dim=4, n_arms=3, bound=b, spectrum=spectrum)
    x = fam.sample(30_000, 7).reshape(-1, 4)
    norms = np.linalg.norm(x, axis=1)
    assert np.all(np.isclose(norms, 0.0) | np.isclose(norms, b))
    for j in range(4):
        p = spectrum[j] / b ** 2
        freq = np.mean(np.isclose(x[:, j], b))
        assert abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / len(x))
    p0 = 1 - spectrum.sum() / b ** 2
    assert abs(np.mean(np.isclose(norms, 0.0)) - p0) <= 5 * np.sqrt(p0 * (1 - p0) / len(x))
    pts, probs = fam.atoms()
    assert probs.sum() == pytest.approx(1.0)
    assert np.allclose((pts * probs[:, None]).T @ pts, fam.second_moment())
    # the geometric default: condition number and full mass (never zero)
    geo = make_family("spiky", dim=5, bound=1.0, condition=50.0)
    rho = np.linalg.eigvalsh(geo.second_moment())
    assert rho[-1] / rho[0] == pytest.approx(50.0)
    assert np.all(np.linalg.norm(geo.sample(2000, 0), axis=2) > 0.5)


def test_low_rank_leak_is_the_noise_level():
    fam = make_family("low-rank", dim=6, n_arms=2, bound=1.0, rank=2, noise_level=0.1)
    x = fam.sample(5000, 8).reshape(-1, 6)
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0)
    assert np.allclose(np.linalg.norm(x[:, 2:], axis=1), 0.1)
    vals = np.linalg.eigvalsh(fam.second_moment())
    assert vals[0] == pytest.approx(0.01 / 4) and vals[-1] == pytest.approx(0.99 / 2)


@pytest.mark.parametrize("name, params, match", [
    ("nope", {}, "family must be one of"),
    ("isotropic", {"rho": 0.1}, "unknown parameter"),
    ("spiky", {"condition": 0.5}, "condition"),
    ("spiky", {"mass": 0.0}, "mass"),
    ("spiky", {"spectrum": [2.0, 0, 0, 0]}, "spectrum"),
    ("spiky", {"spectrum": [-0.1, 0.1, 0, 0]}, "spectrum"),
    ("spiky", {"basis": np.ones((4, 4))}, "orthonormal"),
    ("rare-direction", {"rho": 0.0}, "rho"),
    ("rare-direction", {"rho": 1.0}, "rho"),
    ("rare-direction", {"direction": [0, 0, 0, 0]}, "direction"),
    ("heavy-tailed", {"tail": 0.0}, "tail"),
    ("heavy-tailed", {"scale": 1.5}, "scale"),
    ("heavy-tailed-direction", {"mix": 1.0}, "mix"),
    ("low-rank", {"rank": 4}, "rank"),
    ("low-rank", {"noise_level": 1.0}, "noise_level"),
])
def test_bad_parameters_raise_clear_errors(name, params, match):
    with pytest.raises(ValueError, match=match):
        make_family(name, dim=4, n_arms=2, bound=1.0, **params)


def test_bad_sizes_raise():
    with pytest.raises(ValueError, match="dim"):
        make_family("rare-direction", dim=1)
    with pytest.raises(ValueError, match="bound"):
        make_family("isotropic", dim=3, bound=0.0)
    with pytest.raises(ValueError, match="n_arms"):
        make_family("isotropic", dim=3, n_arms=0)
    with pytest.raises(ValueError, match="n must be"):
        make_family("isotropic", dim=3).sample(-1, 0)
