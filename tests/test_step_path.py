"""The lean per-round path (one ``act`` + one ``update`` at a time, as a Gymnasium user drives an agent).

What it must keep: the rows it lets through are exactly what the full checks return; bad rows raise or
warn exactly as before (NaN/inf and wrong shapes raise ValueError, rows above B and rewards outside
[-1, 1] give a ClippingWarning); and its arithmetic is the batch rule's, bit for bit: LinUCB's scores
and Sherman-Morrison update, SquareCB's inverse-gap weighting and draw.
"""

import math
import warnings

import numpy as np
import pytest

from privbandit._validation import check_array, check_rows
from privbandit.agents import BanditSpec, UniformAgent, agent_is_private, make_agent
from privbandit.agents.checks import play_batch, play_loop
from privbandit.agents.base import _fast_rows, _inside_ball, uniform_choice
from privbandit.agents.squarecb import _igw, _igw_draw
from privbandit.privacy import ClippingWarning
from privbandit.privacy.clipping import clip_features, clip_rewards

PER_ROUND = ("linucb", "squarecb-nonprivate", "epsilon-greedy", "uniform")


def _full_checks(row, reward, dim, bound):
    """What ``Agent.update`` does without its fast path."""
    x, y = check_rows(row, reward, dim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClippingWarning)
        return clip_features(x, bound), clip_rewards(y)


