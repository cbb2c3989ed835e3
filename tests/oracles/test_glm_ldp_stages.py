"""IW-GLM-LDP's SGD stages, seen from outside the fit: the step loop and blocks give one estimate and one ledger;
the estimate lies in W_U; the projection onto W_U is the Euclidean one; every user is reported once, locally,
within the budget; SymPriv's one-matrix release is the batch of one and has the declared noise; the gradient
statistic calls the link it is given.

(The per-stage implementation this file once kept to compare bytes with is gone: what it pinned, the fit's private
iterates and buffers, is not behaviour. That every noise draw matches its ledger entry is
``tests/oracles/test_release_ledger.py``'s, for every registered private oracle.)
"""

from __future__ import annotations

import numpy as np
import pytest

from privbandit.links import identity_link, logistic_link
from privbandit.oracles import make_oracle
from privbandit.oracles.glm_ldp import GLMGradientStatistic, project_ellipsoid
from privbandit.privacy import PrivacySpec

CONFIGS = [("practical", 1.0, 700, 3), ("practical", 50.0, 1500, 5), ("theory", 5.0, 300, 2),
           ("practical", 1e4, 900, 4)]
"""(constants, epsilon, n, d): both constants, budgets from tight to all but non-private."""


def _rows(rng, n, d, scale=0.9):
    x = rng.normal(size=(n, d))
    x *= scale * rng.uniform(0.0, 1.0, size=(n, 1)) / np.linalg.norm(x, axis=1, keepdims=True)
    return x, np.clip(x @ (np.ones(d) / np.sqrt(d)) + 0.3 * rng.normal(size=n), -1.0, 1.0)


def _fit(oracle, x, y, link, block, rng=7):
    """The fit of ``oracle`` fed (x, y) ``block`` rows at a time (block 1: the step loop's one row per call)."""
    fit = oracle.start(x.shape[0], dim=x.shape[1], link=link, rng=rng)
    for i in range(0, x.shape[0], block):
        if block == 1:
            fit.add(x[i], float(y[i]))
        else:
            fit.add(x[i:i + block], y[i:i + block])
    return fit


@pytest.mark.parametrize("link", [identity_link(), logistic_link()], ids=["identity", "logistic"])
@pytest.mark.parametrize("constants, epsilon, n, d", CONFIGS)
def test_the_step_loop_and_blocks_give_one_estimate_and_one_ledger(link, constants, epsilon, n, d):
    """One row per call (a Gymnasium user's step loop) and blocks of 37 (stage boundaries inside blocks) give the
    same estimate (theta, width, the SGD iterate up to rounding; the number of steps) and the same ledger."""
    oracle = make_oracle("iw-glm-ldp", epsilon=epsilon, delta=1e-5, constants=constants)
    x, y = _rows(np.random.default_rng(n + d), n, d)
    one, blocks = (_fit(oracle, x, y, link, block) for block in (1, 37))
    a, b = one.result(), blocks.result()
    assert a.info["steps"] == b.info["steps"] > 1
    for got, want in [(a.theta, b.theta), (a.info["w"], b.info["w"]), (a.width_matrix, b.width_matrix)]:
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)      # sums in another order: rounding only
    assert a.width_scale == b.width_scale
    assert one.ledger.releases == blocks.ledger.releases


@pytest.mark.parametrize("constants, epsilon, n, d", CONFIGS)
def test_the_estimate_lies_in_w_u_and_every_user_is_reported_once_within_the_budget(constants, epsilon, n, d):
    """The SGD iterate w the estimate reports satisfies ||U w|| <= 1 and theta = U w (scaled into the unit ball
    by rounding only); the ledger's local releases cover each user exactly once and compose to the budget."""
    oracle = make_oracle("iw-glm-ldp", epsilon=epsilon, delta=1e-5, constants=constants)
    x, y = _rows(np.random.default_rng(n + d), n, d)
    fit = _fit(oracle, x, y, identity_link(), 37)
    est = fit.result()
    u, w = est.width_matrix, est.info["w"]
    assert np.linalg.norm(est.theta) <= 1.0 + 1e-12
    np.testing.assert_allclose(est.theta, u @ w / max(1.0, np.linalg.norm(u @ w)), rtol=1e-12, atol=1e-15)
    assert np.linalg.norm(u @ w) <= 1.0 + 1e-9
    covered = np.zeros(n, dtype=int)
    for release in fit.ledger.releases:
        assert release.kind == "local"
        covered[release.start:release.stop] += 1
    assert (covered == 1).all()
    assert fit.ledger.check(PrivacySpec("ldp", epsilon, 1e-5)) <= epsilon * (1 + 1e-9)


def test_sgd_steps_sets_the_number_of_steps():
    """``sgd_steps`` is the number of SGD steps the estimate reports (one stage each), whatever the link."""
    x, y = _rows(np.random.default_rng(3), 800, 3)
    for steps in (5, 40):
        oracle = make_oracle("iw-glm-ldp", epsilon=2.0, delta=1e-5, sgd_steps=steps)
        for link in (identity_link(), logistic_link()):
            assert _fit(oracle, x, y, link, 64).result().info["steps"] == steps


