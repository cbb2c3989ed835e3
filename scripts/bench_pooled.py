"""The pooled private agents against their unpooled siblings and the baselines, seed by seed.

For each family and seed, :func:`privbandit.sim.run_many` plays every agent of the chosen set on one env draw
(each agent's ledger is checked there); private agents are run at each epsilon, non-private ones once. The
script prints, per family, epsilon and agent: the mean final regret with its 95% t-interval, the median, the
worst seed over the median, the ratio to the reference agent (ratio of means, and the largest per-seed ratio,
paired by seed), and the ratio to the best non-private agent's mean. One row per run and checkpoint (powers of
two up to the horizon) goes to a CSV; ``--from-csv`` summarises stored CSVs (several are concatenated, later
files replacing earlier rows of the same agent, family, epsilon and seed), so one agent can be re-measured
without re-running the others.

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
"""

from __future__ import annotations

import argparse
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from concurrent.futures import ProcessPoolExecutor  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

import privbandit  # noqa: E402,F401  (registers the envs)
from privbandit.agents import make_agent  # noqa: E402
from privbandit.sim import run_many  # noqa: E402

DELTA = 1e-5
LINUCB = dict(batch_size=64)
AGENT_SETS: dict[str, dict[str, tuple[str, dict, bool]]] = {
    "jdp": {
        "elim-jdp-pooled": ("elim-jdp-pooled", {}, True),
        "elim-jdp-pooled (every release)": ("elim-jdp-pooled", dict(plan_window=None, projection_bias=False), True),
        "elim-jdp-pooled (every release + projection bias)": ("elim-jdp-pooled", dict(plan_window=None), True),
        "elim-jdp-ucb": ("elim-jdp-ucb", {}, True),
        "linucb-jdp (theory)": ("linucb-jdp", dict(LINUCB, radius="theory"), True),
        "linucb-jdp (practical)": ("linucb-jdp", dict(LINUCB, radius="practical"), True),
        "linucb (practical)": ("linucb", dict(LINUCB, radius="practical"), False),
        "elim-ucb": ("elim-ucb", {}, False),
    },
    "ldp": {
        "elim-ldp-pooled": ("elim-ldp-pooled", {}, True),
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


def run_cell(task: tuple) -> list[dict]:
    """Every agent of ``labels`` on one family and seed (private ones at each epsilon); one row per checkpoint."""
    agent_set, labels, family, seed, epsilons, horizon, dim, n_arms = task
    spec = AGENT_SETS[agent_set]
    env_kwargs = dict(family=family, dim=dim, n_arms=n_arms)
    checkpoints = [2 ** k for k in range(8, int(np.log2(horizon)) + 1)]
    rows = []
    for i, eps in enumerate(epsilons):
        chosen = [lab for lab in labels if spec[lab][2] or i == 0]
        if not chosen:
            continue
        agents = [make_agent(spec[lab][0], **({"epsilon": eps, "delta": DELTA} if spec[lab][2] else {}), **spec[lab][1])
                  for lab in chosen]
        tables = run_many(agents, "PrivLinCB-v0", horizon=horizon, seed=seed, env_kwargs=env_kwargs)
        for lab, table in zip(chosen, tables):
            cum = table.set_index("t")["cum_regret"]
            for t in checkpoints:
                rows.append(dict(set=agent_set, family=family, dim=dim, n_arms=n_arms,
                                 epsilon=eps if spec[lab][2] else np.inf, agent=lab, seed=seed, horizon=horizon,
                                 t=t, cum_regret=float(cum.loc[t]), seconds=table.attrs["agent_seconds"]))
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
                out.append(row)
    return pd.DataFrame(out)


def load(paths: list[str]) -> pd.DataFrame:
    """Concatenate CSVs; a later file's rows replace earlier rows of the same run."""
    df = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
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
    p.add_argument("--from-csv", default="", help="comma-separated CSVs to summarise instead of running")
    args = p.parse_args(argv)
    if args.log2_horizon < 8 or args.seeds < 1 or args.jobs < 1:
        p.error("--log2-horizon must be >= 8, --seeds and --jobs >= 1")
    labels = [a for a in args.agents.split(",") if a] or list(AGENT_SETS[args.set])
    unknown = set(labels) - set(AGENT_SETS[args.set])
    if unknown:
        p.error(f"--agents: unknown {sorted(unknown)}; the set {args.set!r} has {list(AGENT_SETS[args.set])}")
    if args.from_csv:
        df = load(args.from_csv.split(","))
        df = df[df["agent"].isin(labels)]
    else:
        d, k = SHAPE[args.set]
        d, k = args.dim or d, args.arms or k
        epsilons = [float(e) for e in args.epsilons.split(",") if e]
        tasks = [(args.set, labels, fam, s, epsilons, 2 ** args.log2_horizon, d, k)
                 for fam in args.families.split(",") if fam
                 for s in range(args.first_seed, args.first_seed + args.seeds)]
        with ProcessPoolExecutor(args.jobs) as pool:
            df = pd.DataFrame([row for rows in pool.map(run_cell, tasks) for row in rows])
        if args.out:
            os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
            df.to_csv(args.out, index=False)
            print(f"wrote {args.out}")
    t = 2 ** args.at_log2 if args.at_log2 else int(df["horizon"].max())
    table = summarise(df, args.set, t)
    print(f"Final regret at t = 2^{int(np.log2(t))}, delta = {DELTA:g} ({args.set}; ratios: vs_ref = mean / the "
          f"reference's mean, paired per seed for the worst and the count lost)\n")
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.3g}".format):
        for (family, d, k), block in table.groupby(["family", "d", "K"], sort=False):
            print(f"## {family}, d = {d}, K = {k}")
            print(block.drop(columns=["family", "d", "K"]).to_string(index=False), end="\n\n")


if __name__ == "__main__":
    main()
