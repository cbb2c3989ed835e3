"""Private SquareCB's exploration schedules side by side, and the oracle errors the calibrated schedule uses.

Default mode: every agent plays the same rounds (``privbandit.sim.run_many``, ledgers checked) for each
family and seed; the script prints each agent's final regret (mean with a 95% percentile bootstrap interval
over seeds, median) and its ratio to ``squarecb-jdp-iw`` (the theorem's gamma; ratio of means, paired
bootstrap over seeds). The agents: squarecb-jdp-iw (theorem), squarecb-jdp-iw-cal (calibrated),
squarecb-jdp-iw with VW's schedule (gamma_scale 10, exponent 1/2), squarecb-dpsgd with each schedule,
squarecb-nonprivate, and elim-jdp-ucb for context; ``--scales`` adds the calibrated IW agent at other
gamma_scale values (the screen that chose :data:`~privbandit.agents.squarecb.CALIBRATED_GAMMA_SCALE`).
``--ldp`` compares squarecb-ldp-sgd's schedules instead (theorem, calibrated, VW) with elim-ldp-greedy and
ldp-ucb.

``--errors``: the measured mean squared error of each oracle fitted on N rows of uniform play, divided by the
rate E0(N)^2 of :func:`~privbandit.agents.squarecb.calibrated_error` (constant 1); the largest ratio over the
families and N >= 2^12 is the constant c of :data:`~privbandit.agents.squarecb.CALIBRATED_ERROR_CONSTANTS`.

Usage::

    python scripts/bench_squarecb.py                                   # T = 2^18, 6 seeds (minutes)
    python scripts/bench_squarecb.py --log2-horizon 16 --seeds 3 --scales 2,3,5
    python scripts/bench_squarecb.py --families isotropic,low-rank,heavy-tailed-direction
    python scripts/bench_squarecb.py --dim 20 --n-arms 4
    python scripts/bench_squarecb.py --ldp --dim 5
    python scripts/bench_squarecb.py --errors --seeds 2
"""

from __future__ import annotations

import argparse
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import gymnasium as gym
import numpy as np

import privbandit  # noqa: F401  (registers the envs)
from privbandit.agents import agent_is_private, make_agent
from privbandit.agents.squarecb import CALIBRATED_ERROR_CONSTANTS, calibrated_error
from privbandit.oracles import make_oracle
from privbandit.sim import run_many

BASE = "squarecb-jdp-iw"
AGENTS: tuple[tuple[str, str, dict], ...] = (
    ("squarecb-jdp-iw", BASE, {}),
    ("squarecb-jdp-iw-cal", "squarecb-jdp-iw-cal", {}),
    ("squarecb-jdp-iw vw(10, 0.5)", BASE, dict(gamma_schedule="vw", gamma_scale=10.0, gamma_exponent=0.5)),
    ("squarecb-dpsgd", "squarecb-dpsgd", {}),
    ("squarecb-dpsgd calibrated", "squarecb-dpsgd", dict(gamma_schedule="calibrated", gamma_scale=30.0)),
    ("squarecb-nonprivate", "squarecb-nonprivate", {}),
    ("elim-jdp-ucb", "elim-jdp-ucb", {}),
)
LDP_AGENTS: tuple[tuple[str, str, dict], ...] = (
    ("squarecb-ldp-sgd", "squarecb-ldp-sgd", {}),
    ("squarecb-ldp-sgd calibrated", "squarecb-ldp-sgd", dict(gamma_schedule="calibrated", gamma_scale=30.0)),
    ("squarecb-ldp-sgd vw(10, 0.5)", "squarecb-ldp-sgd", dict(gamma_schedule="vw", gamma_scale=10.0)),
    ("elim-ldp-greedy", "elim-ldp-greedy", {}),
    ("ldp-ucb", "ldp-ucb", {}),
)
"""``--ldp``: local-DP SquareCB (ratios to its theorem schedule, the first row), with the local-DP agents."""
ERROR_ORACLES = (("iw-regression-dp", "iw", "jdp"), ("dp-sgd", "jdp", "jdp"), ("ldp-sgd", "ldp", "ldp"),
                 ("ridge", "none", None))


