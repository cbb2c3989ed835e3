"""Algorithm-specific checks of the joint/central-DP oracles (iw_jdp, glm_jdp, dp_sgd, ssp)."""

from __future__ import annotations

import numpy as np
import pytest

import privbandit  # noqa: F401
from privbandit.infomatrix import f_dp, w_star
from privbandit.links import identity_link, logistic_link
from privbandit.oracles import dp_sgd as dp_sgd_mod
from privbandit.oracles import iw_jdp, make_oracle
from privbandit.oracles import ssp as ssp_mod
from privbandit.oracles.glm_jdp import link_residual_bound, solve_iw_erm, trust_region_step
from privbandit.privacy import GaussianMechanism, SymmetricGaussianMechanism

# A discrete, badly conditioned distribution (so W* is exact): short features in most directions,
# one direction seen rarely but at full norm.
ATOMS = np.vstack([0.1 * np.eye(4), np.eye(4)[-1:]])
PROBS = np.array([0.3, 0.3, 0.3, 0.05, 0.05])
THETA = np.array([0.5, -0.3, 0.2, 0.7]) / np.linalg.norm([0.5, -0.3, 0.2, 0.7])


def _sample(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = ATOMS[rng.choice(len(PROBS), size=n, p=PROBS)]
    y = np.where(rng.random(n) < 0.5 * (1 + x @ THETA), 1.0, -1.0)
    return x, y


def test_iw_regression_recovers_theta_within_width_near_nonprivate() -> None:
    oracle = make_oracle("iw-regression-dp", epsilon=1e6, delta=1e-5)
    x, y = _sample(2 ** 17, seed=0)
    est = oracle.fit(x, y, rng=1)
    errors = np.abs(ATOMS @ (est.theta - THETA))
    widths = est.width(ATOMS)
    assert np.all(errors <= widths), (errors, widths)
    assert np.linalg.norm(est.theta - THETA) < 0.15
    # the width is c lambda ||W phi|| with the learned W
    np.testing.assert_allclose(widths, est.width_scale * np.linalg.norm(ATOMS @ est.width_matrix.T, axis=1))
    assert est.width_scale == pytest.approx(iw_jdp.regression_practical_width(x.shape[1]) * est.info["lam"])


def test_spectral_dp_approaches_w_star_as_n_grows() -> None:
    lam, gamma = 0.05, 0.5
    target = w_star(ATOMS, PROBS, gamma=gamma, lam=lam).matrix
    errs = []
    for n in (2 ** 10, 2 ** 16):
        oracle = make_oracle("spectral-dp", epsilon=1e6, delta=1e-5, lam=lam, gamma=gamma, n_stages=8)
        x, y = _sample(n, seed=n)
        est = oracle.fit(x, y, rng=2)
        assert np.all(est.theta == 0)
        errs.append(np.linalg.norm(est.width_matrix - target, 2) / np.linalg.norm(target, 2))
    assert errs[1] < errs[0]
    assert errs[1] < 0.05
    # the learned W solves F_DP(W) ~ I (the band of prop:JDP-W)
    vals = np.linalg.eigvalsh(f_dp(est.width_matrix, ATOMS, PROBS, gamma=gamma, lam=lam))
    assert 0.9 < vals[0] <= vals[-1] < 1.1


class _Capture:
    """Record (statistic, sensitivity) of every mechanism release, without changing the result."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[np.ndarray, float, str]] = []
        for cls in (GaussianMechanism, SymmetricGaussianMechanism):
            original = cls.release

            def release(mech, values, rng=None, _orig=original, _name=cls.__name__):
                self.calls.append((np.array(values, dtype=float), mech.sensitivity, _name))
                return _orig(mech, values, rng)

            monkeypatch.setattr(cls, "release", release)


def _neighbours(n: int, dim: int, index: int, seed: int = 0) -> tuple[tuple, tuple]:
    """Two datasets that differ in row ``index`` only, the changed row at the extremes (norm B, |y| = 1)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dim))
    x *= (0.05 + 0.3 * rng.random(n) / np.linalg.norm(x, axis=1))[:, None]
    y = rng.choice([-1.0, 1.0], size=n)
    x2, y2 = x.copy(), y.copy()
    x[index] = np.eye(dim)[0]
    y[index] = 1.0
    x2[index] = -np.eye(dim)[1]
    y2[index] = -1.0
    return (x, y), (x2, y2)


