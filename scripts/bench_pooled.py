"""The pooled private agents against their unpooled siblings and the baselines, seed by seed.

For each family and seed, :func:`privbandit.sim.run_many` plays every agent of the chosen set on one env draw
(each agent's ledger is checked there); private agents are run at each epsilon, non-private ones once. The
script prints, per family, epsilon and agent: the mean final regret with its 95% t-interval, the median, the
worst seed over the median, the ratio to the reference agent (ratio of means, and the largest per-seed ratio,
paired by seed), the ratio to the best non-private agent's mean, and how often the widths cover (below). One row
per run and checkpoint (powers of two up to the horizon; ``--final-only``: the horizon only) goes to a CSV;
``--from-csv`` summarises stored CSVs (several are concatenated, later files replacing earlier rows of the same
agent, family, epsilon and seed), so one agent can be re-measured without re-running the others.

Coverage. At the end of each run of an epoch-batched agent, its last released Estimate is checked against the
env's theta*: on every arm of ``COVERAGE_ROUNDS`` fresh rounds (the features the agent's test and UCB score read,
drawn with their own generator), the share of features with |mean(phi) - nu(<phi, theta*>)| <= width(phi).
The summary gives its mean and its lowest value over seeds, and the median width. Per-round agents (LinUCB and
its private versions) release no Estimate; their coverage is left empty.

Why its own process pool, not :func:`privbandit.bench.sweep`: a sweep plays one agent per cell on the cell's own
round stream and keeps its table, not the agent; this script plays a set of agents on one env draw per seed
(:func:`~privbandit.sim.run_many`, its rounds seeded by ``seed``) and reads each agent's last Estimate for the
coverage, so a sweep would change the rounds, and with them every number it prints and the stored CSVs.

Sets (``--set``):

- ``jdp`` (d = K = 10): elim-jdp-pooled, the same planning on every release without the projection's bias
  (its settings before ``plan_window``), elim-jdp-ucb (reference), linucb-jdp with both radii, linucb
  (practical radius) and elim-ucb; LinUCB agents with ``batch_size=64``.
- ``ldp`` (d = K = 5): elim-ldp-pooled, elim-ldp-greedy-pooled, elim-ldp-greedy, ldp-ucb with both radii
  (``batch_size=64``; the reference is the better ldp-ucb row, chosen per family), uniform, linucb (practical).

Usage::

    OPENBLAS_NUM_THREADS=1 nice -n 5 python scripts/bench_pooled.py --set jdp --log2-horizon 20 --seeds 10 \\
        --epsilons 1,0.3 --jobs 2 --out bench-out/pooled-jdp-2p20.csv
    python scripts/bench_pooled.py --from-csv bench-out/pooled-jdp-2p20.csv --set jdp
    python scripts/bench_pooled.py --set jdp --log2-horizon 14 --seeds 2 --families spiky   # a smoke run

The documentation's table of the pooled agents' coverage is ``--markdown`` on the runs these commands saved
(committed, since the build cannot spend their CPU time)::

    python scripts/bench_pooled.py --set jdp --agents "elim-jdp-pooled,elim-jdp-pooled (rho 1)" --final-only \
        --jobs 2 --out docs/data/pooled_jdp.csv
    python scripts/bench_pooled.py --set ldp --agents "elim-ldp-pooled,elim-ldp-pooled (rho 1)" --final-only \
        --jobs 2 --out docs/data/pooled_ldp.csv
    python scripts/bench_pooled.py --from-csv docs/data/pooled_jdp.csv,docs/data/pooled_ldp.csv --markdown
"""

from __future__ import annotations

import argparse
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from dataclasses import replace  # noqa: E402

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

import privbandit  # noqa: E402,F401  (registers the envs)
from privbandit.agents import make_agent  # noqa: E402
from privbandit.agents.pooled import POOLED_LDP_LEARNER, PooledReleases  # noqa: E402
from privbandit.sim import run_many  # noqa: E402

