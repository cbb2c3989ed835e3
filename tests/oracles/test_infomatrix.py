"""The information matrices U* and W*: the paper's statements checked numerically.

Distributions: random well-spread samples, ill-conditioned Gaussians (covariance eigenvalues down to
1e-4, randomly rotated, clipped to the unit ball) and the spiky p_{Sigma,B} of `example:ill-condition-p`
(phi = B e_j with probability rho_j / B^2, else 0), several seeds each.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privbandit import infomatrix as im
from privbandit import linalg as la

D = 4
KINDS = ("random", "ill-gaussian", "spiky")
SEEDS = (0, 1, 2)
CASES = [(k, s) for k in KINDS for s in SEEDS]


def make_distribution(kind: str, seed: int, d: int = D) -> tuple[np.ndarray, np.ndarray | None]:
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    if kind == "random":
        x = rng.uniform(-1, 1, (200, d)) / math.sqrt(d)
        return x, rng.dirichlet(np.ones(200))
    if kind == "ill-gaussian":
        x = rng.standard_normal((300, d)) * 10.0 ** (-np.linspace(0, 2, d)) @ q.T
        x /= np.maximum(1.0, np.linalg.norm(x, axis=1))[:, None]
        return x, None
    if kind == "spiky":
        bound = 1.0
        rho = 0.5 * 10.0 ** (-np.linspace(0, 4, d))
        atoms = np.vstack([bound * q.T, np.zeros((1, d))])
        w = np.append(rho / bound ** 2, 0.0)
        w[-1] = 1.0 - w.sum()
        return atoms, w
    raise ValueError(kind)


def loewner_leq(a: np.ndarray, b: np.ndarray, rtol: float = 1e-8) -> bool:
    """a <= b in the PSD order, up to rtol * ||b||."""
    return bool(np.linalg.eigvalsh(la.symmetric_part(b - a))[0] >= -rtol * max(1.0, np.linalg.norm(b, 2)))


def opnorm(a: np.ndarray) -> float:
    return float(np.linalg.norm(a, 2))


# --- the operators themselves ------------------------------------------------------------------------

def test_f_ldp_and_f_dp_match_a_per_atom_loop():
    x, w = make_distribution("random", 3)
    x[5] = 0.0  # phi = 0 contributes nothing to F_LDP
    rng = np.random.default_rng(0)
    a = rng.standard_normal((D, D))
    u = a @ a.T + 0.1 * np.eye(D)
    lam, gamma = 0.05, 0.7
    ref_l = lam * u
    ref_d = lam * u
    for xi, wi in zip(x, w / w.sum()):
        ux = u @ xi
        if np.linalg.norm(ux) > 0:
            ref_l = ref_l + wi * np.outer(ux, ux) / np.linalg.norm(ux)
        ref_d = ref_d + wi * np.outer(ux, ux) / (1 + gamma * np.linalg.norm(ux))
    np.testing.assert_allclose(im.f_ldp(u, x, w, lam=lam), ref_l, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(im.f_dp(u, x, w, gamma=gamma, lam=lam), ref_d, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(im.second_moment(x, w), (x * (w / w.sum())[:, None]).T @ x, atol=1e-15)
    with pytest.raises(ValueError, match="weights"):
        im.f_ldp(u, x, -w, lam=lam)


def test_matrix_helpers():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((D, D))
    s = la.polar_psd_factor(a)
    np.testing.assert_allclose(s @ s, a.T @ a, atol=1e-12)
    assert np.linalg.eigvalsh(s)[0] >= -1e-12
    p = a @ a.T + np.eye(D)
    r = la.psd_inv_sqrt(p)
    np.testing.assert_allclose(r @ p @ r, np.eye(D), atol=1e-12)
    noisy = p - 3 * np.linalg.eigvalsh(p)[-1] * np.outer(np.eye(D)[0], np.eye(D)[0])  # indefinite
    assert np.all(np.isfinite(la.psd_inv_sqrt(noisy)))
    # U_{k+1}^2 = U_k F_k^{-1} U_k (eqn:U-spectral-exact).
    u = la.psd_sqrt(p)
    f = rng.standard_normal((D, D))
    f = f @ f.T + 0.5 * np.eye(D)
    nxt = im.spectral_update(u, f)
    np.testing.assert_allclose(nxt @ nxt, u @ np.linalg.inv(f) @ u, rtol=1e-10, atol=1e-12)


def test_the_symmetric_part_and_the_polar_factor_agree_only_on_psd_matrices():
    """symmetric_part is (A + A^T) / 2, polar_psd_factor (A^T A)^{1/2} (the paper's sym): equal on a PSD matrix,
    different on a symmetric indefinite one (the polar factor is |A|) and on an asymmetric one."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((D, D))
    np.testing.assert_array_equal(la.symmetric_part(a), 0.5 * (a + a.T))
    psd = a @ a.T
    np.testing.assert_allclose(la.polar_psd_factor(psd), la.symmetric_part(psd), rtol=1e-10, atol=1e-10)
    indefinite = a + a.T
    vals, vecs = np.linalg.eigh(indefinite)
    np.testing.assert_allclose(la.polar_psd_factor(indefinite), (vecs * np.abs(vals)) @ vecs.T, atol=1e-10)
    assert np.linalg.norm(la.polar_psd_factor(indefinite) - la.symmetric_part(indefinite)) > 1.0
    assert np.linalg.norm(la.polar_psd_factor(a) - la.symmetric_part(a)) > 1.0


def test_solve_regularized_is_the_ridge_solve_and_stays_finite_on_a_singular_system():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((50, D))
    v = x.T @ rng.standard_normal(50)
    np.testing.assert_allclose(la.solve_regularized(x.T @ x, v, 0.3), np.linalg.solve(x.T @ x + 0.3 * np.eye(D), v),
                               rtol=1e-12)
    singular = -0.3 * np.eye(D)                        # mat + lam I = 0: least squares, the zero vector
    out = la.solve_regularized(singular, v, 0.3)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, np.zeros(D), atol=1e-12)


