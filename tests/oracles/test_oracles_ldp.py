"""Algorithm checks of the local-DP oracles: statistics, solvers, spectral iteration, ledger, recovery."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import oracle_dim

from privbandit.infomatrix import f_ldp, u_star
from privbandit.links import logistic_link
from privbandit.oracles import make_oracle
from privbandit.oracles.glm_ldp import GLMGradientStatistic, project_ellipsoid
from privbandit.oracles.iw_ldp import (
    IWRegressionStatistic,
    SpectralStatistic,
    ball_least_squares,
    learn_u_ldp,
    spectral_lambda,
)
from privbandit.oracles.ldp_sgd import ClippedGradientStatistic, ldp_sgd_epochs
from privbandit.privacy import PrivacySpec
from privbandit.privacy.mechanisms import LaplacePair

LDP = ["ldp-1d", "iw-regression-ldp", "iw-fixed-p-ldp", "iw-glm-ldp", "ldp-sgd", "ssp-local"]


def features(n, d, rng, heavy=True):
    x = rng.standard_normal((n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x *= 0.999 * (rng.uniform(0, 1, (n, 1)) ** 2 if heavy else 1.0)
    return x


def linear_data(n, d, rng, theta):
    x = features(n, d, rng)
    y = np.where(rng.random(n) < (1 + x @ theta) / 2, 1.0, -1.0)
    return x, y


# --- statistics and solvers -------------------------------------------------------------------------

def test_statistics_stay_in_their_declared_balls():
    rng = np.random.default_rng(0)
    x = features(500, 4, rng, heavy=False)
    y = rng.uniform(-1, 1, 500)
    a = rng.standard_normal((4, 4))
    u = a @ a.T + 0.01 * np.eye(4)
    vals, vecs = np.linalg.eigh(u)
    spec = SpectralStatistic(u, (vecs * np.sqrt(vals)) @ vecs.T)(x, y)
    assert np.all(np.linalg.norm(spec.reshape(500, -1), axis=1) <= np.linalg.norm(x, axis=1) + 1e-12)  # lem:uxxu
    assert np.allclose(spec, np.swapaxes(spec, 1, 2))
    reg = IWRegressionStatistic(u, 1.0)(x, y)
    assert np.all(np.linalg.norm(reg, axis=1) <= np.sqrt(2) + 1e-12)
    assert np.all(np.linalg.norm(GLMGradientStatistic(u, rng.standard_normal(4) * 10, logistic_link())(x, y),
                                 axis=1) <= 2 + 1e-12)
    assert np.all(np.linalg.norm(ClippedGradientStatistic(rng.standard_normal(4) * 10, 2.0)(x, y), axis=1)
                  <= 3 + 1e-12)
    zero = SpectralStatistic(u, u)(np.zeros((2, 4)), np.zeros(2))
    assert np.all(zero == 0)


def test_ball_least_squares_matches_the_kkt_conditions():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5, 5))
    inside_target = a @ (0.3 * rng.standard_normal(5) / 3)
    assert np.allclose(ball_least_squares(a, inside_target), np.linalg.solve(a, inside_target))
    b = 10 * rng.standard_normal(5)
    theta = ball_least_squares(a, b)
    assert np.isclose(np.linalg.norm(theta), 1.0)
    grad = a.T @ (a @ theta - b)  # KKT: the gradient points inward along theta
    cos = -grad @ theta / (np.linalg.norm(grad) * np.linalg.norm(theta))
    assert cos > 1 - 1e-8
    for _ in range(200):
        v = rng.standard_normal(5)
        v /= max(1.0, np.linalg.norm(v))
        assert np.linalg.norm(a @ v - b) >= np.linalg.norm(a @ theta - b) - 1e-9


def test_project_ellipsoid_is_the_euclidean_projection():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 3))
    u = a @ a.T + 0.1 * np.eye(3)
    v = 5 * rng.standard_normal(3)
    w = project_ellipsoid(v, u)
    assert np.linalg.norm(u @ w) <= 1 + 1e-9
    for _ in range(300):
        c = rng.standard_normal(3)
        c /= np.linalg.norm(u @ c) * rng.uniform(1.0, 3.0)
        assert np.linalg.norm(c - v) >= np.linalg.norm(w - v) - 1e-9
    inside = np.linalg.solve(u, np.array([0.1, 0.0, 0.0]))
    assert np.array_equal(project_ellipsoid(inside, u), inside)


# --- Spectral-Iteration-LDP ---------------------------------------------------------------------------

def test_spectral_lambda_schedule_and_constants():
    u, lam, trace, ledger = learn_u_ldp(features(4000, 2, np.random.default_rng(3)), epsilon=1.0, delta=1e-5,
                                        stages=5, lam=0.3, rng=0)
    assert lam == 0.3
    assert [t["lam"] for t in trace] == pytest.approx([(2 * k + 1) / 11 * 0.3 for k in range(5)])
    assert [t["users"] for t in trace] == [800] * 5
    assert spectral_lambda(100, 4, 2.0, 12, "theory", 0.05) > spectral_lambda(100, 4, 2.0, 4, "practical", 0.05)
    assert ledger.n_records == 4000


def test_spectral_iteration_reaches_the_band_at_large_epsilon():
    """prop:alg-U-LDP: F_LDP(U_K) within [1/2, 2] (here checked on the population of atoms)."""
    rng = np.random.default_rng(4)
    atoms = np.array([[1.0, 0.0], [0.0, 0.05], [0.6, 0.6]]) * 0.999
    probs = np.array([0.05, 0.9, 0.05])
    x = atoms[rng.choice(3, size=40000, p=probs)]
    u, lam, trace, _ = learn_u_ldp(x, epsilon=200.0, delta=1e-5, stages=6, rng=1)
    vals = np.linalg.eigvalsh(f_ldp(u, atoms, probs, lam=lam))
    assert vals[0] >= 0.5 and vals[-1] <= 2.0
    exact = u_star(atoms, probs, lam=lam).matrix
    assert np.linalg.norm(u - exact, 2) <= 0.5 * np.linalg.norm(exact, 2)


def test_spectral_iteration_survives_pure_noise():
    """A tiny budget makes H_k mostly noise: U stays finite and positive definite (PSD floor on H)."""
    x = features(300, 4, np.random.default_rng(5))
    for seed in range(5):
        u, _, trace, _ = learn_u_ldp(x, epsilon=0.01, delta=1e-5, rng=seed)
        vals = np.linalg.eigvalsh(u)
        assert np.all(np.isfinite(u)) and vals[0] > 0


# --- privacy ledger ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", LDP)
def test_each_record_spends_at_most_its_budget_once(name):
    d = oracle_dim(name, 3)
    rng = np.random.default_rng(6)
    x, y = linear_data(700, d, rng, np.full(d, 0.4 / np.sqrt(d)))
    spec = PrivacySpec("ldp", 0.7, 1e-6)
    fit = make_oracle(name, privacy=spec).start(700, dim=d, rng=0)
    for i in range(0, 700, 90):
        fit.add(x[i:i + 90], y[i:i + 90])
    fit.result()
    eps = fit.ledger.check(spec)
    assert eps <= 0.7 * (1 + 1e-9)
    assert all(r.kind == "local" for r in fit.ledger.releases)
    touched = np.zeros(700, int)
    for r in fit.ledger.releases:
        touched[r.start:r.stop] += 1
    assert np.all(touched == 1)  # one release per user: the users of stages are disjoint


def test_fixed_p_with_public_sample_is_pure_ldp():
    rng = np.random.default_rng(7)
    x, y = linear_data(500, 3, rng, np.array([0.3, 0.0, -0.2]))
    oracle = make_oracle("iw-fixed-p-ldp", epsilon=0.5, delta=1e-6, public_features=features(300, 3, rng))
    fit = oracle.start(500, dim=3, rng=0)
    fit.add(x, y)
    fit.result()
    assert {r.entry.family for r in fit.ledger.releases} == {"pure"}
    assert fit.ledger.guarantee(1e-12) == pytest.approx(0.5)


def test_ldp_1d_uses_the_laplace_pair_at_epsilon():
    fit = make_oracle("ldp-1d", epsilon=0.8).start(50, dim=1, rng=0)
    fit.add(np.linspace(-0.9, 0.9, 50)[:, None], np.ones(50))
    fit.result()
    (release,) = fit.ledger.releases
    assert release.entry.family == "laplace" and release.entry.parameter == pytest.approx(1 / 0.8)
    assert LaplacePair(0.8).mechanism.scale == pytest.approx(3 / 0.8)


# --- recovery, widths, robustness -------------------------------------------------------------------------

@pytest.mark.parametrize("name", LDP)
def test_large_epsilon_recovers_theta(name):
    d = oracle_dim(name, 3)
    rng = np.random.default_rng(8)
    theta = np.array([0.5]) if d == 1 else np.array([0.5, -0.3, 0.2])
    x, y = linear_data(20000, d, rng, theta)
    est = make_oracle(name, epsilon=1000.0, delta=1e-5).fit(x, y, rng=1)
    probe = features(2000, d, rng)
    err = np.mean(np.abs(probe @ (est.theta - theta)))
    assert err < 0.06, err


def test_glm_recovers_a_logistic_model():
    rng = np.random.default_rng(9)
    theta = np.array([0.6, -0.4])
    link = logistic_link(2.0)
    x = features(20000, 2, rng, heavy=False)
    y = np.where(rng.random(20000) < (1 + link(x @ theta)) / 2, 1.0, -1.0)
    for constants in ("practical", "theory"):
        est = make_oracle("iw-glm-ldp", epsilon=1000.0, delta=1e-5, constants=constants,
                          **({"sgd_steps": 2000} if constants == "theory" else {})).fit(x, y, link=link, rng=2)
        assert np.linalg.norm(est.theta - theta) < 0.15, (constants, est.theta)


@pytest.mark.parametrize("name", ["iw-regression-ldp", "iw-fixed-p-ldp", "iw-glm-ldp"])
def test_theory_widths_are_wider_than_practical(name):
    rng = np.random.default_rng(10)
    x, y = linear_data(8000, 3, rng, np.array([0.3, 0.2, 0.1]))
    probe = features(500, 3, rng)
    kw = {"sgd_steps": 300} if name == "iw-glm-ldp" else {}
    w = {c: make_oracle(name, epsilon=1.0, delta=1e-5, constants=c, **kw).fit(x, y, rng=0).width(probe).mean()
         for c in ("practical", "theory")}
    assert w["theory"] > 1.5 * w["practical"]


@pytest.mark.parametrize("name", LDP)
def test_no_nan_on_degenerate_epochs(name):
    d = oracle_dim(name, 3)
    oracle = make_oracle(name, epsilon=0.5, delta=1e-5)
    for n_rounds, rows in ((1, 1), (5, 0), (9, 3), (40, 40)):
        for seed in range(3):
            fit = oracle.start(n_rounds, dim=d, rng=seed)
            if rows:
                fit.add(np.zeros((rows, d)), np.zeros(rows))  # all-zero features: ||U phi|| = 0 everywhere
            est = fit.result()
            assert np.all(np.isfinite(est.theta))
            if name in ("ldp-1d", "iw-regression-ldp", "iw-glm-ldp"):  # estimators constrained to the unit ball
                assert np.linalg.norm(est.theta) <= 1 + 1e-9
            assert np.all(np.isfinite(est.width(np.eye(d))))


def test_two_sided_quantile_is_accurate_for_tiny_confidences():
    from scipy import stats

    from privbandit.oracles.base import two_sided_quantile

    assert two_sided_quantile(0.05) == pytest.approx(1.959964, abs=1e-6)
    for c in (1e-3, 1e-10, 1e-20, 1e-300):
        z = two_sided_quantile(c)
        assert np.isfinite(z)
        assert 2 * stats.norm.sf(z) == pytest.approx(c, rel=1e-9)


@pytest.mark.parametrize("name, epsilon, n", [("ldp-1d", 8.0, 20000), ("iw-fixed-p-ldp", 1.0, 400),
                                               ("iw-glm-ldp", 1.0, 400)])
def test_tiny_confidence_gives_a_finite_wider_width(name, epsilon, n):
    # these practical widths use the Gaussian quantile at `confidence` (1 - confidence/2 rounds to 1 below
    # ~1e-16); ldp-1d needs enough users for its width to stay below the cap of 2
    d = oracle_dim(name, 3)
    x, y = linear_data(n, d, np.random.default_rng(0), np.full(d, 0.3))
    widths = []
    for c in (0.05, 1e-300):
        est = make_oracle(name, epsilon=epsilon, delta=1e-5, confidence=c).fit(x, y, rng=0)
        widths.append(est.width_scale)
    assert np.isfinite(widths[1]) and widths[1] > widths[0]


def test_bad_arguments_raise_value_errors():
    with pytest.raises(ValueError, match="constants"):
        make_oracle("iw-regression-ldp", epsilon=1.0, constants="paper")
    with pytest.raises(ValueError, match="dim=1"):
        make_oracle("ldp-1d", epsilon=1.0).start(10, dim=2)
    with pytest.raises(ValueError, match="public_features"):
        make_oracle("iw-fixed-p-ldp", epsilon=1.0, public_features=np.ones((5, 2))).start(10, dim=3)
    for name in ("iw-glm-ldp", "iw-regression-ldp", "iw-fixed-p-ldp"):   # the paper's two steps both need users
        for fraction in (0.0, 1.0):
            with pytest.raises(ValueError, match=r"u_fraction must be in \(0.0, 1.0\)"):
                make_oracle(name, epsilon=1.0, u_fraction=fraction)
        assert make_oracle(name, epsilon=1.0, u_fraction=0.75).u_fraction == 0.75
    with pytest.raises(ValueError, match="privacy models"):
        make_oracle("ssp-local", epsilon=1.0, model="jdp")
    with pytest.raises(ValueError, match="stages"):
        make_oracle("iw-regression-ldp", epsilon=1.0, stages=0)


def test_ldp_sgd_epoch_count_follows_the_cube_root():
    k1 = ldp_sgd_epochs(2 ** 12, 1.0, 1e-5, "practical", 0.05)
    k2 = ldp_sgd_epochs(2 ** 15, 1.0, 1e-5, "practical", 0.05)
    assert k2 == pytest.approx(2 * k1, abs=1)


# --- statistical checks (small) --------------------------------------------------------------------------

@pytest.mark.slow
def test_ldp_1d_beats_ssp_when_second_moment_is_small():
    """lem:1d-LDP vs prop:OLS-fail-local-gen: x = +-0.1, E|x| = 0.1 but E[x^2] = 0.01."""
    errs = {"ldp-1d": [], "ssp-local": []}
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        x = 0.1 * rng.choice([-1.0, 1.0], 2 ** 15)[:, None]
        y = np.where(rng.random(2 ** 15) < (1 + 0.5 * x[:, 0]) / 2, 1.0, -1.0)
        for name in errs:
            est = make_oracle(name, epsilon=1.0, delta=1e-6).fit(x, y, rng=seed)
            errs[name].append(min(abs(est.theta[0] - 0.5), 2.0))
    assert np.mean(errs["ssp-local"]) > 2 * np.mean(errs["ldp-1d"])


@pytest.mark.slow
def test_iw_regression_practical_width_covers_fresh_features():
    covered = []
    for seed in range(4):
        rng = np.random.default_rng(200 + seed)
        theta = np.array([0.5, -0.4, 0.3])
        x, y = linear_data(2 ** 14, 3, rng, theta)
        est = make_oracle("iw-regression-ldp", epsilon=1.0, delta=1e-5).fit(x, y, rng=seed)
        probe = features(2000, 3, rng)
        covered.append(np.mean(np.abs(probe @ (est.theta - theta)) <= est.width(probe)))
    assert np.mean(covered) >= 0.95


def test_row_norms_and_spectral_statistic_are_the_old_expressions_bit_for_bit():
    """row_norms is np.linalg.norm(axis=1) without its dispatch; the spectral statistic (which no longer
    builds the unit directions it did not use) returns what the old expression returned, zero rows too."""
    from privbandit.oracles.iw_ldp import SpectralStatistic, inverse_norms, row_norms, unit_directions

    rng = np.random.default_rng(3)
    for m, d in [(1, 10), (1, 3), (7, 3), (40, 10), (0, 4)] * 3:
        ux = rng.standard_normal((m, d)) * rng.choice([1e-200, 1e-3, 1.0, 1e150], size=(m, 1))
        if m and rng.random() < 0.5:
            ux[0] = 0.0                   # the zero row (inverse 0), alone when m = 1
        np.testing.assert_array_equal(inverse_norms(row_norms(ux)), np.divide(1.0, np.linalg.norm(ux, axis=1),
                                      out=np.zeros(m), where=np.linalg.norm(ux, axis=1) > 0))
        np.testing.assert_array_equal(row_norms(ux), np.linalg.norm(ux, axis=1))
        norms = np.linalg.norm(ux, axis=1)
        inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        dirs, got = unit_directions(ux)
        np.testing.assert_array_equal(dirs, ux * inv[:, None])
        np.testing.assert_array_equal(got, norms)
        a = rng.standard_normal((d, d))
        u = a @ a.T + np.eye(d)
        w, v = np.linalg.eigh(u)
        stat = SpectralStatistic(u, (v * np.sqrt(w)) @ v.T)
        x = rng.standard_normal((m, d))
        if m:
            x[0] = 0.0
        n_old = np.linalg.norm(x @ u, axis=1)
        inv_old = np.divide(1.0, n_old, out=np.zeros_like(n_old), where=n_old > 0)
        vx = x @ stat.u_half
        np.testing.assert_array_equal(stat(x, np.zeros(m)), (vx * inv_old[:, None])[:, :, None] * vx[:, None, :])


def test_statistics_clip_as_np_clip_does():
    """The gradient statistics clip predictions with maximum/minimum: np.clip's values, -0.0 and NaN too."""
    theta = np.array([3.0, -0.0, np.nan])
    x = np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.1, 0.0, 0.0], [-0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    y = np.array([0.5, -0.5, 0.0, 0.0, 1.0])
    stat = ClippedGradientStatistic(np.where(np.isnan(theta), 0.0, theta), 2.0)
    pred = np.clip(x @ stat.theta, -2.0, 2.0)
    np.testing.assert_array_equal(stat(x, y), x * (pred - y)[:, None])
    rng = np.random.default_rng(2)
    u = np.eye(3) * 2.0
    w = rng.standard_normal(3) * 10
    link = logistic_link()
    glm = GLMGradientStatistic(u, w, link)
    xs = rng.standard_normal((30, 3))
    ux = xs @ u
    norms = np.linalg.norm(ux, axis=1)
    dirs = ux * (1.0 / norms)[:, None]
    pred = np.clip(link(ux @ w), -1.0, 1.0)
    np.testing.assert_array_equal(glm(xs, y.repeat(6)), dirs * (pred - y.repeat(6))[:, None])