DELTA = 1e-5
LINUCB = dict(batch_size=64)
AGENT_SETS: dict[str, dict[str, tuple[str, dict, bool]]] = {
    "jdp": {
        "elim-jdp-pooled": ("elim-jdp-pooled", {}, True),
        "elim-jdp-pooled (rho 1)": ("elim-jdp-pooled", dict(pooling=PooledReleases(rho=1.0)), True),
        "elim-jdp-pooled (every release)": ("elim-jdp-pooled",
                                            dict(pooling=PooledReleases(plan_window=None, projection_bias=False)),
                                            True),
        "elim-jdp-pooled (every release + projection bias)": ("elim-jdp-pooled",
                                                               dict(pooling=PooledReleases(plan_window=None)), True),
        "elim-jdp-ucb": ("elim-jdp-ucb", {}, True),
        "linucb-jdp (theory)": ("linucb-jdp", dict(LINUCB, radius="theory"), True),
        "linucb-jdp (practical)": ("linucb-jdp", dict(LINUCB, radius="practical"), True),
        "linucb (practical)": ("linucb", dict(LINUCB, radius="practical"), False),
        "elim-ucb": ("elim-ucb", {}, False),
    },
    "ldp": {
        "elim-ldp-pooled": ("elim-ldp-pooled", {}, True),
        "elim-ldp-pooled (rho 1)": ("elim-ldp-pooled", dict(pooling=replace(POOLED_LDP_LEARNER, rho=1.0)), True),
        "elim-ldp-greedy-pooled": ("elim-ldp-pooled", dict(play="greedy"), True),
        "elim-ldp-greedy": ("elim-ldp-greedy", {}, True),
        "ldp-ucb (theory)": ("ldp-ucb", dict(LINUCB, radius="theory"), True),
        "ldp-ucb (practical)": ("ldp-ucb", dict(LINUCB, radius="practical"), True),
        "uniform": ("uniform", {}, False),
        "linucb (practical)": ("linucb", dict(LINUCB, radius="practical"), False),
    },
}
REFERENCE = {"jdp": ("elim-jdp-ucb",), "ldp": ("ldp-ucb (theory)", "ldp-ucb (practical)")}
SHAPE = {"jdp": (10, 10), "ldp": (5, 5)}
COVERAGE_ROUNDS = 1024
"""Fresh rounds whose every arm's features the coverage of a final Estimate is measured on."""
COVERAGE_SEED = 2 ** 31 - 1
"""Added to the run's seed for the generator of the coverage features (the run's own streams stay untouched)."""


def final_coverage(agent, env, seed: int, n_rounds: int = COVERAGE_ROUNDS) -> tuple[float, float]:
    """(share of fresh features whose mean the agent's last Estimate's width covers, their median width).

    ``env`` is the run's env (its theta*, its contexts); features: every arm of ``n_rounds`` fresh rounds. NaNs for an
    agent that released no Estimate (per-round agents, or a run shorter than the first epoch).
    """
    estimates = getattr(agent, "estimates", None)
    if not estimates:
        return float("nan"), float("nan")
    estimate = estimates[-1]
    base = env.unwrapped
    features = base.uniform_policy_features(n_rounds, rng=seed + COVERAGE_SEED)
    truth = estimate.link(features @ base.theta)
    width = estimate.width(features)
    return float(np.mean(np.abs(estimate.mean(features) - truth) <= width)), float(np.median(width))


def run_cell(task: tuple) -> list[dict]:
    """Every agent of ``labels`` on one family and seed (private ones at each epsilon); one row per checkpoint."""
    agent_set, labels, family, seed, epsilons, horizon, dim, n_arms, final_only = task
    spec = AGENT_SETS[agent_set]
    env = gym.make("PrivLinCB-v0", family=family, dim=dim, n_arms=n_arms, horizon=horizon)
    checkpoints = [horizon] if final_only else [2 ** k for k in range(8, int(np.log2(horizon)) + 1)]
    rows = []
    for i, eps in enumerate(epsilons):
        chosen = [lab for lab in labels if spec[lab][2] or i == 0]
        if not chosen:
            continue
        agents = [make_agent(spec[lab][0], **({"epsilon": eps, "delta": DELTA} if spec[lab][2] else {}), **spec[lab][1])
                  for lab in chosen]
        tables = run_many(agents, env, horizon=horizon, seed=seed)
        for lab, agent, table in zip(chosen, agents, tables):
            cum = table.set_index("t")["cum_regret"]
            coverage, width = final_coverage(agent, env, seed)
            for t in checkpoints:
                final = t == horizon
                rows.append(dict(set=agent_set, family=family, dim=dim, n_arms=n_arms,
                                 epsilon=eps if spec[lab][2] else np.inf, agent=lab, seed=seed, horizon=horizon,
                                 t=t, cum_regret=float(cum.loc[t]), seconds=table.attrs["agent_seconds"],
                                 coverage=coverage if final else np.nan, median_width=width if final else np.nan))
    env.close()
    return rows