def test_psd_project_is_the_nearest_psd_matrix_and_the_one_both_iw_families_use():
    from privbandit.oracles import iw_jdp, iw_ldp, ssp_local

    rng = np.random.default_rng(2)
    a = rng.standard_normal((D, D))
    vals, vecs = np.linalg.eigh(la.symmetric_part(a))
    proj = la.psd_project(a)
    np.testing.assert_allclose(proj, (vecs * np.maximum(vals, 0.0)) @ vecs.T, atol=1e-12)
    assert np.linalg.eigvalsh(proj)[0] >= -1e-12 and vals[0] < 0          # a was indefinite; the projection is not
    np.testing.assert_allclose(la.psd_project(proj), proj, atol=1e-12)     # PSD matrices stay where they are
    # nearest in Frobenius norm: no random PSD matrix is closer to sym(a)
    for _ in range(20):
        b = rng.standard_normal((D, D))
        b = b @ b.T
        assert np.linalg.norm(la.symmetric_part(a) - b) >= np.linalg.norm(la.symmetric_part(a) - proj) - 1e-12
    # one function for both families: the JDP H stages and the LDP / SSP-local Gram projections
    assert iw_jdp.psd_project is iw_ldp.psd_project is ssp_local.psd_project is la.psd_project
    assert not hasattr(iw_ldp, "psd_part")


# --- fixed points and the lemmas -----------------------------------------------------------------------

@pytest.mark.parametrize("kind, seed", CASES)
def test_u_star_solves_the_equation_and_the_l1_covariance_sandwich(kind, seed):
    """lem:U-L1-covariance: ||U*^{-1} t|| <= E|<phi, t>| + lambda ||t|| <= (sqrt(d) + 1) ||U*^{-1} t||."""
    x, w = make_distribution(kind, seed)
    rng = np.random.default_rng(100 + seed)
    for lam in (1e-1, 1e-3):
        res = im.u_star(x, w, lam=lam, tol=1e-12)
        assert res.residual <= 1e-12
        u = res.matrix
        np.testing.assert_allclose(im.f_ldp(u, x, w, lam=lam), np.eye(D), atol=1e-11)
        assert np.linalg.eigvalsh(u)[0] > 0
        thetas = np.vstack([rng.standard_normal((30, D)), np.linalg.eigh(im.second_moment(x, w))[1].T])
        inv = np.linalg.solve(u, thetas.T).T
        left = np.linalg.norm(inv, axis=1)
        mid = np.array([im.l1_covariance_norm(t, x, w) for t in thetas]) + lam * np.linalg.norm(thetas, axis=1)
        assert np.all(left <= mid * (1 + 1e-9))
        assert np.all(mid <= (math.sqrt(D) + 1) * left * (1 + 1e-9))


