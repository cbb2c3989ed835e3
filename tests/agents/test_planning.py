"""The planners: elimination (`alg:plan`) and SquareCB's inverse-gap weighting (`alg:square-cb`)."""

import math

import numpy as np
import pytest

from privbandit.agents import BanditSpec, make_agent
from privbandit.agents.elimination import EliminationAgent
from privbandit.agents.planner import can_eliminate, eliminate_all, surviving_actions, uniform_over
from privbandit.agents.squarecb import SquareCBAgent, inverse_gap_weighting, iw_l2_rate, l2_rate
from privbandit.infomatrix import w_star
from privbandit.links import identity_link, logistic_link
from privbandit.oracles import Estimate, Ridge


def _estimate(rng, d, scale, link=None):
    a = rng.standard_normal((d, d))
    return Estimate(rng.standard_normal(d), link or identity_link(), a, scale)


def _brute_force_survivors(estimates, phi, cap):
    m, k, _ = phi.shape
    out = np.zeros((m, k), dtype=bool)
    for i in range(m):
        alive = set(range(k))
        for est in estimates:
            f = [float(est.mean(phi[i, a])) for a in range(k)]
            b = [min(float(est.width(phi[i, a])), cap) for a in range(k)]
            best_lcb = max(f[a] - b[a] for a in range(k))          # max over all of A, not the survivors
            kept = {a for a in alive if f[a] + b[a] >= best_lcb}
            alive = kept or alive                                     # an empty test is skipped
        out[i, sorted(alive)] = True
    return out


@pytest.mark.parametrize("link", [identity_link(), logistic_link()])
def test_elimination_matches_the_definition(link):
    rng = np.random.default_rng(0)
    m, k, d = 200, 7, 4
    phi = rng.standard_normal((m, k, d)) * 0.5
    ests = [_estimate(rng, d, s, link) for s in (0.3, 0.1, 0.05)]
    got = surviving_actions(ests, phi, width_cap=0.8)
    want = _brute_force_survivors(ests, phi, 0.8)
    np.testing.assert_array_equal(got, want)
    assert got.any(axis=1).all()
    assert (~got).any(), "the instance must eliminate something, or the test has no power"
    single = [surviving_actions([e], phi, width_cap=0.8) for e in ests]
    assert any((~s.any(axis=1)).any() for s in [single[0] & single[1] & single[2]]), \
        "inconsistent intervals must occur here, or the empty-set rule is untested"


@pytest.mark.parametrize("link", [identity_link(), logistic_link()])
def test_skipping_estimates_that_cannot_eliminate_changes_nothing(link):
    rng = np.random.default_rng(5)
    m, k, d, bound = 2000, 6, 3, 1.5
    phi = rng.standard_normal((m, k, d))
    phi *= bound * rng.uniform(0.0, 1.0, (m, k, 1)) ** 0.3 / np.linalg.norm(phi, axis=2, keepdims=True)
    ests, hard = [], []
    for i in range(40):
        m_mat = rng.standard_normal((d, d)) * rng.uniform(0.2, 1.0)
        _, sv, vt = np.linalg.svd(m_mat)
        # theta along M's weakest direction: the worst case of condition (i), probed by arms +-B v
        theta = vt[-1] * rng.uniform(0.05, 0.3) if i % 2 else rng.standard_normal(d) * rng.uniform(0.05, 0.3)
        scale = np.linalg.norm(theta) / sv[-1] * rng.uniform(0.7, 1.3)
        ests.append(Estimate(theta, link, m_mat, scale))
        hard.append(np.stack([bound * vt[-1], -bound * vt[-1]] + [np.zeros(d)] * (k - 2))[None])
    for _ in range(6):   # capped radii (condition (ii)): B ||theta|| in (2.2, 3.5) eliminates on +-B v
        m_mat = rng.standard_normal((d, d))
        vt = np.linalg.svd(m_mat)[2]
        ests.append(Estimate(vt[-1] * rng.uniform(2.2, 3.5) / bound, link, m_mat, 1e3))
        hard.append(np.stack([bound * vt[-1], -bound * vt[-1]] + [np.zeros(d)] * (k - 2))[None])
    flags = [can_eliminate(e, bound, 2.0) for e in ests]
    assert 5 < sum(flags) < 41, "both kinds must occur, or the test has no power"
    eliminated = 0
    for e, f, x in zip(ests, flags, hard):
        if not f:      # a skipped estimate keeps every arm of every context, even the worst case
            assert surviving_actions([e], phi).all() and surviving_actions([e], x).all()
        elif link.is_identity and np.allclose(abs(e.theta @ np.linalg.svd(e.width_matrix)[2][-1]),
                                              np.linalg.norm(e.theta)):
            eliminated += int(not surviving_actions([e], x).all())
    if link.is_identity:
        assert eliminated > 0, "aligned estimates that fail (i) must eliminate on the worst case"
    for first in range(0, 40, 8):
        group, keep = ests[first:first + 8], flags[first:first + 8]
        np.testing.assert_array_equal(surviving_actions(group, phi),
                                      surviving_actions([e for e, f in zip(group, keep) if f], phi))


