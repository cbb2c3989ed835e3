"""ldp-glm-sgd on Han, Liang, Wang & Zhang (2021)'s logistic setting, for comparison with their own code.

Their smallest GLM experiment (``Scheme1/instances/logistic.py`` of github.com/liangzp/LDP-Bandit, Figure 8):
d = 2, K = 10 arms whose features are drawn uniformly on the unit sphere every round, theta* uniform on the unit
sphere, Bernoulli rewards with mean sigmoid(<phi, theta*>), epsilon in {0.5, 1}, delta 0.01, T = 10^6, 10 seeds.
In privbandit that is ``PrivGLMCB-v0`` with ``family="isotropic"``, ``link="logistic"`` at slope 1
(nu(z) = tanh(z / 2) = 2 sigmoid(z) - 1) and Rademacher rewards y = 2 b - 1: the same law with rewards in
{-1, 1} instead of {0, 1}, so every regret is twice theirs. This script prints half of it (their units).

The script needs nothing of their code. Their LDP-SGD privatizes with the pure epsilon-LDP L2-ball channel of
Duchi et al., which ``channel="l2-ball"`` reproduces; the default ``channel="gaussian"`` is calibrated like every
other privbandit agent, for (epsilon, delta).

Usage::

    python scripts/compare_han2021.py                         # T = 10^5, 5 seeds, epsilon 1: a few minutes
    python scripts/compare_han2021.py --horizon 20000 --seeds 2
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import privbandit  # noqa: F401  (registers the envs)
from privbandit.agents import make_agent
from privbandit.sim import run

VARIANTS = {
    "gaussian-delta-0.01": ("ldp-glm-sgd", dict(delta=0.01)),      # their delta
    "gaussian-delta-1e-5": ("ldp-glm-sgd", dict(delta=1e-5)),
    "l2-ball": ("ldp-glm-sgd", dict(channel="l2-ball")),           # their channel (pure epsilon-LDP)
    "uniform": ("uniform", {}),
}
"""Label -> (agent, keyword arguments besides epsilon); the ldp-glm-sgd variants differ only in the channel."""


def their_setting(horizon: int) -> gym.Env:
    """Han et al.'s logistic instance as a privbandit env (see the module docstring)."""
    return gym.make("PrivGLMCB-v0", family="isotropic", dim=2, n_arms=10, link="logistic",
                    link_kwargs={"scale": 1.0}, noise="rademacher", horizon=horizon)


def final_regrets(agent: str, kwargs: dict, epsilon: float, horizon: int, seeds: int) -> np.ndarray:
    """Final pseudo-regret of each seed, in their units (rewards in {0, 1}: half of privbandit's)."""
    out = []
    for seed in range(seeds):
        budget = {"epsilon": epsilon} if agent != "uniform" else {}
        table = run(make_agent(agent, **budget, **kwargs), their_setting(horizon), seed=seed)
        out.append(table["cum_regret"].iloc[-1] / 2.0)
    return np.array(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=100_000, help="rounds T (theirs: 10^6)")
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0, ..., n - 1 (theirs: 10)")
    parser.add_argument("--epsilon", type=float, default=1.0, help="epsilon (theirs: 0.5 and 1)")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated labels of VARIANTS")
    args = parser.parse_args(argv)
    print(f"Han et al.'s logistic setting: d=2, K=10, T={args.horizon}, epsilon={args.epsilon:g}, "
          f"{args.seeds} seeds; final regret in their units (rewards in {{0, 1}})")
    for label in args.variants.split(","):
        agent, kwargs = VARIANTS[label]
        start = time.perf_counter()
        regrets = final_regrets(agent, kwargs, args.epsilon, args.horizon, args.seeds)
        print(f"{label:20s} mean {regrets.mean():8.1f}  sd {regrets.std(ddof=1) if regrets.size > 1 else 0.0:7.1f}  "
              f"seeds {np.round(regrets, 1).tolist()}  ({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