@pytest.mark.parametrize("kind, seed", CASES)
def test_approximate_solutions_are_within_a_factor_two(kind, seed):
    """lem:U-L1-covariance / lem:Wstar-properties: 1/2 I <= F(V) <= 2 I implies V^2/4 <= V*^2 <= 4 V^2.

    (The statement in lem:U-L1-covariance prints "1/4 U <= U*^2"; the proof via lem:F-monotone gives U^2.)
    """
    x, w = make_distribution(kind, seed)
    lam, gamma = 1e-3, 0.5
    u_star = im.u_star(x, w, lam=lam).matrix
    w_star = im.w_star(x, w, gamma=gamma, lam=lam).matrix
    checked = 0
    for fun, star, run in (
        (lambda m: im.f_ldp(m, x, w, lam=lam), u_star, lambda k: im.u_star(x, w, lam=lam, max_iter=k)),
        (lambda m: im.f_dp(m, x, w, gamma=gamma, lam=lam), w_star,
         lambda k: im.w_star(x, w, gamma=gamma, lam=lam, max_iter=k)),
    ):
        # Candidates: early iterates and scaled/rotated perturbations of the fixed point.
        rng = np.random.default_rng(seed)
        cands = [run(k).matrix for k in range(0, 8)]
        for _ in range(20):
            e = rng.standard_normal((D, D)) * 0.3
            g = np.eye(D) + (e + e.T) / 2
            cands.append(la.symmetric_part(la.psd_sqrt(g @ g) @ star @ la.psd_sqrt(g @ g)))
        for v in cands:
            vals = np.linalg.eigvalsh(fun(v))
            if vals[0] >= 0.5 and vals[-1] <= 2.0:
                checked += 1
                assert loewner_leq(v @ v / 4, star @ star)
                assert loewner_leq(star @ star, 4 * v @ v)
    assert checked >= 4


@pytest.mark.parametrize("kind, seed", CASES)
def test_w_star_u_star_sandwich(kind, seed):
    """lem:Wstar-Ustar: gamma^2 U*_{gamma lambda}^2 <= W*^2 <= 16 (1 + gamma)^2 U*_{(1+gamma) lambda}^2."""
    x, w = make_distribution(kind, seed)
    for lam in (1e-1, 1e-3):
        for gamma in (0.0, 0.1, 1.0, 10.0):
            ws = im.w_star(x, w, gamma=gamma, lam=lam).matrix
            ws2 = ws @ ws
            if gamma > 0:
                ul = im.u_star(x, w, lam=gamma * lam).matrix
                assert loewner_leq(gamma ** 2 * ul @ ul, ws2)
            uh = im.u_star(x, w, lam=(1 + gamma) * lam).matrix
            assert loewner_leq(ws2, 16 * (1 + gamma) ** 2 * uh @ uh)


@pytest.mark.parametrize("kind, seed", CASES)
def test_fixed_point_is_unique_from_different_starts(kind, seed):
    x, w = make_distribution(kind, seed)
    rng = np.random.default_rng(7 + seed)
    lam, gamma = 1e-3, 0.3
    ref_u = im.u_star(x, w, lam=lam).matrix
    ref_w = im.w_star(x, w, gamma=gamma, lam=lam).matrix
    for _ in range(3):
        q, _ = np.linalg.qr(rng.standard_normal((D, D)))
        start = (q * 10.0 ** rng.uniform(-3, 3, D)) @ q.T
        ru = im.u_star(x, w, lam=lam, start=start)
        rw = im.w_star(x, w, gamma=gamma, lam=lam, start=start)
        assert ru.residual <= 1e-12 and rw.residual <= 1e-12
        np.testing.assert_allclose(ru.matrix, ref_u, rtol=1e-8, atol=1e-8 * opnorm(ref_u))
        np.testing.assert_allclose(rw.matrix, ref_w, rtol=1e-8, atol=1e-8 * opnorm(ref_w))


