"""Teaching demo: the price of privacy. Joint DP is almost free; local DP costs ~ 1/epsilon.

Action elimination (`alg:batch-cb-meta`) runs on the same heavy-tailed-norm bandit (d = 5, K = 5) with
three oracles: non-private ridge, IW-Regression-DP (joint DP, `alg:batch-cb-JDP`) and IW-Regression-LDP
(local DP, `appdx:regret-upper-LDP`), for several epsilons and seeds. The paper's rates (`tab:comp`):
the joint-DP price is an additive term that fades as epsilon sqrt(T) grows, the local-DP regret carries
a 1/epsilon factor.

Writes ``price_of_privacy.png`` (regret at the horizon against epsilon) and prints the table, the ratio
of joint-DP to non-private regret, and the log-log slope of regret against epsilon for each model
(0 = free, -1 = ~1/epsilon; flattening at small epsilon where regret saturates at uniform play).

Run: ``python scripts/demo_price_of_privacy.py [--horizon 8192] [--seeds 3] [--jobs 2] [--out DIR]``

References
----------
Source paper, `tab:comp`, `eq:PoP`, `alg:batch-cb-JDP`, `appdx:regret-upper-LDP`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from privbandit import plots  # noqa: E402
from privbandit.sim.report import final_rows  # noqa: E402
from privbandit.sim.suites import lin_env  # noqa: E402
from privbandit.sim.sweep import AgentEntry, Grid, sweep  # noqa: E402

AGENTS = (AgentEntry("uniform", private=False), AgentEntry("elim-nonprivate", private=False),
          AgentEntry("elim-jdp", private=True), AgentEntry("elim-ldp", private=True))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--horizon", type=int, default=2 ** 13, help="rounds T (default 8192)")
    p.add_argument("--seeds", type=int, default=3, help="seeds (default 3)")
    p.add_argument("--epsilons", default="0.1,0.3,1,3,10", help="comma-separated epsilons")
    p.add_argument("--jobs", type=int, default=2, help="parallel workers (default 2)")
    p.add_argument("--out", type=Path, default=Path("results/demos"), help="output folder")
    args = p.parse_args(argv)
    try:
        eps = tuple(float(e) for e in args.epsilons.split(","))
    except ValueError:
        p.error(f"--epsilons must be comma-separated numbers, got {args.epsilons!r}")
    if args.horizon < 2 or args.seeds < 1 or min(eps) <= 0:
        p.error("need horizon >= 2, seeds >= 1 and epsilons > 0")

    grid = Grid(AGENTS, (lin_env("heavy-tailed", 5, 5),), epsilons=eps, seeds=args.seeds, horizon=args.horizon)
    res = sweep(grid.cells(), args.out / "price_of_privacy", jobs=args.jobs, progress=True)
    final = final_rows(res.table)

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    plots.regret_vs_epsilon(res.table, ax=ax, title=f"price of privacy (heavy-tailed, d=5, K=5, T={args.horizon})")
    fig.tight_layout()
    path = args.out / "price_of_privacy.png"
    fig.savefig(path, dpi=90)

    mean = final.groupby(["agent", "epsilon"])["cum_regret"].mean()
    base = float(mean.loc[("elim-nonprivate", np.inf)])
    uniform = float(mean.loc[("uniform", np.inf)])
    print(f"Regret at T = {args.horizon} (mean of {args.seeds} seeds): non-private {base:.1f}, uniform {uniform:.1f}")
    print(f"{'epsilon':>8s} {'joint DP':>10s} {'JDP / non-private':>18s} {'local DP':>10s} {'LDP x epsilon':>14s}")
    for e in eps:
        j, loc = float(mean.loc[("elim-jdp", e)]), float(mean.loc[("elim-ldp", e)])
        print(f"{e:8g} {j:10.1f} {j / base:18.2f} {loc:10.1f} {loc * e:14.1f}")
    for agent, model in (("elim-jdp", "joint DP"), ("elim-ldp", "local DP")):
        y = np.array([float(mean.loc[(agent, e)]) for e in eps])
        slope = np.polyfit(np.log(eps), np.log(y), 1)[0]
        print(f"log-log slope of regret against epsilon, {model}: {slope:+.2f}")
    print("What it shows: joint-DP elimination's regret stays near the non-private one once epsilon is moderate\n"
          "(ratio near 1: privacy almost for free), while the local-DP regret grows as epsilon shrinks (slope toward\n"
          f"-1: a 1/epsilon price) until it saturates near uniform play. Figure: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
