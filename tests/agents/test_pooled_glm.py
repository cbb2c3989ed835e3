"""The GLM's working rows (GLMWorkingRows) and the pooled GLM agents built on them (elim-glm-jdp-pooled and
elim-glm-ldp-pooled): bounded rows, an IRLS step, the oracles' calibration unchanged, learning, step == batch."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from privbandit.agents import check_agent, make_agent
from privbandit.agents.base import BanditSpec
from privbandit.agents.checks import check_step_loop_equals_batch_path, synthetic_stream
from privbandit.agents.pooled import GLM_RESPONSE_BOUND, GLMWorkingRows, LinearRows, PooledReleases
from privbandit.links import Link, identity_link, logistic_link
from privbandit.sim import run_many

LINKS = {"identity": identity_link(), "logistic-2": logistic_link(2.0), "logistic-6": logistic_link(6.0)}


def _unit_rows(m: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows with ||phi|| <= 1 (some on the sphere) and rewards in [-1, 1] (some at the ends)."""
    gen = np.random.default_rng(seed)
    x = gen.standard_normal((m, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x[m // 2:] *= gen.random((m - m // 2, 1))
    y = np.concatenate([gen.choice([-1.0, 1.0], m // 2), gen.uniform(-1.0, 1.0, m - m // 2)])
    return x, y


@pytest.mark.parametrize("link", sorted(LINKS))
@pytest.mark.parametrize("bound", [0.25, 1.0, 4.0])
def test_working_rows_stay_inside_the_oracles_bounds(link, bound):
    """||phi'|| <= ||phi|| and |y'| <= 1 for every row, every theta (even far outside ||theta|| <= S) and every C:
    the bounds IW-Regression-DP's sensitivities and IW-Regression-LDP's randomizers are computed from."""
    x, y = _unit_rows(500, 4, 0)
    gen = np.random.default_rng(1)
    for theta in (np.zeros(4), gen.standard_normal(4), 50.0 * gen.standard_normal(4)):
        xs, ys = GLMWorkingRows(bound).rows(LINKS[link], theta, x, y, 1.0, 1.0)
        assert xs.shape == x.shape and ys.shape == y.shape
        assert np.all(np.linalg.norm(xs, axis=1) <= np.linalg.norm(x, axis=1) * (1 + 1e-12))
        assert np.all(np.abs(ys) <= 1.0)
        # phi' is phi scaled by sqrt(w / L) in [sqrt(mu / L), 1]
        ratio = np.linalg.norm(xs, axis=1) / np.linalg.norm(x, axis=1)
        assert ratio.min() >= np.sqrt(LINKS[link].mu / LINKS[link].lipschitz) * (1 - 1e-12)


def test_working_rows_of_the_identity_link_are_the_rows_themselves():
    """w = L = 1 and z = y: with C = 1 the GLM rows are the linear model's, and the release is not rescaled."""
    x, y = _unit_rows(200, 3, 2)
    rows = GLMWorkingRows()
    assert GLM_RESPONSE_BOUND == 1.0
    xs, ys = rows.rows(identity_link(), np.array([0.3, -0.2, 0.5]), x, y, 1.0, 1.0)
    np.testing.assert_array_equal(xs, x)
    np.testing.assert_allclose(ys, y, rtol=0, atol=1e-15)
    assert rows.theta_scale_of(identity_link()) == 1.0 == LinearRows().theta_scale_of(logistic_link(6.0))
    assert LinearRows().rows(logistic_link(6.0), np.ones(3), x, y, 1.0, 1.0) == (x, y)


@pytest.mark.parametrize("scale", [2.0, 6.0])
def test_least_squares_of_the_working_rows_is_a_newton_step(scale):
    """With rewards at their means (no noise) the least squares of the rows at theta_k, times C / L, is the IRLS
    step: from theta = 0 a few steps reach theta* (quadratic convergence), and at theta* the step stays there.
    theta* is small enough that the clip never acts."""
    link = logistic_link(scale)
    x, _ = _unit_rows(400, 3, 3)
    theta_star = np.array([0.1, -0.08, 0.05])
    mean = link(x @ theta_star)
    rows = GLMWorkingRows()
    theta = np.zeros(3)
    errors = []
    for _ in range(4):
        xs, ys = rows.rows(link, theta, x, mean, 1.0, 1.0)
        assert np.all(np.abs(ys) < 1.0)
        theta = rows.theta_scale_of(link) * np.linalg.lstsq(xs, ys, rcond=None)[0]
        errors.append(float(np.linalg.norm(theta - theta_star)))
    assert errors[-1] < 1e-10 and errors[1] < 0.1 * errors[0]
    xs, ys = rows.rows(link, theta_star, x, mean, 1.0, 1.0)
    np.testing.assert_allclose(rows.theta_scale_of(link) * np.linalg.lstsq(xs, ys, rcond=None)[0], theta_star,
                               atol=1e-12)


def test_the_response_bound_is_checked():
    with pytest.raises(ValueError, match="response_bound"):
        GLMWorkingRows(0.0)
    with pytest.raises(TypeError, match="rows must be a RowTransform"):
        PooledReleases(rows="glm")


GLM_SPEC = BanditSpec(n_arms=4, dim=3, horizon=256, link=logistic_link(6.0))


@pytest.mark.parametrize("name", ["elim-glm-jdp-pooled", "elim-glm-ldp-pooled", "elim-glm-ldp-vec"])
def test_the_glm_agents_keep_the_agent_contract(name):
    """check_agent (release replay to a neighbour, ledger, step == batch) and, on a logistic spec where the rows
    are transformed, the step loop equals the batch path."""
    agent = make_agent(name, epsilon=1.0, delta=1e-5, first_epoch=16)
    check_agent(agent, horizon=128)
    check_step_loop_equals_batch_path(agent, n_arms=4, dim=3, horizon=256, spec=GLM_SPEC)


def play_on(agent, spec, x, r, max_chunk=None):
    """Play the stream (x, r) through the batch interface after ``reset(spec)`` (play_batch resets with the
    identity link)."""
    agent.reset(spec, rng=0)
    t, rows = 0, np.arange(x.shape[0])
    while t < x.shape[0]:
        m = min(int(agent.rounds_until_update()), max_chunk or x.shape[0])
        a = np.asarray(agent.act_batch(x[t:t + m]))
        agent.update(x[t:t + m][rows[:m], a], r[t:t + m][rows[:m], a])
        t += m
    return agent


def _ledger(agent, spec):
    x, r = synthetic_stream(spec.n_arms, spec.dim, spec.horizon, 0)
    play_on(agent, spec, x, r)
    return [(rel.start, rel.stop, rel.entry) for rel in agent.ledger.releases], agent


@pytest.mark.parametrize(("glm", "linear"), [("elim-glm-jdp-pooled", "elim-jdp-pooled"),
                                             ("elim-glm-ldp-pooled", "elim-ldp-pooled")])
def test_the_privacy_calibration_is_the_linear_agents(glm, linear):
    """On a logistic spec the GLM agent's ledger (every release's rows, mechanism, sensitivity and noise) is the
    linear agent's: the row transform changes the rows' values, never the mechanisms. On the identity link the
    two agents are the same agent (C = 1) given the same constants, release for release."""
    def made(name):
        learner = dataclasses.replace(make_agent(name, epsilon=1.0).learner, reg_scale=0.1, z=1.0, kappa=0.5, rho=0.1)
        return make_agent(name, epsilon=1.0, delta=1e-5, first_epoch=16, growth=2.0, pooling=learner)

    led_glm, _ = _ledger(made(glm), GLM_SPEC)
    led_lin, _ = _ledger(made(linear), GLM_SPEC)
    assert led_glm == led_lin and len(led_glm) >= 8
    spec = BanditSpec(n_arms=4, dim=3, horizon=256)
    _, a = _ledger(made(glm), spec)
    _, b = _ledger(made(linear), spec)
    for ea, eb in zip(a.estimates, b.estimates, strict=True):
        np.testing.assert_allclose(ea.theta, eb.theta, rtol=1e-12, atol=1e-14)


def test_elim_glm_ldp_vec_is_elim_ldp_vec_on_the_working_rows():
    """The same one pure-epsilon L2-ball report per user on a logistic spec, different rows (different releases);
    on the identity link the same agent, release for release."""
    def made(name):
        return make_agent(name, epsilon=1.0, delta=1e-5, first_epoch=16)

    (led_glm, a), (led_lin, b) = _ledger(made("elim-glm-ldp-vec"), GLM_SPEC), _ledger(made("elim-ldp-vec"), GLM_SPEC)
    assert led_glm == led_lin == [(0, 256, led_lin[0][2])] and led_lin[0][2].name == "l2-ball"
    assert not np.allclose(a.estimates[-1].theta, b.estimates[-1].theta)
    assert a.learner.rows == GLMWorkingRows() and b.learner.rows == LinearRows()
    spec = BanditSpec(n_arms=4, dim=3, horizon=256)
    _, a = _ledger(made("elim-glm-ldp-vec"), spec)
    _, b = _ledger(made("elim-ldp-vec"), spec)
    for ea, eb in zip(a.estimates, b.estimates, strict=True):
        np.testing.assert_allclose(ea.theta, eb.theta, rtol=1e-12, atol=1e-14)


def test_the_rows_are_linearised_at_the_last_release():
    """Epoch j's rows are built at the theta epoch j - 1 released (0 before the first release)."""
    agent = make_agent("elim-glm-jdp-pooled", epsilon=1.0, delta=1e-5, first_epoch=16, growth=2.0)
    x, r = synthetic_stream(4, 3, 112, 0)
    seen = []
    original = agent.learner.rows.rows

    class Spy(GLMWorkingRows):
        def rows(self, link, theta, xx, yy, bound, norm_bound):
            seen.append(np.array(theta))
            return original(link, theta, xx, yy, bound, norm_bound)

    agent.learner = dataclasses.replace(agent.learner, rows=Spy())
    play_on(agent, GLM_SPEC, x, r, max_chunk=8)
    assert not seen[0].any()
    released = [e.theta for e in agent.estimates]
    assert any(np.array_equal(s, released[0]) for s in seen) and any(np.array_equal(s, released[-2]) for s in seen)
    assert agent.estimates[-1].link.is_identity        # the release is on the linear predictor


@pytest.mark.parametrize(("name", "family", "dim"), [("elim-glm-jdp-pooled", "heavy-tailed", 5),
                                                     ("elim-glm-ldp-pooled", "rare-direction", 3),
                                                     ("elim-glm-ldp-vec", "rare-direction", 3)])
def test_the_glm_agents_learn_on_a_small_instance(name, family, dim):
    """On a steep logistic bandit (slope 6) the agent's regret at T = 2^14, epsilon 1, is well below uniform play's
    (measured: 0.41x on heavy-tailed d = K = 5, joint DP; 0.07x on rare-direction d = K = 3, local DP)."""
    agents = [make_agent(name, epsilon=1.0, delta=1e-5), make_agent("uniform")]
    tabs = run_many(agents, "PrivGLMCB-v0", 2 ** 14, 0,
                    env_kwargs=dict(family=family, dim=dim, n_arms=dim, link_kwargs={"scale": 6.0}))
    ours, uniform = (float(t["cum_regret"].iloc[-1]) for t in tabs)
    assert ours < 0.5 * uniform, (ours, uniform)


def test_the_glm_agent_is_the_pooled_agent_with_glm_rows():
    agent = make_agent("elim-glm-jdp-pooled", epsilon=1.0, delta=1e-5)
    assert isinstance(agent.learner, PooledReleases) and agent.learner.rows == GLMWorkingRows()
    assert make_agent("elim-jdp-pooled", epsilon=1.0, delta=1e-5).learner.rows == LinearRows()


def _tanh_with_nan_beyond_one(z):
    """tanh, NaN on |z| > 1: finite on its declared domain |z| <= 1, not on an agent's wider [-B S, B S]."""
    z = np.asarray(z, dtype=float)
    return np.where(np.abs(z) > 1.0, np.nan, np.tanh(z))


def _tanh_derivative(z):
    return 1.0 - np.tanh(np.asarray(z, dtype=float)) ** 2


HOLEY = Link("holey", _tanh_with_nan_beyond_one, _tanh_derivative, mu=0.4, lipschitz=1.0)


def test_working_rows_refuse_non_finite_values_before_any_oracle_sees_them():
    x, y = _unit_rows(50, 3, 4)
    theta = np.array([0.9, 0.0, 0.0])                       # |eta| <= 0.9: inside the link's domain
    xs, ys = GLMWorkingRows().rows(HOLEY, theta, x, y, 1.0, 1.0)
    assert np.isfinite(xs).all() and np.isfinite(ys).all()
    # with B S = 2 a user's predictor can leave the domain: np.clip would keep the NaN; the rows refuse it
    with pytest.raises(ValueError, match=r"GLM working rows are not finite: the link 'holey' gives NaN or inf at "
                                         r"a predictor in \[-B S, B S\] = \[-2, 2\] \(it was checked on its "
                                         r"domain \|z\| <= 1 only"):
        GLMWorkingRows().rows(HOLEY, 2.0 * theta, 2.0 * x, y, 2.0, 1.0)
    with pytest.raises(ValueError, match="not finite"):
        GLMWorkingRows().rows(logistic_link(2.0), np.array([np.nan, 0.0, 0.0]), x, y, 1.0, 1.0)


def test_the_agent_refuses_the_row_before_its_oracle_gets_it(monkeypatch):
    """elim-glm-jdp-pooled (IW-Regression-DP, which does not clip again) on a spec whose B S reaches the hole."""
    from privbandit.oracles.base import EpochFit

    added = []
    real = EpochFit.add_clipped
    monkeypatch.setattr(EpochFit, "add_clipped", lambda self, x, y: (added.append(x.copy()), real(self, x, y)))
    learner = dataclasses.replace(make_agent("elim-glm-jdp-pooled", epsilon=1.0).learner, norm_bound=2.0)
    agent = make_agent("elim-glm-jdp-pooled", epsilon=1.0, delta=1e-5, first_epoch=4, pooling=learner)
    agent.reset(BanditSpec(n_arms=2, dim=3, horizon=64, bound=1.0, link=HOLEY), rng=0)
    agent.learning.theta = np.array([1.5, 0.0, 0.0])        # a release far along e_1 (public; set for the test)
    agent.update(np.array([0.1, 0.0, 0.0]), 0.5)          # eta = 0.15: fine
    with pytest.raises(ValueError, match="GLM working rows are not finite"):
        agent.update(np.array([1.0, 0.0, 0.0]), 0.5)      # eta = 1.5: nu is NaN there
    assert len(added) == 1 and agent.t == 1


def test_add_clipped_refuses_nan_and_inf_that_add_would_refuse():
    from privbandit.oracles import make_oracle

    fit = make_oracle("ridge").start(8, dim=2, bound=1.0, link=identity_link(), rng=0)
    fit.add_clipped(np.array([[0.5, 0.0]]), np.array([0.5]))
    for x, y in ((np.array([[np.nan, 0.0]]), np.array([0.5])), (np.array([[0.5, 0.0]]), np.array([np.inf]))):
        with pytest.raises(ValueError, match="add_clipped got NaN or inf"):
            fit.add_clipped(x, y)
        with pytest.raises(ValueError):
            fit.add(x, y)
    assert fit.n_seen == 1