def test_valid_confidence_intervals_never_eliminate_the_optimal_arm():
    rng = np.random.default_rng(1)
    m, k, d = 500, 10, 5
    theta = rng.standard_normal(d) / math.sqrt(d)
    phi = rng.standard_normal((m, k, d)) / math.sqrt(d)
    ests = []
    for scale in (0.5, 0.2, 0.05):     # ||theta_hat - theta|| <= scale with M = I: the intervals are valid
        err = rng.standard_normal(d)
        ests.append(Estimate(theta + 0.99 * scale * err / np.linalg.norm(err), identity_link(), np.eye(d), scale))
    alive = surviving_actions(ests, phi)
    best = np.argmax(phi @ theta, axis=1)
    assert alive[np.arange(m), best].all()
    assert alive.sum(axis=1).mean() < k / 2


def test_width_cap_stops_elimination_by_wide_intervals():
    phi = np.array([[[1.0, 0.0], [-1.0, 0.0]]])
    est = Estimate(np.array([0.5, 0.0]), identity_link(), np.eye(2), 0.4)
    np.testing.assert_array_equal(surviving_actions([est], phi), [[True, False]])
    est_wide = Estimate(np.array([0.5, 0.0]), identity_link(), np.eye(2), 5.0)
    np.testing.assert_array_equal(surviving_actions([est_wide], phi, width_cap=2.0), [[True, True]])
    np.testing.assert_array_equal(surviving_actions([est_wide], phi, width_cap=0.4), [[True, False]])


def test_uniform_over_is_exactly_uniform_on_a_grid():
    mask = np.array([[True, False, True, True, False]] * 300)
    u = (np.arange(300) + 0.5) / 300
    counts = np.bincount(uniform_over(mask, u), minlength=5)
    np.testing.assert_array_equal(counts, [100, 0, 100, 100, 0])


def test_elimination_agent_plays_uniformly_on_the_spanner():
    rng = np.random.default_rng(2)
    agent = EliminationAgent(Ridge())
    agent.reset(BanditSpec(n_arms=6, dim=3, horizon=64), rng=0)
    phi = rng.standard_normal((20, 6, 3))
    phi /= 2 * np.linalg.norm(phi, axis=2, keepdims=True)       # inside the feature bound B = 1
    p = agent.action_probabilities(phi)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.count_nonzero(p, axis=1), 3)      # a spanner of R^3: three arms
    nz = p[p > 0]
    np.testing.assert_allclose(nz, 1 / 3)
    all_arms = EliminationAgent(Ridge(), spanner=False).reset(BanditSpec(6, 3, 64), rng=0)
    np.testing.assert_allclose(all_arms.action_probabilities(phi), 1 / 6)


def _vw_squarecb_pmf(rewards, gamma):
    """A line-by-line transcription of VW's cb_explore_adf_squarecb predict (costs = -rewards)."""
    costs = [-r for r in rewards]
    k = len(costs)
    a_min, min_cost = 0, costs[0]
    for a in range(k):
        if costs[a] < min_cost:
            a_min, min_cost = a, costs[a]
    pmf = [0.0] * k
    total = 0.0
    for a in range(k):
        if a == a_min:
            continue
        pa = 1.0 / (k + gamma * (costs[a] - min_cost))
        pmf[a] = pa
        total += pa
    pmf[a_min] = 1.0 - total
    return pmf


@pytest.mark.parametrize("gamma", [0.0, 1.0, 10.0, 1e4])
def test_inverse_gap_weighting_is_vw_squarecb(gamma):
    rng = np.random.default_rng(int(gamma) + 1)
    f = np.round(rng.uniform(-1, 1, (300, 6)), 1)     # rounded: many ties, which VW breaks to the lowest index
    got = inverse_gap_weighting(f, gamma)
    want = np.array([_vw_squarecb_pmf(row, gamma) for row in f])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert (got >= 0).all()
    np.testing.assert_allclose(got.sum(axis=1), 1.0)
    if gamma == 0.0:
        np.testing.assert_allclose(got, 1 / 6)


