"""Teaching demo: the price of privacy, joint DP against local DP, as epsilon varies.

The agents that learn play the same rare-direction bandit (``PrivLinCB-v0``, d = K = 5) for several
epsilons and seeds, all action elimination in epochs (`alg:batch-cb-meta`):

- joint DP: ``elim-jdp-pooled`` (IW-Regression-DP, `alg:JDP-linear-regression`, warm-started W and the
  epochs' released statistics pooled) and ``elim-jdp-ucb`` (the same oracle, each epoch fitted alone);
- local DP: ``elim-ldp-pooled`` (IW-Regression-LDP, `alg:LDP-linear-regression`, the epochs pooled);
- references: the non-private ``elim-ucb`` (pooled ridge, UCB planning) and ``uniform`` (learns nothing).

A second panel fits the two regression oracles behind these agents on T rows of the same contexts and
shows their Sigma-norm error against epsilon.

It prints the regret table (mean and 95% interval over seeds, on the log scale as in the figure's
bands), the joint-DP / non-private ratio (95% percentile bootstrap over paired seeds), the log-log
slopes of regret against epsilon (bootstrap interval over seeds) beside the slope each agent's
`tab:comp` bound gives, the regression errors, and closing conclusions computed from those numbers only
(``scripts/demo_studies.py``), so a run states what it measured, whatever its size. Writes ``price_of_privacy.png``.

Run: ``python scripts/demo_price_of_privacy.py [--horizon 262144] [--seeds 6] [--jobs 2] [--out DIR]``
(about 3 minutes on 2 cores at the defaults).

References
----------
Source paper, `tab:comp`, `eq:PoP`, `thm:regret-upper-JDP`, `thm:regret-upper-LDP`, `alg:batch-cb-meta`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from privbandit.bench.grid import AgentEntry, Grid  # noqa: E402
from privbandit.bench.suites import lin_env  # noqa: E402
from privbandit.bench.sweep import sweep  # noqa: E402
from privbandit.report import figures as plots  # noqa: E402
from privbandit.report.tables import final_rows, format_interval, nonnegative_mean_ci  # noqa: E402

from demo_studies import (  # noqa: E402,F401
    first_epsilon_from_which,
    price_conclusions,
    rate_conclusion,
    ratio_of_means,
    regression_errors,
    regret_by_seed,
    slope_conclusion,
)
from paper_rates import PAPER_RATES, fit_exponent  # noqa: E402

JDP, JDP_EPOCH, LDP, REFERENCE, UNIFORM = "elim-jdp-pooled", "elim-jdp-ucb", "elim-ldp-pooled", "elim-ucb", "uniform"
PRIVATE = (JDP, JDP_EPOCH, LDP)
AGENTS = (AgentEntry(UNIFORM, private=False), AgentEntry(REFERENCE, private=False),
          *(AgentEntry(name, private=True) for name in PRIVATE))
FAMILY, DIM, DELTA = "rare-direction", 5, 1e-5


def _interval(values: np.ndarray) -> str:
    return format_interval(*nonnegative_mean_ci(values))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--horizon", type=int, default=2 ** 18, help="rounds T (default 262144)")
    p.add_argument("--seeds", type=int, default=6, help="seeds (default 6)")
    p.add_argument("--epsilons", default="0.3,1,3,10,30", help="comma-separated epsilons")
    p.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples of the seeds (default 2000)")
    p.add_argument("--jobs", type=int, default=2, help="parallel workers (default 2)")
    p.add_argument("--out", type=Path, default=Path("results/demos"), help="output folder")
    args = p.parse_args(argv)
    try:
        eps = tuple(sorted(float(e) for e in args.epsilons.split(",")))
    except ValueError:
        p.error(f"--epsilons must be comma-separated numbers, got {args.epsilons!r}")
    if args.horizon < 2 or args.seeds < 1 or len(set(eps)) < 2 or min(eps) <= 0 or args.bootstrap < 0:
        p.error("need --horizon >= 2, --seeds >= 1, two distinct --epsilons > 0 and --bootstrap >= 0")
    nb = args.bootstrap

    grid = Grid(AGENTS, (lin_env(FAMILY, DIM, DIM),), epsilons=eps, seeds=args.seeds, horizon=args.horizon,
                delta=DELTA)
    res = sweep(grid.cells(), args.out / "price_of_privacy", jobs=args.jobs, progress=True)
    final = final_rows(res.table)
    reg = regression_errors(eps, args.horizon, args.seeds, delta=DELTA)

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    plots.regret_vs_epsilon(res.table, ax=axes[0],
                            title=f"regret at T = {args.horizon} ({FAMILY}, d = K = {DIM}, {args.seeds} seeds)")
    axes[0].set_yscale("log")
    plots.metric_vs_T(reg, "error", x="epsilon", hue="model", ax=axes[1],
                      title=f"IW regression: Sigma-norm error, n = {args.horizon}")
    axes[1].set_xticks(eps, [f"{e:g}" for e in eps])
    axes[1].xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axes[1].set_xlabel("epsilon")
    fig.tight_layout()
    path = args.out / "price_of_privacy.png"
    fig.savefig(path, dpi=90)

    runs = {name: regret_by_seed(final, name, eps) for name in PRIVATE}
    ref, uni = regret_by_seed(final, REFERENCE), regret_by_seed(final, UNIFORM)
    ratio, low, high = ratio_of_means(runs[JDP], ref, n_boot=nb)
    print(f"\nRegret at T = {args.horizon}, {FAMILY} d = K = {DIM}, delta = {DELTA:g}: mean [95% interval, log scale] "
          f"over {args.seeds} seeds")
    print(f"non-private: {REFERENCE} {_interval(ref[:, 0])}, {UNIFORM} {_interval(uni[:, 0])}")
    head = (f"{'epsilon':>8s}  {JDP:>22s}  {JDP_EPOCH:>22s}  {LDP:>24s}  {JDP + ' / ' + REFERENCE:>28s}  "
            f"{LDP + ' / uniform':>26s}")
    print(head)
    for i, e in enumerate(eps):
        jr = f"{ratio[i]:.2f}" + ("" if np.isnan(low[i]) else f" [{low[i]:.2f}, {high[i]:.2f}]")
        print(f"{e:8g}  {_interval(runs[JDP][:, i]):>22s}  {_interval(runs[JDP_EPOCH][:, i]):>22s}  "
              f"{_interval(runs[LDP][:, i]):>24s}  {jr:>28s}  {runs[LDP][:, i].mean() / uni.mean():26.3f}")
    print(f"({JDP} / {REFERENCE}: ratio of means, 95% percentile bootstrap over paired seeds)")

    slopes = {name: fit_exponent(eps, runs[name], n_boot=nb) for name in PRIVATE}
    print("\nLog-log slope of regret against epsilon (fit through the mean over seeds; 95% bootstrap over seeds),"
          "\nbeside the slope the agent's bound in the paper's `tab:comp` gives:")
    for name, (s, lo, hi) in slopes.items():
        rate = PAPER_RATES[name]
        a, b = rate.eps_range
        paper = f"{-b:+g}" if a == b else f"{-b:+g}..{-a + 0.0:+g}"
        ci = "" if np.isnan(lo) else f" [{lo:+.2f}, {hi:+.2f}]"
        print(f"  {name:16s} measured {s:+.2f}{ci:17s} paper {paper:9s} {rate.bound} (`{rate.source}`)")
    share = runs[LDP].mean(axis=0) / uni.mean()
    learned = first_epsilon_from_which(eps, share, 0.5)
    sub = [i for i, e in enumerate(eps) if learned is not None and e >= learned]
    ldp_sub = None
    if learned is not None and learned > eps[0] and len(sub) >= 2:
        ldp_sub = fit_exponent([eps[i] for i in sub], runs[LDP][:, sub], n_boot=nb)
        where = f" at epsilon >= {learned:g} (below half of uniform's regret)"
        print(f"  {LDP:16s} measured {ldp_sub[0]:+.2f} [{ldp_sub[1]:+.2f}, {ldp_sub[2]:+.2f}]{where}")

    errors = {model: reg[reg["model"] == model].pivot(index="seed", columns="epsilon", values="error")[list(eps)]
              .to_numpy() for model in ("joint DP", "local DP")}
    print(f"\nIW regression, Sigma-norm error with n = {args.horizon} rows, mean [min, max] over {args.seeds} seeds:")
    print(f"{'epsilon':>8s}  {'joint DP':>26s}  {'local DP':>26s}  {'LDP / JDP':>9s}")
    for i, e in enumerate(eps):
        j, loc = errors["joint DP"][:, i], errors["local DP"][:, i]
        print(f"{e:8g}  {f'{j.mean():.4f} [{j.min():.4f}, {j.max():.4f}]':>26s}  "
              f"{f'{loc.mean():.4f} [{loc.min():.4f}, {loc.max():.4f}]':>26s}  {loc.mean() / j.mean():9.1f}")
    err_slopes = {model: fit_exponent(eps, v, n_boot=nb) for model, v in errors.items()}

    lines = price_conclusions(eps, ratio, low, high, runs[JDP].mean(axis=0), runs[LDP].mean(axis=0),
                              float(uni.mean()), jdp=JDP, ldp=LDP, reference=REFERENCE)
    pooled = runs[JDP].mean(axis=0) / runs[JDP_EPOCH].mean(axis=0)
    lines.append(f"Pooling the epochs: {JDP}'s regret is {pooled.min():.2f}-{pooled.max():.2f}x {JDP_EPOCH}'s "
                 "across these epsilons.")
    lines.append(rate_conclusion(JDP, slopes[JDP], PAPER_RATES[JDP]))
    lines.append(rate_conclusion(LDP, slopes[LDP], PAPER_RATES[LDP], ceiling=(eps[0], float(share[0]))))
    if ldp_sub is not None:
        lines.append(rate_conclusion(LDP, ldp_sub, PAPER_RATES[LDP], where=f" at epsilon >= {learned:g}"))
    lines += [slope_conclusion(f"{model} regression error", s, low=lo, high=hi)
              for model, (s, lo, hi) in err_slopes.items()]
    print(f"\nWhat this run shows (T = {args.horizon}, {args.seeds} seeds):")
    for line in lines:
        print(f"- {line}")
    print(f"Figure: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