def _rows_near_the_bound(rng, n, d, bound):
    """Rows whose norm is within a few ulps of ``bound``, on both sides, and a few well inside and outside."""
    u = rng.normal(size=(n, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    ulps = rng.integers(-8 * d, 8 * d, size=n)
    scale = bound * (1.0 + ulps * 2.0 ** -52)
    scale[:5] = bound * np.array([0.5, 1.0, 1.5, 1e-3, 1e3])
    return u * scale[:, None]


@pytest.mark.parametrize("bound", [1.0, 0.3, 7.0])
@pytest.mark.parametrize("d", [1, 3, 10, 40])
def test_a_row_passes_the_gate_only_when_the_full_checks_return_it_unchanged(d, bound):
    rng = np.random.default_rng(d)
    rows = _rows_near_the_bound(rng, 400, d, bound)
    passed = 0
    for row in rows:
        fast = _fast_rows(row, 0.25, d, bound)
        if fast is None:
            continue
        passed += 1
        x, y = _full_checks(row, 0.25, d, bound)
        assert np.array_equal(fast[0], x) and np.array_equal(fast[1], y)
        # the gate is conservative: clip_features' own test (einsum, <= B^2) passes too
        assert np.einsum("...i,...i->...", row[None], row[None])[0] <= bound * bound
    assert 0 < passed < len(rows)
    contexts = rows[: (len(rows) // 10) * 10].reshape(-1, 10, d)
    for ctx in contexts:
        if _inside_ball(ctx, bound):
            assert np.all(np.einsum("...i,...i->...", ctx, ctx) <= bound * bound)


def test_the_gate_refuses_nan_inf_overflow_and_tiny_bounds():
    row = np.full(4, 0.1)
    assert _inside_ball(row, 1.0) and _inside_ball(np.stack([row] * 3), 1.0)
    for bad in (np.nan, np.inf, -np.inf, 1e200):
        one = row.copy()
        one[2] = bad
        assert not _inside_ball(one, 1.0)
        ctx = np.stack([row] * 3)
        ctx[1, 2] = bad
        assert not _inside_ball(ctx, 1.0)
    assert not _inside_ball(np.full(4, 1e-160), 1e-150)     # B^2 below the underflow guard: full checks


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
def test_linucb_one_context_scores_are_the_array_rule_bit_for_bit(k, d):
    rng = np.random.default_rng(k * d)
    spec = BanditSpec(n_arms=k, dim=d, horizon=200)
    agent = _linucb_after(rng, spec, 60)
    for _ in range(100):
        x = _inside(rng, k, d)
        w = ((x @ agent.v_inv) * x).sum(axis=1)
        ref = x @ agent.theta_ + agent.beta_ * np.sqrt(np.maximum(w, 0.0))
        assert np.array_equal(np.array(agent._score_one(x)), ref)
        assert np.array_equal(agent._scores(x[None])[0], ref)
        assert agent._act_one(x) == int(np.argmax(ref))


def test_linucb_ties_and_nan_scores_pick_what_argmax_picks():
    spec = BanditSpec(n_arms=4, dim=2, horizon=10)
    agent = make_agent("linucb").reset(spec, rng=0)
    x = np.array([[0.1, 0.0], [0.3, 0.0], [0.3, 0.0], [0.2, 0.0]])
    assert agent._act_one(x) == int(np.argmax(agent._scores(x[None])[0])) == 1
    agent.theta_ = np.array([np.nan, 0.0])
    assert agent._act_one(x) == 0 == int(np.argmax(agent._scores(x[None])[0]))
    agent.theta_ = np.array([np.inf, 0.0])
    x[0] = [-0.1, 0.0]                                       # -inf, +inf, +inf, +inf: the first +inf
    assert agent._act_one(x) == 1 == int(np.argmax(agent._scores(x[None])[0]))


@pytest.mark.parametrize("d", [1, 4, 10])
def test_linucb_sherman_morrison_step_is_the_textbook_expression_bit_for_bit(d):
    rng = np.random.default_rng(d)
    spec = BanditSpec(n_arms=3, dim=d, horizon=100)
    agent = _linucb_after(rng, spec, 30)
    for _ in range(30):
        row = _inside(rng, d)
        y = float(rng.uniform(-1, 1))
        v_inv, xty, logdet = agent.v_inv.copy(), agent.xty.copy(), agent.logdet
        xty += row[None].T @ np.array([y])
        vx = v_inv @ row
        q = float(row @ vx)
        v_inv -= vx[:, None] * (vx / (1.0 + q))[None, :]
        v_inv = 0.5 * (v_inv + v_inv.T)
        agent.update(row, y)
        assert np.array_equal(agent.v_inv, v_inv) and np.array_equal(agent.xty, xty)
        assert agent.logdet == logdet + math.log1p(q)
        assert np.array_equal(agent.theta_, v_inv @ xty)


def _draw_ref(f, g, u):
    return int(uniform_choice(_igw(np.asarray(f, dtype=float)[None], g), np.array([u]))[0])


@pytest.mark.parametrize("k", [1, 2, 5, 7, 8, 9, 10, 16, 17, 40, 200])
def test_squarecb_one_round_draw_is_the_vectorised_rule(k):
    rng = np.random.default_rng(k)
    for trial in range(300):
        f = rng.normal(size=k)
        if trial % 3 == 0:
            f = np.round(f, 1)                  # ties among the maximisers and elsewhere
        g = float([0.0, 1e-3, 1.0, 37.5, 1e6][trial % 5])
        pmf = _igw(f[None], g)[0]
        edges = np.cumsum(pmf)
        us = list(rng.random(4)) + [float(edges[min(trial % k, k - 1)]), 0.0, float(np.nextafter(1.0, 0.0))]
        for u in us:
            assert _igw_draw(f.tolist(), g, u) == _draw_ref(f, g, u), (f, g, u)


def test_squarecb_one_round_draw_with_nan_or_inf_predictions_is_the_vectorised_rule():
    for f in ([0.1, np.nan, 0.3], [np.inf, 0.0, 1.0], [0.0, -np.inf, 0.5], [np.nan, np.nan, np.nan]):
        for u in (0.0, 0.3, 0.7, 0.999):
            with np.errstate(invalid="ignore"):
                assert _igw_draw(list(f), 2.0, u) == _draw_ref(f, 2.0, u)


@pytest.mark.parametrize("name", PER_ROUND + ("squarecb-dpsgd",))
def test_per_round_path_chooses_and_draws_what_the_batch_path_does(name):
    spec = BanditSpec(n_arms=6, dim=4, horizon=140)
    rng = np.random.default_rng(0)
    x = _inside(rng, 140, 6, 4)
    r = rng.uniform(-1, 1, size=(140, 6))
    budget = dict(epsilon=1.0, delta=1e-5) if agent_is_private(name) else {}
    one, many = make_agent(name, **budget), make_agent(name, **budget)
    loop, arms = play_loop(one, x, r, rng=4).tolist(), play_batch(many, x, r, rng=4).actions.tolist()
    assert one.spec == many.spec == spec
    assert loop == arms and len(set(loop)) > 1
    assert one._act_rng.random() == many._act_rng.random()   # the same number of uniforms was drawn


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
    """A user's agent that changes the batch rule (``_choose``) but not the lean per-round path."""

    def _choose(self, features, uniforms):
        return np.full(features.shape[0], features.shape[1] - 1, dtype=np.int64)


class _KeepsTheRule(UniformAgent):
    """A subclass that changes nothing the lean path copies."""


def test_a_subclass_that_changes_the_batch_rule_acts_by_it_one_round_at_a_time():
    spec = BanditSpec(n_arms=5, dim=3, horizon=40)
    x = _inside(np.random.default_rng(1), 40, 5, 3)
    agent = _LastArm().reset(spec, rng=0)
    arms = [agent.act(x[t]) for t in range(40)]
    assert arms == [4] * 40                                # not the inherited uniform draw
    assert not _LastArm._lean_act_one and UniformAgent._lean_act_one and _KeepsTheRule._lean_act_one


# -- the epoch agents' per-round path (issue 14, second pass) ------------------------------------------

def _fit_state(fit):
    """Everything a fit has accumulated or released, as comparable bytes."""
    est = fit.result()
    parts = [est.theta, est.width_matrix, np.array([est.width_scale])]
    return b"".join(np.ascontiguousarray(p).tobytes() for p in parts), repr(fit.ledger.summary())


@pytest.mark.parametrize("name", ["ridge", "iw-regression-dp", "ssp", "iw-glm-dp"])
@pytest.mark.parametrize("n_rounds", [1, 3, 7, 50])
def test_one_row_add_is_the_block_add_of_that_row_bit_for_bit(name, n_rounds):
    """EpochFit._add_row == _add_clipped(x[None].copy(), [y]) on random rows, across stage ends (and the
    empty stages of tiny fits), with the same noise draws; the caller's row is neither kept nor changed."""
    from privbandit.links import logistic_link
    from privbandit.oracles import make_oracle

    budget = {} if name == "ridge" else dict(epsilon=1.0, delta=1e-5)
    oracle = make_oracle(name, **budget)
    link = logistic_link() if "glm" in name else None
    rng = np.random.default_rng(n_rounds)
    x, y = _inside(rng, n_rounds, 4), rng.uniform(-1, 1, n_rounds)
    kw = dict(dim=4, bound=1.0, **({"link": link} if link else {}))
    one, block = oracle.start(n_rounds, rng=7, **kw), oracle.start(n_rounds, rng=7, **kw)
    for t in range(n_rounds):
        row = x[t].copy()
        one._add_row(row, float(y[t]))
        block._add_clipped(x[t][None, :].copy(), np.array([y[t]]))
        assert np.array_equal(row, x[t]) and one.n_seen == block.n_seen == t + 1 and one._closed == block._closed
    assert _fit_state(one) == _fit_state(block)


def test_one_row_add_still_refuses_a_full_or_finished_fit():
    from privbandit.oracles import make_oracle

    fit = make_oracle("ridge").start(2, dim=3, bound=1.0, rng=0)
    fit._add_row(np.zeros(3), 0.5)
    fit._add_row(np.zeros(3), 0.5)
    with pytest.raises(ValueError, match="n_rounds=2"):
        fit._add_row(np.zeros(3), 0.5)
    fit.result()
    with pytest.raises(RuntimeError, match="finished"):
        fit._add_row(np.zeros(3), 0.5)


class _SeesEveryRow(make_agent("elim-nonprivate").__class__):
    """An elimination agent overriding _observe below the class with the lean one-row hook."""

    def _observe(self, x, y):
        self.seen = getattr(self, "seen", 0) + x.shape[0]
        super()._observe(x, y)


def test_a_subclass_that_overrides_observe_gets_every_step_loop_row():
    from privbandit.agents.elimination import EliminationAgent

    assert EliminationAgent._lean_observe_row and not _SeesEveryRow._lean_observe_row
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
    """The elimination agents' lean per-round path (one-row fit adds, the pooled ridge, the one-context
    planner) against the batch path, over several epochs with eliminations."""
    spec = BanditSpec(n_arms=6, dim=4, horizon=600)
    rng = np.random.default_rng(5)
    x = _inside(rng, 600, 6, 4)
    theta = np.array([0.8, -0.5, 0.2, 0.1])
    r = np.clip(x @ theta + 0.1 * rng.standard_normal((600, 6)), -1, 1)
    budget = dict(epsilon=1.0, delta=1e-5) if agent_is_private(name) else {}
    kw = dict(first_epoch=32) if name == "elim-jdp-ucb" else {}
    one, many = make_agent(name, **budget, **kw), make_agent(name, **budget, **kw)
    loop, arms = play_loop(one, x, r, rng=4).tolist(), play_batch(many, x, r, rng=4).actions.tolist()
    assert one.spec == many.spec == spec
    assert loop == arms and len(set(loop)) > 1
    assert one._act_rng.random() == many._act_rng.random()


def test_one_context_bounds_elimination_and_pick_are_the_batch_helpers_bit_for_bit():
    from privbandit.agents.elimination import (_ELIMINATION_TOLERANCE, _bounds, _bounds_rows, _eliminate_all,
                                               _eliminate_one, _pick, _stack, uniform_over)
    from privbandit.links import identity_link, logistic_link
    from privbandit.oracles import Estimate

    rng = np.random.default_rng(11)
    for trial in range(200):
        k, d, j = rng.integers(1, 12), rng.integers(1, 8), rng.integers(1, 6)
        link = identity_link() if trial % 3 else logistic_link()
        ests = [Estimate(rng.normal(size=d), link, rng.normal(size=(d, d)) * rng.uniform(0.01, 3),
                         rng.uniform(0, 2)) for _ in range(j)]
        stack, x = _stack(ests), _inside(rng, k, d)
        mean, width = _bounds_rows(stack, x, 2.0)
        ref_mean, ref_width = _bounds(stack, x[None], 2.0)
        assert np.array_equal(mean, ref_mean[:, 0]) and np.array_equal(width, ref_width[:, 0])
        kept = _eliminate_one(mean, width, mean + width, _ELIMINATION_TOLERANCE)
        ref = _eliminate_all(np.ones((1, k), dtype=bool), ref_mean, ref_width, ref_mean + ref_width,
                             _ELIMINATION_TOLERANCE)[0]
        assert np.array_equal(kept, ref) and kept.any()
        mask = rng.random(k) < 0.5
        mask[rng.integers(k)] = True
        for u in (0.0, rng.random(), 0.999999):
            assert _pick(mask, u) == uniform_over(mask[None], np.array([u]))[0]


def test_the_spanner_certificate_with_the_callers_scale_is_the_certificate():
    from privbandit.agents.spanner import _holds_all

    rng = np.random.default_rng(12)
    for n in (1, 3, 10, 16):
        for s_min in (1e-9, 1e-5, 1e-4, 1e-2, 1.0):
            q, _ = np.linalg.qr(rng.standard_normal((n, n)))
            sub = (q * np.geomspace(1.0, s_min, n)) * rng.uniform(0.01, 100)
            assert _holds_all(sub, float(np.maximum.reduce(np.abs(sub), axis=None))) == _holds_all(sub)


def test_one_context_best_arms_are_the_batch_rule_with_ties_nan_and_inf():
    from privbandit.agents.elimination import _best, _best_one

    rng = np.random.default_rng(13)
    for trial in range(400):
        k = int(rng.integers(1, 12))
        mask = rng.random(k) < 0.6
        mask[rng.integers(k)] = True
        score = rng.choice([0.0, 0.5, 1.0 - 1e-13, 1.0], size=k) if trial % 2 else rng.normal(size=k)
        if trial % 5 == 0:
            score[rng.integers(k)] = rng.choice([np.nan, np.inf, -np.inf, 1e308])
        with np.errstate(invalid="ignore", over="ignore"):
            ref = _best(mask[None], score[None])[0]
            assert _best_one(mask, score) == ref.tolist()


def test_the_one_row_information_weight_is_the_array_expression_bit_for_bit():
    from privbandit.oracles.iw_jdp import iw_weights

    rng = np.random.default_rng(14)
    for _ in range(2000):
        wx = rng.normal(size=(1, int(rng.integers(1, 20)))) * 10.0 ** rng.uniform(-8, 8)
        gamma = float(10.0 ** rng.uniform(-6, 6))
        ref = 1.0 / (1.0 + gamma * np.sqrt(np.add.reduce(wx * wx, axis=1)))
        assert np.array_equal(iw_weights(wx, gamma), ref) and iw_weights(wx, gamma).shape == (1,)
    two = rng.normal(size=(2, 5))
    assert np.array_equal(iw_weights(two[:1], 0.3)[0], iw_weights(two, 0.3)[0])
