"""The agent audit's design choice: repeated draws against one run with many canaries (Steinke, Nasr & Jagielski 2023).

Part 1, the bound per observation. Each observation is one watched action in the 5% tail the audit's pilots put
the decision in: it takes arm 0 with probability p on D and q = 0.05 on D', for a release shifted by ``mu`` noise
sds between D and D' (p = P(Z > z_0.95 - mu)). Repeated draws: n runs per stream, one observation each,
Clopper-Pearson bounds on delta(epsilon) (:func:`privbandit.agents.audit.set_lower_bounds`, the audit's own). One run
with m canaries of random signs: m observations; the guesser guesses D for a canary whose watcher took arm 0 and
abstains otherwise, and the number of right guesses among r is bounded by Binomial(r, e^eps / (1 + e^eps)) (their
Theorem 3.1 for pure DP: optimistic here, the approximate-DP version adds a delta term that grows with m). The
script prints the median lower bound of each design over 20 seeds, at equal numbers of observations.

Part 2, the cost of a canary. A one-run audit of a black-box agent needs canaries whose effects stay apart: one
feature coordinate (or one epoch) per canary. The script times ``elim-jdp-ucb`` on the audit's 288-round stream at
several dimensions d (d canaries per run at best). Time it with one BLAS thread (``OMP_NUM_THREADS=1``): on a busy
machine a threaded BLAS makes d >= 32 tens of times slower.

Measured (2026-11, 20 seeds; timings with ``OMP_NUM_THREADS=1``): a release shifted by 0.7 noise sds
(``elim-jdp-ucb`` with a quarter of its noise) gives a median lower bound of 1.02 from 12000 repeated runs against
1.10 from 12000 canaries, and 1.15 against 1.15 from 48000 (the canaries' bound taken optimistically, as if delta
were 0; 1.4 sds: 1.92 against 1.95). ``elim-jdp-ucb`` plays a 288-round stream in 5 ms at d = 2 and 13 ms at
d = 32, so a run could carry up to ~13 times more canaries per second, if every coordinate's canary shifted its
release as much as the single target does. Hence :mod:`privbandit.agents.audit` keeps repeated draws.

Usage::

    OMP_NUM_THREADS=1 python scripts/bench_audit_canary.py          # seconds
    python scripts/bench_audit_canary.py --dims 2,8,16,32 --runs 30
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import binom, norm

from privbandit.agents import make_agent
from privbandit.agents.audit import EPS_GRID, neighbouring_streams, play_stream, set_lower_bounds

GRID = np.array(EPS_GRID)
TAIL = 0.05
DELTA = 1e-5


def repeated_draws(p: float, q: float, n: int, rng: np.random.Generator) -> float:
    """The audit's epsilon lower bound from n runs per stream of a set with probabilities p (D) and q (D')."""
    bounds = set_lower_bounds(rng.binomial(n, p), rng.binomial(n, q), n, GRID, 0.05)
    return float(GRID[bounds > DELTA].max(initial=0.0))


def one_run(p: float, q: float, m: int, rng: np.random.Generator) -> float:
    """The one-run lower bound (pure-DP Theorem 3.1, 95%) from m canaries, guessing D on arm 0 only."""
    on_d = rng.random(m) < 0.5
    arm0 = rng.random(m) < np.where(on_d, p, q)
    guesses, right = int(arm0.sum()), int((arm0 & on_d).sum())
    ok = [e for e in GRID if binom.sf(right - 1, guesses, np.exp(e) / (1 + np.exp(e))) <= 0.05]
    return float(max(ok, default=0.0))


def bounds_per_observation(shifts: list[float], observations: list[int], seeds: int) -> None:
    """Part 1: print the median bound of each design per (shift, observation count)."""
    for mu in shifts:
        p = float(norm.sf(norm.isf(TAIL) - mu))
        for obs in observations:
            rep = np.median([repeated_draws(p, TAIL, obs // 2, np.random.default_rng(i)) for i in range(seeds)])
            one = np.median([one_run(p, TAIL, obs, np.random.default_rng(10**6 + i)) for i in range(seeds)])
            print(f"shift {mu} sd (p={p:.3f}, q={TAIL}, log(p/q)={np.log(p / TAIL):.2f}), {obs} observations: "
                  f"repeated draws {rep:.2f}, one run (optimistic) {one:.2f}")


def time_per_run(dims: list[int], runs: int) -> None:
    """Part 2: milliseconds per run of elim-jdp-ucb on the audit's 288-round stream at each dimension."""
    for d in dims:
        (feats, rewards), _ = neighbouring_streams(288, dim=d)
        agent = make_agent("elim-jdp-ucb", epsilon=1.0, delta=DELTA)
        play_stream(agent, feats, rewards, np.random.default_rng(runs))     # warm-up
        start = time.perf_counter()
        for s in range(runs):
            play_stream(agent, feats, rewards, np.random.default_rng(s))
        print(f"elim-jdp-ucb, d={d}, T=288: {(time.perf_counter() - start) / runs * 1e3:.1f} ms per run")


def main(argv: list[str] | None = None) -> None:
    """Print both parts."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shifts", default="0.7,1.4,2.8", help="release shifts in noise sds (comma-separated)")
    ap.add_argument("--observations", default="3000,12000,48000", help="observations per design (comma-separated)")
    ap.add_argument("--seeds", type=int, default=20, help="seeds per median")
    ap.add_argument("--dims", default="2,8,16,32", help="dimensions to time (comma-separated)")
    ap.add_argument("--runs", type=int, default=30, help="timed runs per dimension")
    args = ap.parse_args(argv)
    bounds_per_observation([float(v) for v in args.shifts.split(",")],
                           [int(v) for v in args.observations.split(",")], args.seeds)
    time_per_run([int(v) for v in args.dims.split(",")], args.runs)


if __name__ == "__main__":
    main()
