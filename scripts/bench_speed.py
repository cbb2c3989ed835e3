"""Per-round speed of every agent: the Gymnasium step loop and the batch path, beside VW and MABWiser.

One stream of T rounds (``PrivLinCB-v0``, heavy-tailed contexts, d = K = 10 by default, seed 0) is sampled
once; every agent then plays it

- one round at a time (``act`` + ``update``, the step loop without the env: what the agent costs a
  Gymnasium user), in microseconds per round, epoch fits included;
- on the batch path (``act_batch`` + ``update`` while the policy is fixed), in rounds per second;

and the table counts the rounds where the two paths chose different arms (the same uniforms, so 0 but at
decisions within rounding of a tie). Runs alternate between agents (repeat i of every agent, then repeat
i + 1), so a shared machine's load falls on all of them alike; the tables give the median and the range
over ``--repeats``.

Beside them, on the same stream, in alternating blocks of ``--block`` rounds (ours, then theirs, on the
same rounds): Vowpal Wabbit's ``--cb_explore_adf --squarecb`` against our ``squarecb-nonprivate`` (VW's
time includes building its text lines, as a VW user's loop does) and MABWiser's LinUCB against our
``linucb`` (K disjoint models on the round's mean feature row). The ratios are
per block, with their median and range. VW and MABWiser are optional (``pip install privbandit[bench]``);
a missing one is skipped with a line saying so.

Usage::

    OPENBLAS_NUM_THREADS=1 python scripts/bench_speed.py                      # every agent, T = 2^13
    OPENBLAS_NUM_THREADS=1 python scripts/bench_speed.py --agents linucb squarecb-nonprivate --repeats 5

Targets (step loop, d = K = 10, agent alone): every SquareCB and elimination agent no slower per round than
VW's ``--cb_explore_adf --squarecb`` on the same stream; LinUCB at least 10x faster per round than MABWiser's
LinUCB. Batch path floors (:data:`BATCH_FLOORS`, the agent alone with its epoch fits, d = K = 10, measured at
T = 2^18, ``--log2-rounds 18``, where the last epochs dominate): elim-jdp-ucb >= 2e5 rounds/s and elim-jdp >= 1e5;
for every other agent compare the batch path with an earlier commit's run of this script.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

BATCH_FLOORS = {"elim-jdp-ucb": 2e5, "elim-jdp": 1e5}
"""Rounds/s floors of the batch path at d = K = 10 (the agent alone, fits included; meaningful from T = 2^18)."""

MABWISER_TARGET = 10.0
"""LinUCB's step loop must be at least this many times faster per round than MABWiser's LinUCB."""


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", nargs="*", default=None, help="agents to time (default: every registered agent)")
    p.add_argument("--log2-rounds", type=int, default=13, help="T = 2^this rounds per run")
    p.add_argument("--repeats", type=int, default=3, help="alternating runs per agent (median and range)")
    p.add_argument("--dim", type=int, default=10)
    p.add_argument("--arms", type=int, default=10)
    p.add_argument("--block", type=int, default=64, help="rounds per alternating block against VW/MABWiser")
    p.add_argument("--no-baselines", action="store_true", help="skip VW and MABWiser")
    args = p.parse_args(argv)
    for name in ("log2_rounds", "repeats", "dim", "arms", "block"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    return args


def sample_stream(n: int, k: int, d: int):
    """The shared stream: features (n, K, d) and rewards (n, K) of PrivLinCB-v0, heavy-tailed, seed 0."""
    import gymnasium as gym

    import privbandit  # noqa: F401  (registers the envs)

    env = gym.make("PrivLinCB-v0", n_arms=k, dim=d, horizon=n, family="heavy-tailed", max_episode_steps=n)
    env.reset(seed=0)
    batch = env.unwrapped.sample_batch(n)
    return env.unwrapped.bandit_spec(), batch.features, batch.rewards


def _make(name: str):
    from privbandit.agents import agent_is_private, make_agent

    return make_agent(name, **(dict(epsilon=1.0, delta=1e-5) if agent_is_private(name) else {}))


def loop_run(name, spec, x, r) -> tuple[float, np.ndarray]:
    """One step-loop run: (seconds, arms)."""
    agent = _make(name).reset(spec, rng=0)
    arms = np.empty(x.shape[0], dtype=np.int64)
    t0 = time.perf_counter()
    for t in range(x.shape[0]):
        a = agent.act(x[t])
        agent.update(x[t, a], r[t, a])
        arms[t] = a
    return time.perf_counter() - t0, arms


def batch_run(name, spec, x, r) -> tuple[float, np.ndarray]:
    """One batch-path run: (seconds, arms)."""
    agent = _make(name).reset(spec, rng=0)
    arms = np.empty(x.shape[0], dtype=np.int64)
    t, n = 0, x.shape[0]
    t0 = time.perf_counter()
    while t < n:
        m = min(agent.rounds_until_update(), n - t)
        a = agent.act_batch(x[t:t + m])
        rows = np.arange(t, t + m)
        agent.update(x[rows, a], r[rows, a])
        arms[t:t + m] = a
        t += m
    return time.perf_counter() - t0, arms


def _spread(values) -> str:
    v = np.asarray(values, dtype=float)
    return f"{np.median(v):,.1f} ({v.min():,.1f}-{v.max():,.1f})"


def time_agents(names, spec, x, r, repeats: int, vw_us: float | None = None) -> list[str]:
    from privbandit.agents import PolicyAgent

    n = x.shape[0]
    # warm-up: lazy imports (scipy) and first calls stay out of the timings
    warm = spec.__class__(spec.n_arms, spec.dim, 64, spec.bound, spec.link)
    for name in names:
        loop_run(name, warm, x[:64], r[:64])
        batch_run(name, warm, x[:64], r[:64])
    loop_us = {name: [] for name in names}
    batch_rps = {name: [] for name in names}
    differ = {name: [] for name in names}
    for _ in range(repeats):
        for name in names:
            s_loop, a_loop = loop_run(name, spec, x, r)
            s_batch, a_batch = batch_run(name, spec, x, r)
            loop_us[name].append(s_loop / n * 1e6)
            batch_rps[name].append(n / s_batch)
            differ[name].append(int(np.count_nonzero(a_loop != a_batch)))
    lines = ["| agent | step loop us/round, median (range) | batch path rounds/s, median (range) | rounds with "
             "other arms (max) | target (step loop) | floor (batch path) |", "|---|---|---|---|---|---|"]
    for name in names:
        med = float(np.median(loop_us[name]))
        verdict = ""
        if isinstance(_make(name), PolicyAgent) and vw_us is not None:     # every elimination and SquareCB agent
            verdict = (f"<= VW ({vw_us:.1f}): met" if med <= vw_us
                       else f"<= VW ({vw_us:.1f}): MISSED by {med / vw_us:.1f}x")
        floor = BATCH_FLOORS.get(name)
        rps = float(np.median(batch_rps[name]))
        floor_verdict = "" if floor is None else (f">= {floor:,.0f}: met" if rps >= floor
                                                  else f">= {floor:,.0f}: MISSED by {floor / rps:.2f}x")
        lines.append(f"| {name} | {_spread(loop_us[name])} | {_spread(batch_rps[name])} | {max(differ[name])} | "
                     f"{verdict} | {floor_verdict} |")
    return lines


def _blocks(ours, theirs, n: int, block: int) -> np.ndarray:
    """Alternate ours(lo, hi) and theirs(lo, hi) over blocks; per-block ratios theirs/ours of the times."""
    ratios, t_ours, t_theirs = [], 0.0, 0.0
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        s0 = time.perf_counter()
        ours(lo, hi)
        s1 = time.perf_counter()
        theirs(lo, hi)
        s2 = time.perf_counter()
        ratios.append((s2 - s1) / (s1 - s0))
        t_ours += s1 - s0
        t_theirs += s2 - s1
    return np.array(ratios), t_ours / n * 1e6, t_theirs / n * 1e6


def _our_steps(name, spec, x, r):
    agent = _make(name).reset(spec, rng=0)

    def ours(lo, hi):
        for t in range(lo, hi):
            a = agent.act(x[t])
            agent.update(x[t, a], r[t, a])
    return ours


def versus_vw(spec, x, r, block: int) -> tuple[list[str], float | None]:
    """VW against squarecb-nonprivate in alternating blocks: report lines and VW's us/round (None if missing)."""
    try:
        import vowpalwabbit
    except ImportError:
        return ["- VW: skipped (vowpalwabbit not installed; `pip install privbandit[bench]`)"], None
    n, k, d = x.shape
    vw = vowpalwabbit.Workspace("--cb_explore_adf --squarecb --quiet")
    u = np.random.default_rng(1).random(n)

    def lines_of(t, label=None):
        rows = ["shared | c"]
        for a in range(k):
            feats = " ".join(f"f{i}:{x[t, a, i]:.6g}" for i in range(d))
            rows.append((f"0:{label[1]:.6g}:{label[2]:.6g} " if label and label[0] == a else "") + f"| {feats}")
        return rows

    def theirs(lo, hi):
        for t in range(lo, hi):
            pmf = np.asarray(vw.predict(lines_of(t)))
            a = min(int(np.searchsorted(np.cumsum(pmf), u[t] * pmf.sum(), side="right")), k - 1)
            vw.learn(lines_of(t, (a, -float(r[t, a]), float(pmf[a]))))

    ratios, ours_us, vw_us = _blocks(_our_steps("squarecb-nonprivate", spec, x, r), theirs, n, block)
    vw.finish()
    med = float(np.median(ratios))
    return [f"- squarecb-nonprivate vs VW {vowpalwabbit.__version__} `--cb_explore_adf --squarecb` (text lines "
            f"included), {n} rounds in blocks of {block}: ours {ours_us:.1f} us/round, VW {vw_us:.1f} us/round; "
            f"per-block ratio VW/ours median {med:.2f}x (range {ratios.min():.2f}-{ratios.max():.2f})"], vw_us