def test_inverse_gap_weighting_rejects_bad_gamma():
    with pytest.raises(ValueError, match="gamma"):
        inverse_gap_weighting(np.zeros((2, 3)), -1.0)
    with pytest.raises(ValueError, match="predictions"):
        inverse_gap_weighting(np.zeros(3), 1.0)


def test_squarecb_learning_rates_follow_the_theorem():
    n, d = 1024, 5
    conf = 0.01
    assert l2_rate("none", n, dim=d) == pytest.approx(math.sqrt(d / n))
    sig = 4 * math.sqrt(math.log(2.5 / 1e-5)) / 0.5
    want = (math.log(n) * math.log(1 / conf) / n) ** 0.25 + (sig * math.log(1 / conf) / n) ** (1 / 3)
    assert l2_rate("jdp", n, dim=d, epsilon=0.5, delta=1e-5, confidence=conf) == pytest.approx(want)
    want = (sig ** 2 * math.log(n / conf) / n) ** (1 / 6)
    assert l2_rate("ldp", n, dim=d, epsilon=0.5, delta=1e-5, confidence=conf) == pytest.approx(want)
    # the agent: uniform play before the first release, then gamma_j = scale sqrt(K) / E(N_{j-1})
    agent = SquareCBAgent(Ridge(), gamma_scale=2.0).reset(BanditSpec(4, d, 63), rng=0)
    assert agent.gamma is None
    np.testing.assert_array_equal(agent.action_probabilities(np.ones((4, d)) * 0.1), np.full(4, 0.25))
    rng = np.random.default_rng(0)
    agent.update(rng.standard_normal((1, d)) * 0.1, [0.0])
    assert agent.gamma == pytest.approx(2.0 * 2 / math.sqrt(d / 2))      # N_0 = 1 row, rate floored at n = 2
    agent.update(rng.standard_normal((2, d)) * 0.1, [0.0, 0.0])
    assert agent.gamma == pytest.approx(2.0 * 2 / math.sqrt(d / 2))
    agent.update(rng.standard_normal((4, d)) * 0.1, np.zeros(4))
    assert agent.gamma == pytest.approx(2.0 * 2 / math.sqrt(d / 4))
    vw = make_agent("squarecb-nonprivate", gamma_schedule="vw", gamma_scale=10.0)
    vw.reset(BanditSpec(4, d, 63), rng=0)
    vw.update(np.zeros((1, d)), [0.0])
    vw.update(np.zeros((2, d)), [0.0, 0.0])
    assert vw.gamma == pytest.approx(10.0 * math.sqrt(3))


def test_iw_l2_rate_is_the_theorem_bound_and_covers_e_w_star_phi_squared():
    n, d, lam, gamma, b, conf = 4096, 4, 0.05, 0.3, 2.0, 0.01
    want = math.sqrt(d * (1 + gamma * b / lam) * math.log(1 / conf) / n)
    assert iw_l2_rate(n, dim=d, lam=lam, gamma=gamma, bound=b, confidence=conf) == pytest.approx(want)
    # the bound it rests on: E||W* phi||^2 <= d (1 + gamma B / lambda), with F_DP(W*) = I; near tight when
    # one heavy atom carries a rarely seen direction (||W* phi|| ~ B / lambda there)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((400, d))
    x *= (b / np.maximum(np.linalg.norm(x, axis=1), b))[:, None]
    x[0] = [b, 0, 0, 0]
    wts = np.full(400, (1 - 1e-3) / 399)
    wts[0] = 1e-3
    x[1:, 0] = 0.0
    for g in (gamma, 3.0, 0.0):
        w = w_star(x, wts, gamma=g, lam=lam).matrix
        e_w2 = float(wts @ np.sum((x @ w) ** 2, axis=1))
        assert e_w2 <= d * (1 + g * b / lam) * (1 + 1e-9)
    with pytest.raises(ValueError, match="lam"):
        iw_l2_rate(n, dim=d, lam=0.0, gamma=gamma)