@pytest.mark.parametrize("kind, seed", CASES)
def test_spectral_iteration_converges_as_lem_spec_fast_converge_says(kind, seed):
    """lambda_min(F_k)^{1/2} <= lambda_min(F_{k+1}) <= lambda_max(F_{k+1}) <= lambda_max(F_k)^{1/2} (U);
    the same with min{., 1} / max{., 1} for W; and from U_0 = I with ||phi|| <= 1,
    exp(-log(1/lambda)/2^k) I <= F_k <= exp(lambda/2^k) I."""
    x, w = make_distribution(kind, seed)
    assert np.max(np.linalg.norm(x, axis=1)) <= 1 + 1e-12
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((D, D)))
    wild = (q * 10.0 ** rng.uniform(-3, 3, D)) @ q.T
    tol = 1e-9
    for lam in (1e-2, 1e-4, 1e-6):
        for start in (None, wild):
            r = im.u_star(x, w, lam=lam, tol=1e-13, max_iter=80, start=start)
            lo, hi = r.lambda_min, r.lambda_max
            assert np.all(lo[1:] >= np.sqrt(lo[:-1]) * (1 - tol))
            assert np.all(hi[1:] <= np.sqrt(hi[:-1]) * (1 + tol))
            if start is None:
                k = np.arange(lo.size)
                assert np.all(lo >= np.exp(-math.log(1 / lam) / 2.0 ** k) * (1 - tol))
                assert np.all(hi <= np.exp(lam / 2.0 ** k) * (1 + tol))
                # Into [1/2, 2] once exp(-log(1/lambda)/2^k) >= 1/2, i.e. k >= log2(log2(1/lambda)).
                band = r.iterations_to_band
                assert band <= math.ceil(math.log2(math.log2(1 / lam)))
                # From there the residual ||F_k - I|| at least roughly halves per step (until rounding).
                res = np.maximum(np.abs(lo - 1), np.abs(hi - 1))
                live = np.arange(band, res.size - 1)
                live = live[res[live] > 1e-10]
                assert live.size > 10 and np.all(res[live + 1] <= 0.6 * res[live])
            r = im.w_star(x, w, gamma=0.5, lam=lam, tol=1e-13, max_iter=80, start=start)
            lo, hi = r.lambda_min, r.lambda_max
            assert np.all(lo[1:] >= np.minimum(np.sqrt(lo[:-1]), 1.0) * (1 - tol))
            assert np.all(hi[1:] <= np.maximum(np.sqrt(hi[:-1]), 1.0) * (1 + tol))


def test_iteration_counts_to_the_band_and_to_1e_10():
    """Report (and bound) the exact iteration's counts on an ill-conditioned distribution."""
    x, w = make_distribution("ill-gaussian", 0)
    rows = []
    for lam in (1e-2, 1e-4, 1e-6):
        ru = im.u_star(x, w, lam=lam, tol=1e-12, max_iter=100)
        rw = im.w_star(x, w, gamma=0.1, lam=lam, tol=1e-12, max_iter=100)
        rows.append((lam, ru.iterations_to_band, ru.iterations_to(1e-10),
                     rw.iterations_to_band, rw.iterations_to(1e-10)))
    for lam, ub, u10, wb, w10 in rows:
        print(f"lambda={lam:g}: U* band {ub}, 1e-10 {u10}; W*(gamma=0.1) band {wb}, 1e-10 {w10}")
        assert 0 <= ub <= 5 and 0 <= wb <= 5
        assert 0 < u10 <= 60 and 0 < w10 <= 60
        assert u10 > ub and w10 >= wb


def test_w_star_tends_to_inverse_sqrt_covariance():
    """W* -> Sigma^{-1/2} as gamma, lambda -> 0 (Sigma invertible)."""
    x, w = make_distribution("ill-gaussian", 1)
    sigma = im.second_moment(x, w)
    assert np.linalg.eigvalsh(sigma)[0] > 1e-6
    target = la.psd_power(sigma, -0.5)
    errs = []
    for t in (1e-1, 1e-3, 1e-5, 1e-7):
        ws = im.w_star(x, w, gamma=t, lam=t, tol=1e-11).matrix
        errs.append(opnorm(la.psd_sqrt(sigma) @ ws - np.eye(D)))
    assert all(b < a for a, b in zip(errs, errs[1:]))
    assert errs[-1] < 1e-2
    ws = im.w_star(x, w, gamma=1e-9, lam=1e-9, tol=1e-11).matrix
    np.testing.assert_allclose(ws, target, rtol=1e-3, atol=1e-3 * opnorm(target))


