"""IW-GLM-LDP's SGD stages: the once-per-fit pieces (U's copy and clipped eigendecomposition, the in-place
stage close) give exactly what the per-stage code gave, one row at a time and in blocks; SymPriv's one-matrix
release; the gradient statistic calls the link it is given."""

from __future__ import annotations

import numpy as np
import pytest

from privbandit.links import identity_link, logistic_link
from privbandit.oracles import make_oracle
from privbandit.oracles.glm_ldp import GLMGradientStatistic, IWGLMLDPFit, project_ellipsoid
from privbandit.privacy import LocalRandomizer


class _PerStageFit(IWGLMLDPFit):
    """The SGD stages as they were written before the once-per-fit pieces (the reference)."""

    def _randomizer(self, stage):
        if stage < self.n_spectral_stages:
            return super()._randomizer(stage)
        return LocalRandomizer(GLMGradientStatistic(self.u.copy(), self.w.copy(), self.link), self._grad_radius,
                               self._grad_channel, self.bound)

    def _close_stage(self, stage):
        if stage < self.n_spectral_stages:
            super()._close_stage(stage)
            return
        if self._count == 0:
            return
        mu = self.link.mu
        g = self._sum / self._count + self.lam * mu * (self.u @ self.w)
        self._step += 1
        eta = (2.0 if self.oracle.constants == "theory" else 1.0) / (mu * self._step)
        if getattr(self, "_ref_eig", None) is None:
            self._ref_eig = np.linalg.eigh(self.u)
        self.w = project_ellipsoid(self.w - eta * g, self.u, self._ref_eig)
        self._iterates.append(self.w)
        self._sum = np.zeros(self.dim)
        self._count = 0


def _rows(rng, n, d, scale=0.9):
    x = rng.normal(size=(n, d))
    x *= scale * rng.uniform(0.0, 1.0, size=(n, 1)) / np.linalg.norm(x, axis=1, keepdims=True)
    return x, np.clip(x @ (np.ones(d) / np.sqrt(d)) + 0.3 * rng.normal(size=n), -1.0, 1.0)


@pytest.mark.parametrize("link", [identity_link(), logistic_link()])
@pytest.mark.parametrize("constants, epsilon, n, d", [("practical", 1.0, 700, 3), ("practical", 50.0, 1500, 5),
                                                      ("theory", 5.0, 300, 2), ("practical", 1e4, 900, 4)])
def test_sgd_stages_equal_the_per_stage_code_bit_for_bit(link, constants, epsilon, n, d):
    """One row at a time (the step loop) and in blocks: every iterate, the estimate, the ledger and the
    generator state equal those of the per-stage reference (both branches of the projection run)."""
    oracle = make_oracle("iw-glm-ldp", epsilon=epsilon, delta=1e-5, constants=constants)
    rng = np.random.default_rng(n + d)
    x, y = _rows(rng, n, d)
    projected = 0
    for block in (1, 37):
        fits = [cls(oracle, n, d, 1.0, link, np.random.default_rng(7)) for cls in (IWGLMLDPFit, _PerStageFit)]
        for fit in fits:
            for i in range(0, n, block):
                fit.add_clipped(x[i:i + block], y[i:i + block])
        new, ref = (fit.result() for fit in fits)
        assert fits[0]._step == fits[1]._step > 1
        for a, b in zip(fits[0]._iterates, fits[1]._iterates, strict=True):
            assert a.tobytes() == b.tobytes()
        projected += sum(float(np.linalg.norm(fits[0].u @ w)) > 1.0 - 1e-9 for w in fits[0]._iterates)
        assert new.theta.tobytes() == ref.theta.tobytes() and new.info["w"].tobytes() == ref.info["w"].tobytes()
        assert fits[0].ledger.releases == fits[1].ledger.releases
        assert fits[0].rng.bit_generator.state == fits[1].rng.bit_generator.state
    if epsilon >= 50.0:
        assert projected > 0                  # steps that left W_U were projected back onto its boundary


def test_sgd_statistics_share_one_read_only_copy_of_the_fixed_u():
    """Every SGD stage's statistic holds U after the spectral stages, as an equal read-only copy (not the fit's
    own array); each stage's w is a copy of the iterate when the stage starts."""
    oracle = make_oracle("iw-glm-ldp", epsilon=2.0, delta=1e-5)
    n, d = 1200, 3
    x, y = _rows(np.random.default_rng(1), n, d)
    fit = oracle.start(n, dim=d, rng=3)
    seen = []
    for i in range(n):
        fit.add(x[i], float(y[i]))
        if fit._closed > fit.n_spectral_stages and fit._closed < len(fit.stage_sizes):
            stat = fit._randomizer(fit._closed).statistic
            seen.append(stat)
            assert stat.w is not fit.w and stat.w.tobytes() == fit.w.tobytes()
    assert len(seen) > 10
    assert all(s.u is seen[0].u for s in seen) and seen[0].u is not fit.u
    assert seen[0].u.tobytes() == fit.u.tobytes() and not seen[0].u.flags.writeable


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
    """SymPriv's noise on one square matrix (C-, Fortran-ordered or strided) equals the batch of one, with the
    same draws, and is symmetric."""
    from privbandit.privacy import SymmetricGaussianMechanism

    rng = np.random.default_rng(2)
    mech = SymmetricGaussianMechanism(2.0, 1.3)
    for n in (1, 2, 3, 10, 17):
        a = rng.normal(size=(n, n))
        sym = a + a.T * (1 + 1e-13)
        for m in (sym, np.asfortranarray(sym), np.repeat(np.repeat(sym, 2, 0), 2, 1)[::2, ::2]):
            g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
            one, batch = mech._add_noise(m, g1), mech._add_noise(m[None], g2)[0]
            assert one.tobytes() == batch.tobytes() and g1.bit_generator.state == g2.bit_generator.state
            assert np.array_equal(one, one.T)


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