class _Parser(argparse.ArgumentParser):
    """Bad arguments: one line on stderr, exit code 2, no usage block."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _boot(values: np.ndarray, stat, n_boot: int = 2000, rng: int = 0) -> tuple[float, float]:
    """95% percentile bootstrap interval of ``stat`` over the rows (seeds) of ``values``."""
    gen = np.random.default_rng(rng)
    idx = gen.integers(values.shape[0], size=(n_boot, values.shape[0]))
    return tuple(np.percentile([stat(values[i]) for i in idx], [2.5, 97.5]))


def side_by_side(args: argparse.Namespace) -> None:
    scaled = [(f"squarecb-jdp-iw-cal scale {s:g}", "squarecb-jdp-iw-cal", dict(gamma_scale=s)) for s in args.scales]
    agents = list(LDP_AGENTS) if args.ldp else list(AGENTS) + scaled
    print(f"Final regret, T = 2^{args.log2_horizon}, {args.seeds} seeds, d = {args.dim}, K = {args.n_arms}, epsilon "
          f"{args.epsilon:g}, delta 1e-5: mean [95% bootstrap over seeds], median; ratio of means to {agents[0][0]} "
          f"[paired bootstrap]\n")
    for family in args.families:
        regrets = np.zeros((args.seeds, len(agents)))
        for seed in range(args.seeds):
            built = [make_agent(n, epsilon=args.epsilon, delta=1e-5, **kw) if agent_is_private(n)
                     else make_agent(n, **kw) for _, n, kw in agents]
            tables = run_many(built, "PrivLinCB-v0", horizon=2 ** args.log2_horizon, seed=seed, points_per_octave=1,
                              env_kwargs=dict(family=family, dim=args.dim, n_arms=args.n_arms))
            regrets[seed] = [t["cum_regret"].iloc[-1] for t in tables]
        for j, (label, _, _) in enumerate(agents):
            r = regrets[:, j]
            lo, hi = _boot(r, np.mean)
            pair = regrets[:, [j, 0]]
            rlo, rhi = _boot(pair, lambda p: p[:, 0].mean() / p[:, 1].mean())
            print(f"{family:23s} {label:32s} {r.mean():9.0f} [{lo:7.0f}, {hi:7.0f}] median {np.median(r):8.0f}"
                  f"   x{r.mean() / regrets[:, 0].mean():5.2f} [{rlo:4.2f}, {rhi:4.2f}]", flush=True)
        print()


def oracle_errors(args: argparse.Namespace) -> None:
    d = args.dim
    print(f"Measured MSE of each oracle on N rows of uniform play / E0(N)^2 (d = K = {d}, epsilon {args.epsilon:g}, "
          f"{args.seeds} seeds; max over seeds)\n")
    for oracle_name, kind, model in ERROR_ORACLES:
        budget = dict(epsilon=args.epsilon, delta=1e-5, model=model) if model else {}
        oracle = make_oracle(oracle_name, **budget)
        worst = 0.0
        for family in args.families:
            cells = []
            for log2 in range(6, 17, 2):
                n, ratios = 2 ** log2, []
                for seed in range(args.seeds):
                    env = gym.make("PrivLinCB-v0", family=family, dim=d, n_arms=d, horizon=2 ** 17).unwrapped
                    env.reset(seed=seed)
                    batch, arms = env.sample_batch(n), np.random.default_rng(seed).integers(d, size=n)
                    est = oracle.fit(batch.features[np.arange(n), arms], batch.rewards[np.arange(n), arms], rng=seed)
                    test = env.sample_batch(2048).features
                    mse = float(np.mean((test @ (est.theta - env.theta)) ** 2))
                    rate = calibrated_error(kind, n, dim=d, epsilon=args.epsilon, lam=est.info.get("lam"),
                                            gamma=est.info.get("gamma")) / CALIBRATED_ERROR_CONSTANTS[kind]
                    ratios.append(mse / rate)
                cells.append(f"2^{log2}: {max(ratios):5.2g}")
                worst = max(worst, max(ratios)) if log2 >= 12 else worst
            print(f"{oracle_name:17s} {family:16s} " + "  ".join(cells), flush=True)
        print(f"{oracle_name:17s} max over N >= 2^12: {worst:.2g} "
              f"(constant in use: {CALIBRATED_ERROR_CONSTANTS[kind]})\n")


def main(argv=None) -> None:
    p = _Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--log2-horizon", type=int, default=18)
    p.add_argument("--seeds", type=int, default=6)
    p.add_argument("--dim", type=int, default=10, help="d")
    p.add_argument("--n-arms", type=int, default=None, help="K (default: d)")
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--families", default="rare-direction,heavy-tailed,spiky")
    p.add_argument("--scales", default="", help="extra gamma_scale values of the calibrated IW agent")
    p.add_argument("--errors", action="store_true", help="measure the oracles' errors instead")
    p.add_argument("--ldp", action="store_true", help="the local-DP SquareCB agents instead (use --dim 5)")
    args = p.parse_args(argv)
    args.n_arms = args.dim if args.n_arms is None else args.n_arms
    if not 4 <= args.log2_horizon <= 24 or args.seeds < 1 or args.dim < 1 or args.n_arms < 2:
        p.error("--log2-horizon must be in [4, 24], --seeds and --dim >= 1, --n-arms >= 2")
    if not (args.epsilon > 0 and np.isfinite(args.epsilon)):
        p.error(f"argument --epsilon: must be finite and > 0, got {args.epsilon}")
    try:
        args.scales = [float(s) for s in args.scales.split(",") if s]
    except ValueError:
        p.error(f"argument --scales: must be numbers separated by commas, got {args.scales!r}")
    args.families = [f for f in args.families.split(",") if f]
    oracle_errors(args) if args.errors else side_by_side(args)


if __name__ == "__main__":
    main()