def test_closed_forms_on_the_diagonal_simple_distribution():
    """p_{Sigma,B} with phi = B e_j w.p. rho_j / B^2: F_LDP(U) = diag((rho_j/B + lambda) u_j), so
    U*_jj = 1 / (rho_j/B + lambda); F_DP(W)_jj = rho_j w^2 / (1 + gamma B w) + lambda w = 1 is a quadratic."""
    bound, lam, gamma = 2.0, 1e-3, 0.05
    rho = np.array([0.9, 1e-2, 1e-5])
    atoms = np.vstack([bound * np.eye(3), np.zeros((1, 3))])
    probs = np.append(rho / bound ** 2, 1 - rho.sum() / bound ** 2)
    u = im.u_star(atoms, probs, lam=lam).matrix
    np.testing.assert_allclose(u, np.diag(1 / (rho / bound + lam)), rtol=1e-10, atol=1e-12)
    a, b = rho + lam * gamma * bound, lam - gamma * bound
    w_diag = (-b + np.sqrt(b * b + 4 * a)) / (2 * a)
    np.testing.assert_allclose(im.w_star(atoms, probs, gamma=gamma, lam=lam).matrix, np.diag(w_diag), rtol=1e-10,
                               atol=1e-12)


# --- kappa and the price of privacy -----------------------------------------------------------------------

def brute_force_kappa(x, w, c=0.5):
    w = w / w.sum()
    sigma = (x * w[:, None]).T @ x
    pinv = np.linalg.pinv(sigma, rcond=1e-12, hermitian=True)
    norms = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", x, pinv, x), 0))
    for m in np.sort(norms):
        keep = norms <= m
        part = (x[keep] * w[keep, None]).T @ x[keep]
        # A >= c Sigma on the range of Sigma.
        vals, vecs = np.linalg.eigh(sigma)
        r = vecs[:, vals > 1e-12 * vals[-1]]
        if np.linalg.eigvalsh(r.T @ (part - c * sigma) @ r)[0] >= -1e-10:
            return m
    return math.inf


@pytest.mark.parametrize("seed", SEEDS)
def test_kappa_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((60, 3)) * rng.exponential(1.0, (60, 1)) ** 2
    w = rng.dirichlet(np.ones(60))
    for c in (0.25, 0.5, 0.9):
        assert im.kappa(x, w, c=c) == pytest.approx(brute_force_kappa(x, w, c), rel=1e-12)


def test_kappa_gaussian_vs_heavy_tailed():
    """kappa is O(sqrt(d)) for a Gaussian sample and much larger when heavy tails carry the covariance."""
    rng = np.random.default_rng(0)
    d, n = 5, 20000
    gauss = rng.standard_normal((n, d))
    heavy = rng.standard_t(2.1, (n, d))
    k_gauss, k_heavy = im.kappa(gauss), im.kappa(heavy)
    print(f"kappa: gaussian {k_gauss:.2f}, student-t(2.1) {k_heavy:.2f}, sqrt(d) = {math.sqrt(d):.2f}")
    assert 0.5 * math.sqrt(d) <= k_gauss <= 2 * math.sqrt(d)
    assert k_heavy > 2 * k_gauss
    # Spiky p_{Sigma,B}: Sigma = sum_j rho_j e_j e_j^T and ||B e_j||_{Sigma^+} = B / sqrt(rho_j); every atom
    # is needed to reach Sigma / 2 in its own direction, so kappa = B / sqrt(min_j rho_j).
    atoms, w = make_distribution("spiky", 0)
    assert im.kappa(atoms, w) == pytest.approx(1.0 / math.sqrt(0.5e-4), rel=1e-9)


