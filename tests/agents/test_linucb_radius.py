"""The LinUCB baselines' two radii: the theorem's (default, unchanged) and the calibrated per-phi one."""

import math
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import privbandit  # noqa: F401  (registers the envs)
from privbandit.agents import make_agent
from privbandit.oracles.ridge import PRACTICAL_WIDTH
from privbandit.sim import run

PRIVATE = {"linucb-jdp": dict(epsilon=1.0, delta=1e-5), "ldp-ucb": dict(epsilon=1.0, delta=1e-5)}
NAMES = ("linucb", "linucb-jdp", "ldp-ucb")


def _agent(name, **kw):
    return make_agent(name, **PRIVATE.get(name, {}), **kw)


def _env(horizon, family="heavy-tailed", d=5):
    return gym.make("PrivLinCB-v0", n_arms=d, dim=d, horizon=horizon, family=family, max_episode_steps=horizon)


@pytest.mark.parametrize("name", NAMES)
def test_radius_is_validated(name):
    with pytest.raises(ValueError, match=r"radius must be one of \('practical', 'theory'\), got 'tight'"):
        _agent(name, radius="tight")
    with pytest.raises(ValueError, match="c_width sets the practical radius: it needs radius='practical'"):
        _agent(name, c_width=1.0)
    with pytest.raises(ValueError, match="c_width"):
        _agent(name, radius="practical", c_width=0.0)


BEFORE = Path(__file__).parent / "data" / "linucb_theory_radius_cum_regret.csv"
"""The cumulative regret at every 8th round of a 512-round run (heavy-tailed, d = K = 5, seed 3), taken before
the radius option existed, printed with 17 significant digits (it reads back exactly)."""

RTOL = 1e-9
"""The default (theory) radius must reproduce those runs. 1e-9 relative lets a BLAS that sums in another order
move the last bits of the scores and the running sum (about 512 u = 6e-14 relative at most, through gemv and
the regret sums); one arm chosen differently moves the cumulative regret by far more (every round's regret is
either 0 or the gap to the best arm, of order 1e-2 or more here)."""


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("radius", [None, "theory"])
def test_theory_radius_reproduces_the_runs_from_before(name, radius):
    agent = _agent(name) if radius is None else _agent(name, radius=radius)
    df = run(agent, _env(512), 512, seed=3, log="all")
    want = pd.read_csv(BEFORE)
    got = df["cum_regret"].to_numpy()[want["round"].to_numpy() - 1]
    np.testing.assert_allclose(got, want[name].to_numpy(), rtol=RTOL, atol=0.0)


@pytest.mark.parametrize("name", NAMES)
def test_practical_radius_is_smaller_than_theory(name):
    horizon = 2 ** 10
    betas = {}
    for radius in ("theory", "practical"):
        agent = _agent(name, radius=radius, batch_size=64)
        run(agent, _env(horizon), horizon, seed=0)
        betas[radius] = agent.beta_
    assert 0 < betas["practical"] < 0.9 * betas["theory"]


def test_practical_radius_parts():
    agent = _agent("linucb", radius="practical", lam=4.0, norm_bound=0.5, noise_scale=0.5)
    run(agent, _env(64), 64, seed=0)
    assert agent.radius_parts_ == (0.5, 1.0)                       # (R, sqrt(lambda) S)
    assert agent.beta_ == pytest.approx(PRACTICAL_WIDTH * 0.5 + 1.0)
    jdp = _agent("linucb-jdp", radius="practical", batch_size=8)
    run(jdp, _env(64), 64, seed=0)
    ups, _ = jdp._noise_level(64, jdp._noise_sigma(64))
    sd, bias = jdp.radius_parts_
    assert sd == pytest.approx(math.hypot(1.0, jdp.mechanism_.sigma / math.sqrt(np.linalg.eigvalsh(
        np.linalg.inv(jdp.v_inv_sqrt_ @ jdp.v_inv_sqrt_))[0])), rel=1e-6)   # one tree node at t = 64
    assert bias <= math.sqrt(3 * ups) + 1e-12


def _coverage(c_width, seeds=(0, 1, 2), horizon=2 ** 14, d=10, n_fresh=200):
    """Share of fresh arms' phi with |<phi, theta_hat - theta*>| <= beta ||phi||_{V^-1} after a LinUCB run."""
    ok = []
    for seed in seeds:
        agent = make_agent("linucb", radius="practical", c_width=c_width, batch_size=64)
        env = _env(horizon, d=d)
        run(agent, env, horizon, seed=seed)
        env.reset(seed=1000 + seed)
        x = env.unwrapped.sample_batch(n_fresh).features
        theta = env.unwrapped.theta
        width = agent._scores(x) - x @ agent.theta_
        ok.append(np.abs(x @ (agent.theta_ - theta)) <= width)
    return float(np.mean(ok))


def test_practical_radius_covers_with_its_measured_margin_and_half_the_constant_does_not():
    # scripts/bench_regression.py --agents linucb: with c = 2 the coverage was >= 0.997 in every cell (d = 5, 10;
    # rare-direction, heavy-tailed, spiky; T = 2^12, 2^14, 2^16; 2 seeds), and 95% needed c <= 1.33. Halving c
    # (radius 2 instead of 3) drops heavy-tailed d = 10 at 2^14 to about 0.96: below the margin asserted here.
    assert _coverage(PRACTICAL_WIDTH) >= 0.99
    assert _coverage(PRACTICAL_WIDTH / 2) < 0.99