@pytest.mark.parametrize("name, kwargs", [
    ("iw-regression-dp", {}), ("spectral-dp", {}), ("iw-glm-dp", {}), ("ssp", {}), ("dp-sgd", {}),
    ("iw-regression-dp", dict(constants="theory")),
])
@pytest.mark.parametrize("index", [3, 150])
def test_statistics_move_within_declared_sensitivity(monkeypatch, name, kwargs, index) -> None:
    """Every released statistic moves by at most its declared sensitivity between neighbouring datasets.

    The W stages are replayed with the same noise (same seed), so later stages see the same W; the changed
    row sits in the first W stage (index 3) or in the last, regression stage (index 150).
    """
    n, d = 160, 3
    d1, d2 = _neighbours(n, d, index)
    runs = []
    for x, y in (d1, d2):
        cap = _Capture(monkeypatch)
        make_oracle(name, epsilon=1.0, delta=1e-5, **kwargs).fit(x, y, rng=5)
        runs.append(cap.calls)
        monkeypatch.undo()
    assert len(runs[0]) == len(runs[1]) >= 1
    moved = False
    for (a, sens_a, kind), (b, sens_b, _) in zip(*runs):
        assert sens_a == sens_b
        diff = np.linalg.norm(a - b)  # Frobenius for matrices
        assert diff <= sens_a * (1 + 1e-9), (kind, diff, sens_a)
        moved |= diff > 1e-3 * sens_a
        if diff > 1e-12:  # stages after the changed row see different W: stop comparing there
            break
    assert moved  # the changed row did move a statistic (the test has power)


def test_noise_multiplier_does_not_depend_on_constants() -> None:
    x, y = _sample(4096, seed=3)
    entries = {}
    for constants in ("practical", "theory"):
        fit = make_oracle("iw-regression-dp", epsilon=0.5, delta=1e-6, constants=constants).start(4096, dim=4, rng=0)
        fit.add(x, y)
        fit.result()
        entries[constants] = {r.entry.parameter for r in fit.ledger.releases}
    assert entries["practical"] == entries["theory"]
    assert len(entries["practical"]) == 1


def test_theory_widths_wider_than_practical() -> None:
    x, y = _sample(2 ** 14, seed=4)
    w = {c: make_oracle("iw-regression-dp", epsilon=1.0, delta=1e-5, constants=c).fit(x, y, rng=0).width(ATOMS)
         for c in ("practical", "theory")}
    assert np.all(w["theory"] > 3 * w["practical"])


@pytest.mark.parametrize("name", ["iw-regression-dp", "spectral-dp", "iw-fixed-p-dp", "ssp", "dp-sgd", "iw-glm-dp"])
def test_each_record_spends_the_full_budget_exactly_once(name: str) -> None:
    kwargs = dict(features=ATOMS, weights=PROBS) if name == "iw-fixed-p-dp" else {}
    oracle = make_oracle(name, epsilon=0.7, delta=1e-6, **kwargs)
    x, y = _sample(1000, seed=5)
    fit = oracle.start(1000, dim=4, rng=0)
    fit.add(x, y)
    fit.result()
    per_record = [fit.ledger.record_epsilon(i, 1e-6) for i in range(0, 1000, 37)]
    np.testing.assert_allclose(per_record, 0.7, rtol=1e-6)
    if name == "iw-glm-dp":  # the ERM users are in two releases (H~ and w~), split so they compose to epsilon
        labels = [r.label for r in fit.ledger.releases if r.stop == 1000]
        assert len(labels) == 2


def test_paper_calibration_is_also_within_budget() -> None:
    for name in ("iw-regression-dp", "iw-glm-dp", "ssp"):
        fit = make_oracle(name, epsilon=0.5, delta=1e-5, calibration="paper").start(800, dim=4, rng=0)
        x, y = _sample(800, seed=6)
        fit.add(x, y)
        fit.result()
        assert fit.ledger.check(fit.oracle.privacy) <= 0.5