@pytest.mark.parametrize("d", [1, 2, 5])
def test_project_ellipsoid_is_the_euclidean_projection_onto_w_u(d):
    """A point inside {w : ||U w|| <= 1} comes back unchanged; one outside lands on the boundary at the point the
    optimality condition names (v - w = mu U^2 w with mu >= 0), nearer v than any other point of the set tried."""
    rng = np.random.default_rng(d)
    a = rng.normal(size=(d, d))
    u = a @ a.T + 0.1 * np.eye(d)
    eig = np.linalg.eigh(u)
    for scale in (0.2, 3.0, 50.0):
        v = rng.normal(size=d)
        v *= scale / np.linalg.norm(u @ v)
        for w in (project_ellipsoid(v, u), project_ellipsoid(v, u, eig)):
            if scale < 1.0:
                assert np.array_equal(w, v)
                continue
            np.testing.assert_allclose(np.linalg.norm(u @ w), 1.0, rtol=1e-9)
            g = u @ u @ w
            mu = float((v - w) @ g / (g @ g))
            assert mu > 0
            np.testing.assert_allclose(v - w, mu * g, atol=1e-8 * np.linalg.norm(v))
            others = rng.normal(size=(200, d))
            others /= np.maximum(1.0, np.linalg.norm(others @ u, axis=1, keepdims=True))   # points of the set
            assert np.linalg.norm(v - w) <= np.linalg.norm(v - others, axis=1).min() + 1e-12


@pytest.mark.parametrize("play", ["spanner", "greedy"])
def test_uninformative_step_loop_plays_uniformly_on_the_spanner_of_all_arms(play):
    """While no release is informative (local DP at small t) the step loop plays what the batch path plays."""
    from privbandit.agents import make_agent
    from privbandit.agents.checks import play_batch, play_loop

    k, d, horizon = 6, 4, 300
    rng = np.random.default_rng(4)
    feats = rng.normal(size=(horizon, k, d))
    feats /= 1.5 * np.linalg.norm(feats, axis=2, keepdims=True)
    rewards = np.clip(rng.normal(size=(horizon, k)) * 0.5, -1.0, 1.0)

    def agent():
        return make_agent("elim-glm-ldp", epsilon=1.0, play=play)

    a = play_loop(agent(), feats, rewards, rng=11)
    b = play_batch(agent(), feats, rewards, rng=11).actions
    assert np.array_equal(a, b) and len(set(a.tolist())) > 1


def test_sympriv_releases_one_matrix_as_the_batch_of_one():
    """SymPriv's release of one square matrix (C-, Fortran-ordered or strided) equals the batch of one, with the
    same draws, and is symmetric."""
    from privbandit.privacy import SymmetricGaussianMechanism

    rng = np.random.default_rng(2)
    mech = SymmetricGaussianMechanism(2.0, 1.3)
    for n in (1, 2, 3, 10, 17):
        a = rng.normal(size=(n, n))
        sym = a + a.T * (1 + 1e-13)
        for m in (sym, np.asfortranarray(sym), np.repeat(np.repeat(sym, 2, 0), 2, 1)[::2, ::2]):
            g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
            one, batch = mech.release(m, g1), mech.release(m[None], g2)[0]
            assert np.array_equal(one, batch) and g1.random() == g2.random()
            assert np.array_equal(one, one.T)


def test_sympriv_noise_has_the_declared_sigma_on_and_above_the_diagonal():
    """SymPriv adds N(0, sigma^2) to each entry on and above the diagonal, independently, mirrored below it: the
    noise of a zero matrix is symmetric, and its upper triangle's and diagonal's spreads are sigma."""
    from privbandit.privacy import SymmetricGaussianMechanism

    sigma, n = 1.3, 120
    noise = SymmetricGaussianMechanism(2.0, sigma).release(np.zeros((n, n)), np.random.default_rng(8))
    assert np.array_equal(noise, noise.T)
    upper = noise[np.triu_indices(n, 1)]                     # 7,140 draws: the spread within 4%
    np.testing.assert_allclose(upper.std(), sigma, rtol=0.04)
    np.testing.assert_allclose(np.diag(noise).std(), sigma, rtol=0.2)
    assert abs(np.corrcoef(upper[:-1], upper[1:])[0, 1]) < 0.05


def test_the_gradient_statistic_calls_the_link_it_is_given():
    """GLMGradientStatistic predicts through its link, a Link subclass's own ``__call__`` included."""
    import dataclasses

    from privbandit.links import Link

    class Shifted(Link):
        def __call__(self, z):
            return np.asarray(z, dtype=float) + 0.125

    rng = np.random.default_rng(6)
    u, w, x = np.eye(4) + 0.05, rng.normal(size=4) * 0.3, rng.normal(size=4) * 0.2
    base = identity_link()
    for link, shift in [(base, 0.0), (Shifted(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)}),
                                      0.125)]:
        got = GLMGradientStatistic(u, w, link)(x[None], np.array([0.1]))[0]
        ux = x @ u
        pred = min(max(float(ux @ w) + shift, -1.0), 1.0)
        np.testing.assert_allclose(got, ux / np.linalg.norm(ux) * (pred - 0.1), rtol=1e-12)