def test_squarecb_with_iw_regression_dp_uses_the_iw_rate():
    d, k = 4, 3
    agent = make_agent("squarecb-jdp-iw", epsilon=1.0, delta=1e-5, gamma_scale=2.0)
    assert agent.oracle.name == "iw-regression-dp" and agent.privacy.model == "jdp"
    agent.reset(BanditSpec(k, d, 255, bound=1.0), rng=0)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((127, d))
    x /= np.maximum(np.linalg.norm(x, axis=1), 1.0)[:, None]
    while agent.t < 127:                                  # epochs [0], [1, 2], ..., [63, 126]
        n = agent.rounds_until_update()
        agent.update(x[agent.t:agent.t + n], x[agent.t:agent.t + n] @ np.ones(d) * 0.1)
    est = agent.estimates[-1]
    conf = 0.05 / (2 * len(agent.epoch_ends) ** 2)
    iw = iw_l2_rate(64, dim=d, lam=est.info["lam"], gamma=est.info["gamma"], bound=1.0, confidence=conf)
    sgd = l2_rate("jdp", 64, dim=d, epsilon=1.0, delta=1e-5, confidence=conf)
    assert agent.gamma == pytest.approx(2.0 * math.sqrt(k) / iw)
    assert abs(iw - sgd) > 0.1 * sgd                      # the model's DP-SGD rate would give another gamma
    phi = rng.standard_normal((5, k, d)) / (2 * math.sqrt(d))
    np.testing.assert_allclose(agent.action_probabilities(phi), inverse_gap_weighting(est.mean(phi), agent.gamma))


def test_squarecb_probabilities_use_the_latest_estimate():
    agent = SquareCBAgent(Ridge(lam=1e-6)).reset(BanditSpec(3, 2, 7), rng=0)
    phi = np.array([[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]])
    np.testing.assert_allclose(agent.action_probabilities(phi), np.full((1, 3), 1 / 3))  # f_0 = 0
    agent.update(np.array([[1.0, 0.0]]), [1.0])
    f = agent.estimates[-1].mean(phi)
    np.testing.assert_allclose(agent.action_probabilities(phi), inverse_gap_weighting(f, agent.gamma))
    assert agent.action_probabilities(phi)[0, 0] > 0.5


def _eliminate_in_order(mean, width, tolerance):
    """The tests of `eq:eliminate` one epoch after the other on one context, each skipped if it empties the set."""
    kept = np.ones(mean.shape[1], dtype=bool)
    for m, w in zip(mean, width):
        nxt = kept & (m + w >= (m - w).max() - tolerance)
        if nxt.any():
            kept = nxt
    return kept


def test_the_vectorised_tests_are_the_tests_in_order_conflicts_included():
    """eliminate_all (all epochs' tests in one pass, conflicting contexts replayed) == the tests in order."""
    rng = np.random.default_rng(11)
    conflicts = 0
    for trial in range(3000):
        j, k = int(rng.integers(1, 5)), int(rng.integers(1, 8))
        mean = rng.uniform(-1, 1, (j, k))
        width = rng.uniform(0, 0.6 if trial % 2 else 0.05, (j, k))
        if trial % 3 == 0:
            mean[:, 0] = mean[:, -1]                     # exact ties
        upper = mean + width
        batched = eliminate_all(np.ones((1, k), dtype=bool), mean[:, None], width[:, None], upper[:, None],
                                 1e-12)[0]
        conflicts += not (upper >= (mean - width).max(axis=1, keepdims=True) - 1e-12).all(axis=0).any()
        np.testing.assert_array_equal(_eliminate_in_order(mean, width, 1e-12), batched)
    assert conflicts > 50, "the sequential replay must be exercised"


def test_elim_ucb_step_loop_and_batch_path_choose_the_same_arms():
    import gymnasium as gym

    from privbandit.agents.checks import play_batch, play_loop

    env = gym.make("PrivLinCB-v0", n_arms=8, dim=8, horizon=4096, family="heavy-tailed", max_episode_steps=4096)
    env.reset(seed=3)
    batch = env.unwrapped.sample_batch(4096)
    arms = play_batch(make_agent("elim-ucb"), batch.features, batch.rewards, rng=7).actions
    assert np.array_equal(play_loop(make_agent("elim-ucb"), batch.features, batch.rewards, rng=7), arms)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["elim-ldp-greedy", "elim-nonprivate-greedy"])
def test_greedy_play_step_loop_chooses_what_the_batch_path_does(name):
    """Greedy play's step loop (the round's rate, the latest mean on one context, the spanner when
    exploring) against the batch path."""
    from privbandit.agents.checks import play_batch, play_loop

    rng = np.random.default_rng(27)
    t, k, d = 5000, 5, 4
    x = rng.standard_normal((t, k, d))
    x /= np.maximum(1.0, np.linalg.norm(x, axis=2, keepdims=True))
    r = np.clip(x @ np.array([0.8, -0.5, 0.2, 0.1]) + 0.1 * rng.standard_normal((t, k)), -1, 1)

    def make():
        if name == "elim-ldp-greedy":
            return make_agent(name, epsilon=1.0, delta=1e-5)
        return make_agent("elim-nonprivate", play="greedy")

    loop, arms = play_loop(make(), x, r, rng=3), play_batch(make(), x, r, rng=3).actions
    assert np.array_equal(loop, arms) and len(set(loop.tolist())) > 1