def summarise(df: pd.DataFrame, agent_set: str, t: int) -> pd.DataFrame:
    """Per family, epsilon and agent at round t: mean ± 95% interval, median, worst / median and the ratios."""
    df = df[df["t"] == t]
    out = []
    for (family, dim, n_arms), block in df.groupby(["family", "dim", "n_arms"], sort=False):
        public = block[~np.isfinite(block["epsilon"])]
        best_np = public.groupby("agent")["cum_regret"].mean().min() if len(public) else np.nan
        for eps in sorted(set(block["epsilon"][np.isfinite(block["epsilon"])]), reverse=True):
            cell = pd.concat([block[block["epsilon"] == eps], public])
            by_agent = {a: g.set_index("seed")["cum_regret"] for a, g in cell.groupby("agent", sort=False)}
            refs = [r for r in REFERENCE[agent_set] if r in by_agent]
            ref = min(refs, key=lambda r: by_agent[r].mean()) if refs else None
            for agent, r in by_agent.items():
                n = len(r)
                half = stats.t.ppf(0.975, n - 1) * r.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
                row = dict(family=family, d=dim, K=n_arms, epsilon=eps, agent=agent, seeds=n, mean=r.mean(),
                           ci95=half, median=r.median(), worst_over_median=r.max() / r.median())
                if ref is not None:
                    paired = (r / by_agent[ref]).dropna()
                    row.update({"vs_ref": r.mean() / by_agent[ref].mean(), "worst_paired_vs_ref": paired.max(),
                                "seeds_lost_to_ref": int((paired > 1).sum())})
                row["vs_best_nonprivate"] = r.mean() / best_np
                cover = cell[cell["agent"] == agent]
                if "coverage" in cover and cover["coverage"].notna().any():
                    row.update(coverage=cover["coverage"].mean(), min_coverage=cover["coverage"].min(),
                               median_width=cover["median_width"].median())
                out.append(row)
    return pd.DataFrame(out)


def markdown(df: pd.DataFrame) -> str:
    """The pooled agents' regret and coverage at each set's horizon, one Markdown row per family, epsilon and agent."""
    lines = ["| family | d = K | epsilon | agent | regret at T, mean [95% interval] | worst / median seed "
             "| coverage, mean (lowest seed) | median width |", "|---|---|---|---|---|---|---|---|"]
    for agent_set, block in df.groupby("set", sort=False):
        horizon = int(block["horizon"].max())
        table = summarise(block, agent_set, horizon)
        if "coverage" not in table:
            raise ValueError(f"the runs of set {agent_set!r} carry no coverage (saved before it was measured)")
        for row in table.itertuples(index=False):
            if np.isnan(row.coverage):
                continue
            lines.append(f"| {row.family} | {row.d} | {row.epsilon:g} | `{row.agent}` | {row.mean:,.0f} "
                         f"[{row.mean - row.ci95:,.0f}, {row.mean + row.ci95:,.0f}] | {row.worst_over_median:.2f} "
                         f"| {row.coverage:.3f} ({row.min_coverage:.3f}) | {row.median_width:.3g} |")
    horizons = sorted({int(h) for h in df["horizon"]})
    seeds = df.groupby("set")["seed"].nunique()
    lines.append("")
    horizon_text = ", ".join(f"2^{int(np.log2(h))}" for h in horizons)
    seed_text = ", ".join(map(str, sorted(set(seeds))))
    lines.append(f"T = {horizon_text}; {seed_text} seeds; delta = {DELTA:g}; coverage on every arm of "
                 f"{COVERAGE_ROUNDS} fresh rounds per seed.")
    return "\n".join(lines) + "\n"


RUN_COLUMNS = ("set", "family", "dim", "n_arms", "epsilon", "agent", "seed", "horizon", "t", "cum_regret")
"""The columns every saved run has (runs saved before coverage was measured lack ``coverage``, ``median_width``)."""


