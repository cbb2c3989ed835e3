"""Approximate barycentric spanners (`def:spanner`, `lem:bary-spanner`)."""

import numpy as np
import pytest

from privbandit.agents.spanner import barycentric_spanner


def spanner_coefficients(features, spanner, candidates):
    """Least-squares coefficients (n_candidates, n_spanner) of each candidate on one context's spanner, and the
    largest residual ||phi_a - sum gamma phi_a'|| over the candidates."""
    basis, target = features[spanner], features[candidates]
    coefs, *_ = np.linalg.lstsq(basis.T, target.T, rcond=None)
    resid = np.linalg.norm(basis.T @ coefs - target.T, axis=0)
    return coefs.T, float(resid.max(initial=0.0))


def _algorithm(phi, mask, c):
    """The spanner algorithm run in full on every context (the reference of the shortcuts)."""
    from privbandit.agents.spanner import _max_swaps, _spanner_chunk

    single = mask.sum(axis=1) == 1
    out = _spanner_chunk(phi, mask, c, _max_swaps(phi.shape[2], c))
    out[single] = mask[single]
    return out


def _contexts(rng, m, k, d):
    """Random contexts with rank-deficient, duplicated, zero and rank-one cases mixed in."""
    phi = rng.standard_normal((m, k, d))
    q = m // 6
    phi[:q, :, d // 2:] = 0.0                                                  # rank d/2
    phi[q:2 * q] = np.repeat(phi[q:2 * q, :2], (k + 1) // 2, axis=1)[:, :k]   # duplicates, rank 2
    phi[2 * q:3 * q] = rng.standard_normal((q, k, 1)) * rng.standard_normal((q, 1, d))  # rank 1
    phi[3 * q:3 * q + 3] = 0.0                                                  # all zero
    phi[3 * q + 3:4 * q] *= rng.uniform(1e-3, 1e3, (q - 3, 1, 1))               # scales
    return phi


@pytest.mark.parametrize("k,d,c", [(10, 10, 2.0), (30, 3, 2.0), (12, 5, 1.2), (4, 8, 2.0)])
def test_every_candidate_is_a_bounded_combination_of_the_spanner(k, d, c):
    rng = np.random.default_rng(k * 100 + d)
    m = 600
    phi = _contexts(rng, m, k, d)
    mask = rng.random((m, k)) < 0.6
    mask[np.arange(m), rng.integers(0, k, m)] = True
    span = barycentric_spanner(phi, mask, constant=c)
    assert span.shape == (m, k) and span.dtype == bool
    assert not np.any(span & ~mask), "the spanner must be a subset of the candidates"
    for i in range(m):
        cand = phi[i][mask[i]]
        rank = np.linalg.matrix_rank(cand, tol=1e-9 * max(np.abs(cand).max(), 1e-300))
        assert span[i].sum() == max(rank, 1)
        coefs, resid = spanner_coefficients(phi[i], span[i], mask[i])
        scale = max(np.abs(cand).max(), 1e-300)
        assert resid <= 1e-8 * scale
        if rank > 0:
            assert np.abs(coefs).max() <= c + 1e-9


def test_the_swap_phase_is_needed_and_works():
    # many arms in low dimension: the greedy fill alone leaves coefficients above C, the swaps remove them
    rng = np.random.default_rng(7)
    m, k, d = 400, 40, 3
    phi = rng.standard_normal((m, k, d)) * rng.uniform(0.1, 1.0, (m, k, 1))
    no_swap = barycentric_spanner(phi, constant=1.1, max_swaps=0)
    full = barycentric_spanner(phi, constant=1.1)
    worst_no_swap = max(np.abs(spanner_coefficients(phi[i], no_swap[i], np.ones(k, bool))[0]).max() for i in range(m))
    worst_full = max(np.abs(spanner_coefficients(phi[i], full[i], np.ones(k, bool))[0]).max() for i in range(m))
    assert worst_no_swap > 1.1 + 1e-6
    assert worst_full <= 1.1 + 1e-9


def test_independent_candidates_are_their_own_spanner_and_result_is_deterministic():
    rng = np.random.default_rng(3)
    phi = rng.standard_normal((50, 6, 6))
    mask = rng.random((50, 6)) < 0.5
    mask[:, 0] = True
    a = barycentric_spanner(phi, mask)
    np.testing.assert_array_equal(a, mask)
    np.testing.assert_array_equal(a, barycentric_spanner(phi.copy(), mask.copy()))


def test_ties_go_to_the_lowest_index():
    e = np.eye(2)
    phi = np.stack([e[0], e[0], e[1], e[1]])[None]     # duplicates: arms 0 and 2 must be chosen
    np.testing.assert_array_equal(barycentric_spanner(phi)[0], [True, False, True, False])
    zero = np.zeros((1, 3, 2))
    np.testing.assert_array_equal(barycentric_spanner(zero, np.array([[False, True, True]]))[0], [False, True, False])


def test_bad_input():
    phi = np.zeros((2, 3, 2))
    with pytest.raises(ValueError, match="constant"):
        barycentric_spanner(phi, constant=1.0)
    with pytest.raises(ValueError, match="mask"):
        barycentric_spanner(phi, np.zeros((2, 3), dtype=bool))
    with pytest.raises(ValueError, match="mask"):
        barycentric_spanner(phi, np.ones((2, 4), dtype=bool))
    with pytest.raises(ValueError, match="features"):
        barycentric_spanner(np.full((2, 3, 2), np.nan))


@pytest.mark.parametrize("k,d,c", [(10, 10, 2.0), (30, 3, 2.0), (12, 5, 1.2), (4, 8, 2.0), (7, 1, 2.0)])
def test_a_context_alone_gets_its_row_of_the_batch(k, d, c):
    """One context's spanner (the step loop's batch of one) equals its row of a batch, on random, degenerate
    and one-hot contexts."""
    rng = np.random.default_rng(k * 7 + d)
    m = 400
    phi = _contexts(rng, m, k, d)
    phi[-40:] = np.eye(max(k, d))[:k, :d] * rng.choice([1.0, -1.0, 0.5], (40, k, 1))  # exact ties
    phi[-60:-40] = rng.integers(-2, 3, (20, k, d))
    mask = rng.random((m, k)) < 0.6
    mask[np.arange(m), rng.integers(0, k, m)] = True
    mask[:20] = True
    batched = barycentric_spanner(phi, mask, constant=c)
    one = np.array([barycentric_spanner(phi[i:i + 1], mask[i:i + 1], constant=c)[0] for i in range(m)])
    np.testing.assert_array_equal(one, batched)
    # and both equal the algorithm run in full (no certificate of well-posed square sets)
    np.testing.assert_array_equal(batched, _algorithm(phi, mask, c))


def test_the_well_posed_shortcut_holds_every_candidate_exactly_when_the_batched_code_does():
    """Square candidate sets with a smallest singular value from 1e-13 to 1 (relative): where the Cholesky
    certificate fires the batched spanner holds every candidate, and the result always equals the algorithm's."""
    from privbandit.agents.spanner import _certified

    rng = np.random.default_rng(3)
    fired = 0
    stacks = {}
    for n in (2, 5, 10, 16):
        for s_min in np.logspace(-13, 0, 27):
            q1, _ = np.linalg.qr(rng.standard_normal((n, n)))
            q2, _ = np.linalg.qr(rng.standard_normal((n, n)))
            phi = (q1 * np.geomspace(1.0, s_min, n)) @ q2.T * rng.uniform(0.01, 100)
            batched = _algorithm(phi[None], np.ones((1, n), dtype=bool), 2.0)[0]
            if _certified(phi[None])[0]:
                fired += 1
                assert batched.all() and s_min > 1e-5
            elif s_min > 1e-3:
                raise AssertionError("the certificate must fire on well-conditioned sets")
            np.testing.assert_array_equal(barycentric_spanner(phi[None])[0], batched)
            stacks.setdefault(n, []).append(phi)
    assert fired > 30
    for mats in stacks.values():     # certified and uncertified contexts mixed in one batch
        phi = np.stack(mats * 3)[rng.permutation(3 * len(mats))]
        np.testing.assert_array_equal(barycentric_spanner(phi), _algorithm(phi, np.ones(phi.shape[:2], bool), 2.0))


def test_the_stacked_cholesky_test_decides_as_numpys_cholesky_away_from_the_threshold():
    """_factorizes (Cholesky column by column over a stack) says positive definite exactly where
    ``np.linalg.cholesky`` succeeds, on matrices whose smallest eigenvalue is at least 1e-6 of the largest
    away from zero (rounding decides closer ones), with NaN refused."""
    from privbandit.agents.spanner import _factorizes

    rng = np.random.default_rng(31)
    mats, want = [], []
    for _ in range(400):
        n = int(rng.integers(1, 17))
        q, _ = np.linalg.qr(rng.standard_normal((n, n)))
        lam = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-6, 0, n)
        lam[0] = 1.0
        gram = (q * lam) @ q.T * 10.0 ** rng.uniform(-3, 3)
        gram = 0.5 * (gram + gram.T)
        try:
            np.linalg.cholesky(gram)
            ok = True
        except np.linalg.LinAlgError:
            ok = False
        assert _factorizes(gram[None])[0] == ok
        want.append(ok)
        mats.append(np.pad(gram, (0, 16 - n)) + np.diag(np.r_[np.zeros(n), np.ones(16 - n)]))
    assert set(want) == {True, False}
    np.testing.assert_array_equal(_factorizes(np.stack(mats)), want)       # one stack, the same verdicts
    assert not _factorizes(np.full((1, 3, 3), np.nan))[0]


@pytest.mark.parametrize("n,d", [(2, 3), (3, 10), (6, 10), (9, 10), (12, 13), (5, 40)])
def test_the_thin_certificate_holds_every_candidate_exactly_when_the_batched_code_does(n, d):
    """n < d candidates with a smallest singular value from 1e-13 to 1 (relative), inside K = n + 3 arms: where
    the certificate fires every candidate is held by the full algorithm, and the batched spanner always equals
    the full algorithm."""
    from privbandit.agents.spanner import _certifiable, _certified

    assert _certifiable(n, d)
    rng = np.random.default_rng(n * 100 + d)
    fired, phis, masks = 0, [], []
    for s_min in np.logspace(-13, 0, 27):
        q1, _ = np.linalg.qr(rng.standard_normal((n, n)))
        q2, _ = np.linalg.qr(rng.standard_normal((d, n)))
        sub = (q1 * np.geomspace(1.0, s_min, n)) @ q2.T * rng.uniform(0.01, 100)
        phi = rng.standard_normal((n + 3, d))
        mask = np.zeros(n + 3, dtype=bool)
        arms = np.sort(rng.choice(n + 3, size=n, replace=False))
        phi[arms], mask[arms] = sub, True
        full = _algorithm(phi[None], mask[None], 2.0)[0]
        if _certified(sub[None])[0]:
            fired += 1
            assert np.array_equal(full, mask) and s_min > 1e-5
        elif s_min > 1e-3:
            raise AssertionError("the certificate must fire on well-conditioned sets")
        np.testing.assert_array_equal(barycentric_spanner(phi[None], mask[None])[0], full)
        phis.append(phi)
        masks.append(mask)
    assert fired >= 6
    phi, mask = np.stack(phis * 3), np.stack(masks * 3)        # certified and uncertified sets in one batch
    mask[::4] = True                                            # with all-arm and other counts mixed in
    mask[1::5, : n + 1] = True
    order = rng.permutation(phi.shape[0])
    np.testing.assert_array_equal(barycentric_spanner(phi[order], mask[order]),
                                  _algorithm(phi[order], mask[order], 2.0))


def test_only_sizes_the_proof_covers_are_certified():
    from privbandit.agents.spanner import _certifiable

    assert _certifiable(10, 10) and _certifiable(16, 16) and not _certifiable(17, 17)
    assert _certifiable(9, 10) and _certifiable(12, 13) and not _certifiable(13, 14)    # thin: n <= 12
    assert not _certifiable(12, 400) and _certifiable(5, 400)                           # sqrt(d) 2^n <= 5e4
    assert not _certifiable(1, 10) and not _certifiable(11, 10)                         # one candidate; n > d