def versus_mabwiser(spec, x, r, block: int) -> list[str]:
    try:
        from mabwiser.mab import MAB, LearningPolicy
    except ImportError:
        return ["- MABWiser: skipped (mabwiser not installed; `pip install privbandit[bench]`)"]
    n, k, _ = x.shape
    ctx = x.mean(axis=1)
    mab = MAB(arms=list(range(k)), learning_policy=LearningPolicy.LinUCB(alpha=1.0, l2_lambda=1.0), seed=0)
    mab.fit(decisions=list(range(k)), rewards=[0.0] * k, contexts=ctx[:k])

    def theirs(lo, hi):
        for t in range(lo, hi):
            arm = mab.predict(ctx[t:t + 1])
            mab.partial_fit([arm], [float(r[t, int(arm)])], ctx[t:t + 1])

    ratios, ours_us, mab_us = _blocks(_our_steps("linucb", spec, x, r), theirs, n, block)
    med = float(np.median(ratios))
    verdict = "met" if med >= MABWISER_TARGET else f"MISSED ({med:.2f}x)"
    return [f"- linucb vs MABWiser LinUCB (predict + partial_fit per round), {n} rounds in blocks of {block}: "
            f"ours {ours_us:.1f} us/round, MABWiser {mab_us:.1f} us/round; per-block ratio MABWiser/ours median "
            f"{med:.2f}x (range {ratios.min():.2f}-{ratios.max():.2f}); target >= {MABWISER_TARGET:g}x: {verdict}"]


def main(argv=None) -> int:
    args = parse_args(argv)
    from privbandit.agents import agent_names

    names = args.agents or [a for a in agent_names() if a != "uniform"] + ["uniform"]
    unknown = sorted(set(names) - set(agent_names()))
    if unknown:
        print(f"bench_speed.py: error: unknown agent(s) {unknown}; choose from {agent_names()}", file=sys.stderr)
        return 2
    n = 2 ** args.log2_rounds
    spec, x, r = sample_stream(n, args.arms, args.dim)
    out = [f"# Speed: step loop and batch path (d = {args.dim}, K = {args.arms}, T = 2^{args.log2_rounds}, "
           f"{args.repeats} alternating runs, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')})",
           "", f"Command: `python scripts/bench_speed.py {' '.join(argv if argv is not None else sys.argv[1:])}`", ""]
    baselines, vw_us = [], None
    if not args.no_baselines:
        vw_lines, vw_us = versus_vw(spec, x, r, args.block)
        baselines = [""] + vw_lines + versus_mabwiser(spec, x, r, args.block)
    out += time_agents(names, spec, x, r, args.repeats, vw_us) + baselines
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