def load(paths: list[str]) -> pd.DataFrame:
    """Concatenate CSVs; a later file's rows replace earlier rows of the same run.

    Raises ValueError naming the file when one is missing, unreadable or not this script's ``--out``.
    """
    frames = []
    for path in paths:
        try:
            frame = pd.read_csv(path)
        except (OSError, ValueError) as exc:        # missing, empty or not a CSV
            raise ValueError(f"cannot read {path!r} ({exc})") from None
        missing = [c for c in RUN_COLUMNS if c not in frame]
        if missing or frame.empty:
            raise ValueError(f"{path!r} is not a saved run of this script (no rows, or no columns {missing})")
        frames.append(frame)
    df = pd.concat(frames, ignore_index=True)
    return df.drop_duplicates(["family", "dim", "n_arms", "epsilon", "agent", "seed", "t"], keep="last")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--set", choices=sorted(AGENT_SETS), default="jdp")
    p.add_argument("--agents", default="", help="comma-separated labels of the set (default: all)")
    p.add_argument("--families", default="rare-direction,heavy-tailed,spiky")
    p.add_argument("--log2-horizon", type=int, default=20)
    p.add_argument("--at-log2", type=int, default=None, help="summarise at round 2^k (default: the horizon)")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--epsilons", default="1,0.3")
    p.add_argument("--dim", type=int, default=None)
    p.add_argument("--arms", type=int, default=None)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", default=None, help="CSV of every run (put it in an ignored folder, e.g. bench-out/)")
    p.add_argument("--final-only", action="store_true", help="write only the rows at the horizon")
    p.add_argument("--from-csv", default="", help="comma-separated CSVs to summarise instead of running")
    p.add_argument("--markdown", action="store_true",
                   help="print the regret and coverage table in Markdown (for the docs) instead of the summary")
    args = p.parse_args(argv)
    if args.log2_horizon < 8 or args.seeds < 1 or args.jobs < 1:
        p.error("--log2-horizon must be >= 8, --seeds and --jobs >= 1")
    labels = [a for a in args.agents.split(",") if a] or list(AGENT_SETS[args.set])
    unknown = set(labels) - set(AGENT_SETS[args.set])
    if unknown:
        p.error(f"--agents: unknown {sorted(unknown)}; the set {args.set!r} has {list(AGENT_SETS[args.set])}")
    if args.from_csv:
        try:
            df = load(args.from_csv.split(","))
        except ValueError as exc:
            p.error(f"--from-csv: {exc}")
        if args.markdown:       # every set in the files; --agents narrows it
            df = df[df["agent"].isin(labels)] if args.agents else df
            try:
                print(markdown(df), end="")
            except ValueError as exc:
                p.error(f"--from-csv: {exc}")
            return
        df = df[df["agent"].isin(labels)]
    else:
        d, k = SHAPE[args.set]
        d, k = args.dim or d, args.arms or k
        epsilons = [float(e) for e in args.epsilons.split(",") if e]
        tasks = [(args.set, labels, fam, s, epsilons, 2 ** args.log2_horizon, d, k, args.final_only)
                 for fam in args.families.split(",") if fam
                 for s in range(args.first_seed, args.first_seed + args.seeds)]
        with ProcessPoolExecutor(args.jobs) as pool:
            df = pd.DataFrame([row for rows in pool.map(run_cell, tasks) for row in rows])
        if args.out:
            os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
            df.to_csv(args.out, index=False)
            print(f"wrote {args.out}")
        if args.markdown:
            print(markdown(df), end="")
            return
    t = 2 ** args.at_log2 if args.at_log2 else int(df["horizon"].max())
    if not (df["t"] == t).any():
        p.error(f"--at-log2: no runs logged round {t} (saved with --final-only, or a shorter horizon)")
    table = summarise(df, args.set, t)
    print(f"Final regret at t = 2^{int(np.log2(t))}, delta = {DELTA:g} ({args.set}; ratios: vs_ref = mean / the "
          f"reference's mean, paired per seed for the worst and the count lost)\n")
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.3g}".format):
        for (family, d, k), block in table.groupby(["family", "d", "K"], sort=False):
            print(f"## {family}, d = {d}, K = {k}")
            print(block.drop(columns=["family", "d", "K"]).to_string(index=False), end="\n\n")


if __name__ == "__main__":
    main()