@pytest.mark.parametrize("kind, seed", CASES)
def test_light_tail_bounds_of_lem_kappa_p(kind, seed):
    """lem:kappa-p: ||(Sigma + lambda^2 I)^{1/2} W*|| <= 1/sqrt(c) + gamma kappa_c / c, and eq:W-to-cov:
    ||Sigma^{1/2} W*|| <= 2 + 2 gamma kappa(p); the light-tailed U bound 1/4 (Sigma + lambda^2 I)^{-1} <= U*^2
    <= 4 kappa^2 (Sigma + lambda^2 I)^{-1} (stated after def:kappa-p)."""
    x, w = make_distribution(kind, seed)
    sigma = im.second_moment(x, w)
    kap = im.kappa(x, w)
    for lam in (1e-1, 1e-3):
        reg = sigma + lam ** 2 * np.eye(D)
        for gamma in (0.0, 0.1, 3.0):
            ws = im.w_star(x, w, gamma=gamma, lam=lam).matrix
            assert opnorm(la.psd_sqrt(reg) @ ws) <= (math.sqrt(2) + 2 * gamma * kap) * (1 + 1e-9)
            assert opnorm(la.psd_sqrt(sigma) @ ws) <= (2 + 2 * gamma * kap) * (1 + 1e-9)
        us = im.u_star(x, w, lam=lam).matrix
        inv = np.linalg.inv(reg)
        assert loewner_leq(inv / 4, us @ us)
        assert loewner_leq(us @ us, 4 * kap ** 2 * inv)


def test_price_of_privacy_tends_to_one():
    x, w = make_distribution("ill-gaussian", 2)
    ts = (10 ** 2, 10 ** 4, 10 ** 6, 10 ** 8, 10 ** 10)
    pops = [im.price_of_privacy(x, w, epsilon=1.0, n_samples=t) for t in ts]
    print("price of privacy:", ", ".join(f"T={t:.0e}: {p:.3f}" for t, p in zip(ts, pops)))
    gaps = [abs(p - 1) for p in pops]
    assert all(b < a for a, b in zip(gaps, gaps[1:]))
    assert gaps[-1] < 1e-2
    assert gaps[0] > 0.3  # far from 1 at small T (below 1 here: lambda = 1/sqrt(T) shrinks W*)
    # A smaller epsilon (larger gamma, larger W*) costs more at the same T.
    assert im.price_of_privacy(x, w, epsilon=0.1, n_samples=10 ** 4) > pops[1]
    assert im.price_of_privacy(x, w, epsilon=0.01, n_samples=10 ** 4) > 1.0


# -- the symmetric least-squares solution of W A = M -------------------------------------------------------------

def test_the_symmetric_solution_recovers_a_symmetric_a_exactly():
    rng = np.random.default_rng(0)
    g = rng.standard_normal((5, 5))
    w, a0 = g @ g.T + 0.1 * np.eye(5), np.cov(rng.standard_normal((5, 30)))
    np.testing.assert_allclose(la.symmetric_solution(w, w @ a0), a0, atol=1e-10)


def test_the_symmetric_solution_minimises_the_residual_over_symmetric_matrices():
    rng = np.random.default_rng(1)
    g = rng.standard_normal((4, 4))
    w, m = g @ g.T + np.eye(4), rng.standard_normal((4, 4))
    a = la.symmetric_solution(w, m)
    best = np.linalg.norm(w @ a - m)
    assert np.array_equal(a, a.T)
    for _ in range(50):                                       # every symmetric perturbation does worse
        s = rng.standard_normal((4, 4))
        assert np.linalg.norm(w @ (a + 1e-3 * (s + s.T)) - m) > best
    plain = la.symmetric_part(np.linalg.solve(w, m))    # (W^-1 M + M^T W^-1) / 2, symmetric but not the argmin
    assert np.linalg.norm(w @ plain - m) > best


def test_the_symmetric_solution_keeps_the_noise_of_a_weighted_up_direction_small():
    """M = W A0 + N, N i.i.d.: along the direction W weighs up (W = 40 there), (A theta)'s noise stays below the
    W^-1 N theta model's s ||theta|| / 40, while (W^-1 M + M^T W^-1) / 2 carries the other directions' noise there."""
    rng = np.random.default_rng(2)
    w, a0, theta, s = np.diag([0.5, 1.0, 40.0]), np.diag([1.0, 0.5, 1e-3]), np.array([0.6, 0.6, 0.5]), 1.0
    noise = s * rng.standard_normal((4000, 3, 3))
    ours = np.array([la.symmetric_solution(w, w @ a0 + n) @ theta for n in noise])[:, 2]
    plain = np.array([la.symmetric_part(np.linalg.solve(w, w @ a0 + n)) @ theta for n in noise])[:, 2]
    model_sd = s * np.linalg.norm(theta) / 40.0
    assert np.std(ours) < 1.1 * model_sd
    assert np.std(plain) > 5 * model_sd