def test_fixed_p_uses_w_star_and_covers() -> None:
    oracle = make_oracle("iw-fixed-p-dp", epsilon=1.0, delta=1e-5, features=ATOMS, weights=PROBS)
    n = 2 ** 16
    lam, gamma = oracle.lam_gamma(n)
    target = w_star(ATOMS, PROBS, gamma=gamma, lam=lam).matrix
    covered = []
    for seed in range(20):
        x, y = _sample(n, seed=100 + seed)
        est = oracle.fit(x, y, rng=seed)
        np.testing.assert_allclose(est.width_matrix, target, rtol=1e-6, atol=1e-8)
        covered.append(np.abs(ATOMS @ (est.theta - THETA)) <= est.width(ATOMS))
    assert np.mean(covered) >= 0.95


def test_erm_identity_link_matches_closed_form() -> None:
    rng = np.random.default_rng(0)
    d, n = 4, 500
    u = rng.standard_normal((n, d)) * 0.3
    wts = 1 / (1 + 0.1 * np.linalg.norm(u, axis=1))
    y = rng.uniform(-1, 1, n) * 0.2
    s = (u * wts[:, None]).T @ u / n
    a = s + 0.3 * np.eye(d)
    res = solve_iw_erm(u, wts, y, identity_link(), a, s, np.eye(d), 1e-8, n=n)
    b = u.T @ (wts * y) / n
    np.testing.assert_allclose(res.w, np.linalg.solve(a, b), atol=1e-9)
    assert res.certified and res.iterations <= 2


def test_erm_logistic_is_certified_and_stationary() -> None:
    rng = np.random.default_rng(1)
    d, n = 3, 800
    u = rng.standard_normal((n, d)) * 0.4
    link = logistic_link(2.0, 1.0)
    y = np.where(rng.random(n) < 0.5 * (1 + link(u @ np.array([0.5, -0.5, 0.2]))), 1.0, -1.0)
    wts = 1 / (1 + 0.2 * np.linalg.norm(u, axis=1))
    s = (u * wts[:, None]).T @ u / n
    a = s + 0.2 * np.eye(d)
    res = solve_iw_erm(u, wts, y, link, a, s, np.eye(d), 1e-7, n=n)
    assert res.certified
    grad = u.T @ ((link(u @ res.w) - y) * wts) / n + link.mu * ((a - s) @ res.w)
    if np.linalg.norm(res.w) < 0.999:  # interior optimum: the gradient vanishes
        assert np.linalg.norm(grad) < 1e-5


def test_trust_region_step_on_the_boundary() -> None:
    q, evals = np.eye(2), np.array([1.0, 2.0])
    theta = trust_region_step(q, evals, np.array([-10.0, 0.0]))
    np.testing.assert_allclose(theta, [1.0, 0.0], atol=1e-10)
    theta = trust_region_step(q, evals, np.array([-0.5, 0.5]))
    np.testing.assert_allclose(theta, [0.5, -0.25])


def test_glm_h_check_failure_returns_zero_with_trivial_radius() -> None:
    oracle = make_oracle("iw-glm-dp", epsilon=0.01, delta=1e-5, gamma=1e-4)
    x, y = _sample(400, seed=7)
    est = oracle.fit(x, y, rng=0)
    assert est.info["h_check"] is False
    assert np.all(est.theta == 0)
    assert np.all(est.width(ATOMS) >= np.abs(ATOMS @ THETA))


def test_glm_logistic_fit_is_close_near_nonprivate() -> None:
    link = logistic_link(2.0, 1.0)
    rng = np.random.default_rng(8)
    n = 2 ** 15
    x = ATOMS[rng.choice(len(PROBS), size=n, p=PROBS)]
    y = np.where(rng.random(n) < 0.5 * (1 + link(x @ THETA)), 1.0, -1.0)
    est = make_oracle("iw-glm-dp", epsilon=1e6, delta=1e-5).fit(x, y, link=link, rng=0)
    assert est.info["h_check"]
    assert np.all(np.abs(link(ATOMS @ est.theta) - link(ATOMS @ THETA)) <= est.width(ATOMS))
    assert link_residual_bound(link, 1.0) == pytest.approx(1 + np.tanh(1.0))


