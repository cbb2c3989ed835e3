"""The step loop (one ``act`` + one ``update`` at a time, as a Gymnasium user drives an agent).

``act`` is ``act_batch`` of one context and ``update`` of one row the block update with one row. What it
must keep: a row inside the ball reaches the fit as an unchanged copy of itself; bad rows
raise or warn (NaN/inf and wrong shapes raise ValueError, rows above B and rewards outside [-1, 1] give a
ClippingWarning); it draws the batch path's uniforms and chooses its arms but at rounding ties (margin-aware);
LinUCB's rank-m update is the inverse it stands for; fits fed one row at a time agree with fits fed the block to
rounding.
"""

import warnings

import numpy as np
import pytest

from privbandit._validation import check_array
from privbandit.agents import BanditSpec, UniformAgent, agent_is_private, make_agent
from privbandit.agents.checks import check_step_loop_equals_batch_path, play_batch, play_loop
from privbandit.privacy import ClippingWarning
from privbandit.privacy.clipping import clip_features, within_ball

PER_ROUND = ("linucb", "squarecb-nonprivate", "epsilon-greedy", "uniform")


def _rows_near_the_bound(rng, n, d, bound):
    """Rows whose norm is within a few ulps of ``bound``, on both sides, and a few well inside and outside."""
    u = rng.normal(size=(n, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    ulps = rng.integers(-8 * d, 8 * d, size=n)
    scale = bound * (1.0 + ulps * 2.0 ** -52)
    scale[:5] = bound * np.array([0.5, 1.0, 1.5, 1e-3, 1e3])
    return u * scale[:, None]


class _Keep(UniformAgent):
    def _observe(self, x, y):
        self.kept = (x, y)


@pytest.mark.parametrize("bound", [1.0, 0.3, 7.0])
@pytest.mark.parametrize("d", [1, 3, 10, 40])
def test_a_row_reaches_the_fit_unchanged_exactly_when_it_is_inside_the_ball(d, bound):
    """Rows within a few ulps of B on both sides: one ``update`` hands the fit the row itself when its squared
    norm is <= B^2 (the test with which clip_features keeps rows, no warning) and clip_features' row otherwise."""
    rng = np.random.default_rng(d)
    rows = _rows_near_the_bound(rng, 400, d, bound)
    agent = _Keep().reset(BanditSpec(n_arms=2, dim=d, horizon=len(rows), bound=bound), rng=0)
    inside = 0
    for row in rows:
        keep = bool(np.einsum("i,i->", row, row) <= bound * bound)
        with warnings.catch_warnings():
            warnings.simplefilter("error" if keep else "ignore", ClippingWarning)
            agent.update(row, 0.25)
        x, y = agent.kept
        assert y.tolist() == [0.25] and x.shape == (1, d)
        if keep:
            inside += 1
            assert np.array_equal(x[0], row) and x.base is not row
        else:                                               # the projection (a no-op for some rounding cases)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ClippingWarning)
                assert np.array_equal(x[0], clip_features(row[None], bound)[0])
            assert np.linalg.norm(x[0]) <= bound * (1 + 1e-12)
    assert 0 < inside < len(rows)
    contexts = rows[: (len(rows) // 10) * 10].reshape(-1, 10, d)
    for ctx in contexts:                                    # the test with which clip_features keeps rows
        assert within_ball(ctx, bound) == bool(np.all(np.einsum("...i,...i->...", ctx, ctx) <= bound * bound))


def test_the_ball_test_refuses_nan_inf_and_overflow():
    row = np.full(4, 0.1)
    assert within_ball(row, 1.0) and within_ball(np.stack([row] * 3), 1.0)
    for bad in (np.nan, np.inf, -np.inf, 1e200):
        one = row.copy()
        one[2] = bad
        assert not within_ball(one, 1.0)
        ctx = np.stack([row] * 3)
        ctx[1, 2] = bad
        assert not within_ball(ctx, 1.0)


@pytest.mark.parametrize("name", PER_ROUND)
def test_bad_rows_raise_or_warn_on_the_per_round_path(name):
    spec = BanditSpec(n_arms=4, dim=3, horizon=50)
    agent = make_agent(name).reset(spec, rng=0)
    ctx = np.full((4, 3), 0.2)
    for bad in (np.nan, np.inf):
        x = ctx.copy()
        x[1, 2] = bad
        with pytest.raises(ValueError, match="features"):
            agent.act(x)
        with pytest.raises(ValueError):
            agent.update(x[1], 0.5)
    with pytest.raises(ValueError, match="shape"):
        agent.act(ctx[:, :2])
    with pytest.raises(ValueError):
        agent.update(ctx[0, :2], 0.5)
    with pytest.raises(ValueError):
        agent.update(ctx[0], np.nan)
    assert agent.t == 0                                     # nothing was absorbed
    with pytest.warns(ClippingWarning, match="feature"):
        agent.act(ctx * 10.0)
    with pytest.warns(ClippingWarning, match="feature"):
        agent.update(ctx[0] * 10.0, 0.5)
    with pytest.warns(ClippingWarning, match="reward"):
        agent.update(ctx[0], 3.0)
    assert agent.t == 2


def test_clipped_rows_teach_linucb_what_the_projected_rows_teach():
    spec = BanditSpec(n_arms=3, dim=4, horizon=20)
    rng = np.random.default_rng(5)
    big, small = make_agent("linucb").reset(spec, rng=0), make_agent("linucb").reset(spec, rng=0)
    for _ in range(10):
        row = rng.normal(size=4) * 3.0
        with pytest.warns(ClippingWarning):
            big.update(row, 0.5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ClippingWarning)
            small.update(clip_features(check_array("r", row[None]), 1.0)[0], 0.5)
    assert np.array_equal(big.v_inv, small.v_inv) and np.array_equal(big.theta_, small.theta_)


def _inside(rng, *shape):
    """Random rows (..., d) with norms uniform in [0, 0.9] (inside B = 1)."""
    x = rng.normal(size=shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True) * rng.uniform(0, 0.9, size=shape[:-1] + (1,))


def _linucb_after(rng, spec, rounds):
    agent = make_agent("linucb").reset(spec, rng=0)
    for _ in range(rounds):
        ctx = _inside(rng, spec.n_arms, spec.dim)
        agent.update(ctx[agent.act(ctx)], float(rng.uniform(-1, 1)))
    return agent


@pytest.mark.parametrize("k,d", [(10, 10), (5, 5), (7, 3), (2, 12)])
def test_linucb_scores_are_the_ucb_rule_and_act_takes_their_argmax(k, d):
    rng = np.random.default_rng(k * d)
    spec = BanditSpec(n_arms=k, dim=d, horizon=200)
    agent = _linucb_after(rng, spec, 60)
    for _ in range(100):
        x = _inside(rng, k, d)
        w = ((x @ agent.v_inv) * x).sum(axis=1)
        ref = x @ agent.theta_ + agent.beta_ * np.sqrt(np.maximum(w, 0.0))
        scores = agent._scores(x[None])[0]
        assert np.allclose(scores, ref, rtol=1e-12, atol=1e-14)
        assert agent.act(x) == int(np.argmax(scores))
    many = _inside(rng, 5, k, d)                            # a batch of contexts scores each one alike
    assert np.allclose(agent._scores(many)[2], agent._scores(many[2:3])[0], rtol=1e-12, atol=1e-14)


def test_linucb_ties_and_nan_scores_pick_what_argmax_picks():
    spec = BanditSpec(n_arms=4, dim=2, horizon=10)
    agent = make_agent("linucb").reset(spec, rng=0)
    x = np.array([[0.1, 0.0], [0.3, 0.0], [0.3, 0.0], [0.2, 0.0]])
    assert agent.act(x) == int(np.argmax(agent._scores(x[None])[0])) == 1
    agent.theta_ = np.array([np.nan, 0.0])
    assert agent.act(x) == 0 == int(np.argmax(agent._scores(x[None])[0]))


@pytest.mark.parametrize("m", [1, 2, 3, 7])
@pytest.mark.parametrize("d", [1, 4, 10])
def test_linucb_rank_m_update_is_the_inverse_and_log_determinant_it_stands_for(m, d):
    """Woodbury (Sherman-Morrison for m = 1) in blocks of m rows gives V^{-1} = (lambda I + X^T X)^{-1},
    log det(V / lambda) and theta = V^{-1} X^T y, to rounding."""
    rng = np.random.default_rng(10 * d + m)
    spec = BanditSpec(n_arms=3, dim=d, horizon=70)
    agent = make_agent("linucb", batch_size=m).reset(spec, rng=0)
    x, y = _inside(rng, 63, d), rng.uniform(-1, 1, 63)
    for lo in range(0, 63, m):
        hi = min(63, lo + m)
        agent.update(x[lo:hi], y[lo:hi])
    v = np.eye(d) + x.T @ x                                  # lambda = 1
    assert np.allclose(agent.v_inv, np.linalg.inv(v), rtol=1e-10, atol=1e-12)
    assert agent.logdet == pytest.approx(np.linalg.slogdet(v)[1], rel=1e-10, abs=1e-12)
    agent._refresh(agent.t)
    assert np.allclose(agent.theta_, np.linalg.solve(v, x.T @ y), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", PER_ROUND + ("squarecb-dpsgd",))
def test_per_round_path_chooses_and_draws_what_the_batch_path_does(name):
    spec = BanditSpec(n_arms=6, dim=4, horizon=140)
    rng = np.random.default_rng(0)
    x = _inside(rng, 140, 6, 4)
    r = rng.uniform(-1, 1, size=(140, 6))
    budget = dict(epsilon=1.0, delta=1e-5) if agent_is_private(name) else {}
    check_step_loop_equals_batch_path(lambda: make_agent(name, **budget), rng=4, stream=(x, r))
    one = make_agent(name, **budget)
    loop = play_loop(one, x, r, rng=4)
    assert one.spec == spec and len(set(loop.tolist())) > 1     # the policy does choose (the check has teeth)
    assert np.array_equal(play_loop(make_agent(name, **budget), x, r, rng=4), loop)   # one path, one seed


def test_the_default_one_row_hook_hands_observe_a_copy_and_the_horizon_still_holds():
    from privbandit.agents.simple import UniformAgent

    class Keep(UniformAgent):
        def _observe(self, x, y):
            self.kept = (x, y)

    agent = Keep().reset(BanditSpec(n_arms=2, dim=3, horizon=2), rng=0)
    row = np.full(3, 0.2)
    agent.update(row, np.float64(0.5))
    row[:] = 0.0                                            # the caller reuses its buffer
    assert agent.kept[0].shape == (1, 3) and np.all(agent.kept[0] == 0.2)
    assert agent.kept[1].dtype == np.float64 and agent.kept[1].tolist() == [0.5]
    agent.update(row, 0.5)
    with pytest.raises(ValueError, match="horizon"):
        agent.update(row, 0.5)
    assert agent.t == 2


class _LastArm(UniformAgent):
    """A user's agent that changes the batch rule (``_choose``): the step loop follows it."""

    def _choose(self, features, uniforms):
        return np.full(features.shape[0], features.shape[1] - 1, dtype=np.int64)


def test_a_subclass_that_changes_the_batch_rule_acts_by_it_one_round_at_a_time():
    spec = BanditSpec(n_arms=5, dim=3, horizon=40)
    x = _inside(np.random.default_rng(1), 40, 5, 3)
    agent = _LastArm().reset(spec, rng=0)
    arms = [agent.act(x[t]) for t in range(40)]
    assert arms == [4] * 40                                # not the inherited uniform draw


# -- the epoch agents' step loop ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["ridge", "iw-regression-dp", "ssp", "iw-glm-dp", "iw-regression-ldp", "ssp-local"])
@pytest.mark.parametrize("n_rounds", [1, 3, 7, 50])
def test_rows_added_one_at_a_time_fit_what_the_block_fits_to_rounding(name, n_rounds):
    """One fit fed row by row, one fed the whole block (same noise seed): the same releases, the same
    estimate up to the order of the sums (rtol 1e-9: the rows are summed in another order, u = 2^-53,
    amplified by at most the fits' condition numbers); the caller's rows are neither kept nor changed."""
    from privbandit.links import logistic_link
    from privbandit.oracles import make_oracle

    budget = {} if name == "ridge" else dict(epsilon=1.0, delta=1e-5)
    oracle = make_oracle(name, **budget)
    link = logistic_link() if "glm" in name else None
    rng = np.random.default_rng(n_rounds)
    x, y = _inside(rng, n_rounds, 4), rng.uniform(-1, 1, n_rounds)
    kept = x.copy()
    kw = dict(dim=4, bound=1.0, **({"link": link} if link else {}))
    one, block = oracle.start(n_rounds, rng=7, **kw), oracle.start(n_rounds, rng=7, **kw)
    for t in range(n_rounds):
        one.add(x[t], float(y[t]))
    block.add(x, y)
    assert np.array_equal(x, kept) and one.n_seen == block.n_seen == n_rounds
    a, b = one.result(), block.result()
    assert one.ledger.summary() == block.ledger.summary()
    for got, want in ((a.theta, b.theta), (a.width_matrix, b.width_matrix)):
        assert np.allclose(got, want, rtol=1e-9, atol=1e-12)
    assert a.width_scale == pytest.approx(b.width_scale, rel=1e-9)


def test_one_row_add_still_refuses_a_full_or_finished_fit():
    from privbandit.oracles import make_oracle

    fit = make_oracle("ridge").start(2, dim=3, bound=1.0, rng=0)
    fit.add(np.zeros(3), 0.5)
    fit.add(np.zeros(3), 0.5)
    with pytest.raises(ValueError, match="n_rounds=2"):
        fit.add(np.zeros(3), 0.5)
    fit.result()
    with pytest.raises(RuntimeError, match="finished"):
        fit.add(np.zeros(3), 0.5)


class _SeesEveryRow(make_agent("elim-nonprivate").__class__):
    """An elimination agent overriding _observe: the step loop's rows reach it."""

    def _observe(self, x, y):
        self.seen = getattr(self, "seen", 0) + x.shape[0]
        super()._observe(x, y)


def test_a_subclass_that_overrides_observe_gets_every_step_loop_row():
    from privbandit.agents.elimination import EliminationAgent

    spec = BanditSpec(n_arms=4, dim=3, horizon=30)
    rng = np.random.default_rng(2)
    x, r = _inside(rng, 30, 4, 3), rng.uniform(-1, 1, (30, 4))
    mine, ref = _SeesEveryRow().reset(spec, rng=1), EliminationAgent().reset(spec, rng=1)
    for t in range(30):
        a, b = mine.act(x[t]), ref.act(x[t])
        assert a == b
        mine.update(x[t, a], float(r[t, a]))
        ref.update(x[t, b], float(r[t, b]))
    assert mine.seen == 30 and len(mine.estimates) == len(ref.estimates)


@pytest.mark.parametrize("name", ["elim-jdp", "elim-nonprivate", "elim-ucb", "elim-jdp-ucb", "elim-glm-jdp"])
def test_elimination_step_loop_chooses_what_the_batch_path_does(name):
    """The elimination agents' step loop (one-row fit adds, the pooled ridge, the planner on one context)
    against the batch path, over several epochs with eliminations."""
    spec = BanditSpec(n_arms=6, dim=4, horizon=600)
    rng = np.random.default_rng(5)
    x = _inside(rng, 600, 6, 4)
    theta = np.array([0.8, -0.5, 0.2, 0.1])
    r = np.clip(x @ theta + 0.1 * rng.standard_normal((600, 6)), -1, 1)
    budget = dict(epsilon=1.0, delta=1e-5) if agent_is_private(name) else {}
    kw = dict(first_epoch=32) if name == "elim-jdp-ucb" else {}
    check_step_loop_equals_batch_path(lambda: make_agent(name, **budget, **kw), rng=4, stream=(x, r))
    many = make_agent(name, **budget, **kw)
    arms = play_batch(many, x, r, rng=4).actions
    assert many.spec == spec and len(set(arms.tolist())) > 1 and len(many.estimates) > 1   # several epochs
    assert np.array_equal(play_batch(make_agent(name, **budget, **kw), x, r, rng=4).actions, arms)