def test_dp_sgd_noise_is_dimension_free() -> None:
    for dim in (4, 400):
        fit = make_oracle("dp-sgd", epsilon=1.0, delta=1e-5).start(1000, dim=dim, rng=0)
        assert fit.eta == pytest.approx(make_oracle("dp-sgd", epsilon=1.0).step_size(1000, 1.0))
    with pytest.raises(ValueError):
        make_oracle("dp-sgd", epsilon=1.0, eta=3.0).start(10, dim=2)


def test_dp_sgd_matches_the_recursion() -> None:
    x, y = _sample(300, seed=9)
    oracle = make_oracle("dp-sgd", epsilon=1e6, delta=1e-5, eta=0.3)
    est = oracle.fit(x, y, rng=0)
    theta, total = np.zeros(4), np.zeros(4)
    for xi, yi in zip(x, y):
        total += theta
        theta = theta - 0.3 * (xi @ theta - yi) * xi
        theta /= max(1.0, np.linalg.norm(theta))
    np.testing.assert_allclose(est.theta, total / 300, atol=1e-3)
    assert dp_sgd_mod.DPSGD.name == "dp-sgd"


def test_ssp_without_noise_is_ridge_and_shift_tracks_noise() -> None:
    x, y = _sample(500, seed=10)
    aug = ssp_mod.augmented_second_moment(x, y)
    est = ssp_mod.ssp_estimate(aug, 0.0, link=identity_link(), lam=1.0)
    ridge = make_oracle("ridge", lam=1.0).fit(x, y)
    np.testing.assert_allclose(est.theta, ridge.theta, atol=1e-10)
    noisy = ssp_mod.ssp_estimate(aug, 2.0, link=identity_link(), lam=1.0)
    assert noisy.info["rho"] > 2 * 2.0 * 2 * np.sqrt(4)  # shift >= 2 * operator-norm bound of the noise
    # the operator-norm bound holds empirically at its confidence
    rng = np.random.default_rng(0)
    mech = SymmetricGaussianMechanism(sensitivity=1.0, sigma=1.0)
    norms = [np.linalg.norm(mech.noise((6, 6), rng), 2) for _ in range(400)]
    assert np.mean(np.array(norms) <= ssp_mod.noise_operator_bound(1.0, 6, 0.05)) >= 0.95


@pytest.mark.parametrize("link", [identity_link(), logistic_link(2.0, 1.0)])
def test_glm_erm_output_moves_within_delta_n(link) -> None:
    """For a fixed released H~ (so a fixed A), neighbouring datasets give minimisers within Delta_N."""
    n, d, gamma, lam, b = 200, 3, 0.5, 0.3, 1.0
    (x1, y1), (x2, y2) = _neighbours(n, d, 7, seed=3)
    a = None
    outs = []
    for x, y in ((x1, y1), (x2, y2)):
        wts = 1 / (1 + gamma * np.linalg.norm(x, axis=1))
        s = (x * wts[:, None]).T @ x / n
        if a is None:  # H~ = H(D1) + lambda I (+ no noise): A is shared by both datasets
            a = s + lam * np.eye(d)
        outs.append(solve_iw_erm(x, wts, y, link, a, s, np.eye(d), 1e-9, n=n).w)
    delta_n = 32 * (max(1.0, link_residual_bound(link, b) / 2) / link.mu + b) / (gamma * n)
    diff = np.linalg.norm(outs[0] - outs[1])
    assert 1e-6 < diff <= delta_n / 2


@pytest.mark.parametrize("name, override, argument", [
    ("iw-regression-dp", dict(c_lambda=1e-300), "c_lambda=1e-300"),
    ("spectral-dp", dict(c_lambda=1e-300), "c_lambda=1e-300"),
    ("iw-glm-dp", dict(c_gamma=1e300), "c_gamma=1e\\+300"),
])
def test_extreme_constant_overrides_are_refused_naming_the_argument(name, override, argument):
    x = np.random.default_rng(0).standard_normal((256, 4))
    x /= np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True))
    y = np.clip(x[:, 0], -1, 1)
    with pytest.raises(ValueError, match=argument):
        make_oracle(name, epsilon=1.0, delta=1e-5, **override).fit(x, y, rng=0)
    lo, hi = iw_jdp.PARAMETER_RANGE
    assert lo <= iw_jdp.iw_parameters(2 ** 40, 100, 1.0, 1e6, constants="theory", confidence=1e-12).gamma <= hi
