"""The rates the paper states, measured: regret exponents in T and in 1/epsilon beside `tab:comp`'s.

For every agent, family and seed the script runs the agent on ``PrivLinCB-v0`` once per horizon T (a fresh
run per horizon, not one run at the largest T read off at smaller rounds: every agent here reads T from its
BanditSpec -- the epoch schedule cuts its last epoch at T and the oracles calibrate lambda, gamma and the noise
to that epoch's size, linucb-jdp sizes its tree by T -- so a prefix of a longer run is not a run at T). The
agents of a block share each (family, seed, horizon, epsilon)'s rounds (``privbandit.sim.run_many``).

Two fits, each a least-squares line through log(mean regret over seeds):

- **in T**: log R(T) against log T over the horizons, at epsilon = ``--epsilon``;
- **in 1/epsilon**: log R against log(1/epsilon) over the epsilons, at T = 2^``--log2-eps-horizon``
  (private agents only).

The full-size command takes hours: linucb-jdp (~340 us a round at d = K = 10) and ldp-ucb (~210 us) dominate,
about 10 CPU hours in all by those per-round costs; the elimination agents alone (``--agents``) take a fraction.

The 95% interval of each exponent is a percentile bootstrap over seeds: the seeds are resampled with
replacement (``--bootstrap`` times), the mean curve recomputed and the line refitted. With few seeds the
interval is narrow only if the seeds agree; it says nothing about curvature the line misses (the paper's
rates are sums like sqrt(T) + 1/alpha, so a single exponent is a local slope, see the notes the script
prints).

Usage::

    python scripts/bench_rates.py                          # T = 2^10..2^15, 3 seeds: ~10 CPU minutes, one process
    python scripts/bench_rates.py --log2-horizons 12,20 --seeds 10 --log2-eps-horizon 18   # full size
    python scripts/bench_rates.py --agents elim-jdp-ucb,linucb --families heavy-tailed --seeds 2
    python scripts/bench_rates.py --from docs/data/rates.csv --markdown   # an earlier run's --out, no runs

The documentation's measured rates are the last command's table, rendered at build time from
``docs/data/rates.csv``, which the full-size command wrote for the elimination agents (with ``--agents
elim-jdp-pooled,elim-jdp-ucb,elim-ldp-pooled,elim-ucb``; committed like ``docs/data/obp_offpolicy.json``,
since the build cannot spend the run's CPU time).

References
----------
Source paper, `tab:comp`, `thm:regret-upper-JDP`, `thm:regret-upper-JDP-better`, `thm:regret-upper-LDP`.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np
import pandas as pd

import privbandit  # noqa: F401  (registers the envs)
from privbandit.agents import agent_is_private, agent_names, make_agent
from privbandit.sim import run_many

from paper_rates import PAPER_RATES, fit_exponent

__all__ = ["BLOCKS", "PAPER_RATES", "fit_exponent", "main"]

BLOCKS: dict[str, tuple[tuple[str, ...], int, int]] = {
    "jdp": (("elim-jdp", "elim-jdp-ucb", "elim-jdp-pooled", "linucb-jdp", "linucb", "elim-ucb"), 10, 10),
    "ldp": (("elim-ldp", "elim-ldp-greedy", "elim-ldp-pooled", "ldp-ucb"), 5, 5),
}
"""Agents per block with (d, K): joint DP and the non-private baselines at d = K = 10, local DP at d = K = 5."""


class _Parser(argparse.ArgumentParser):
    """Bad arguments: one line on stderr (``bench_rates.py: error: ...``), exit code 2, no usage block."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _ints(text: str, what: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what} must be integers separated by commas, got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError(f"{what} must not be empty")
    return values


def _floats(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be numbers separated by commas, got {text!r}") from None
    if len(set(values)) < 2 or any(not (v > 0 and np.isfinite(v)) for v in values):
        raise argparse.ArgumentTypeError(f"needs at least two distinct values > 0, got {text!r}")
    return values


def _horizons(text: str) -> list[int]:
    lo_hi = _ints(text, "--log2-horizons")
    if len(lo_hi) != 2 or not 4 <= lo_hi[0] < lo_hi[1] <= 24:
        raise argparse.ArgumentTypeError(f"must be LO,HI with 4 <= LO < HI <= 24, got {text!r}")
    return list(range(lo_hi[0], lo_hi[1] + 1))


def parse_args(argv=None) -> argparse.Namespace:
    p = _Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--log2-horizons", type=_horizons, default=_horizons("10,15"),
                   help="LO,HI: the fit in T uses T = 2^LO .. 2^HI (every power of 2)")
    p.add_argument("--epsilons", type=_floats, default=_floats("0.1,0.3,1,3,10"),
                   help="the fit in 1/epsilon")
    p.add_argument("--epsilon", type=float, default=1.0, help="epsilon of the fit in T")
    p.add_argument("--log2-eps-horizon", type=int, default=14, help="T = 2^this for the fit in 1/epsilon")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--families", default="rare-direction,heavy-tailed,spiky")
    p.add_argument("--agents", default=",".join(PAPER_RATES), help="comma-separated, from the agents listed")
    p.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples of the seeds")
    p.add_argument("--out", default=None, help="optional CSV of every run's final regret (an ignored folder)")
    p.add_argument("--from", dest="runs", default=None, metavar="CSV",
                   help="report the exponents of an earlier run's --out CSV instead of running (its settings are "
                   "read from the file; the options that choose runs are then ignored)")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown (for the docs)")
    args = p.parse_args(argv)
    if args.runs is not None:
        try:
            runs = pd.read_csv(args.runs)
        except (OSError, ValueError) as exc:
            p.error(f"argument --from: cannot read {args.runs!r} as a bench_rates CSV ({exc})")
        missing = sorted(set(RUN_COLUMNS) - set(runs.columns))
        if missing or runs.empty:
            p.error(f"argument --from: {args.runs!r} is not a bench_rates --out CSV "
                    f"({'no rows' if not missing else 'missing columns ' + ', '.join(missing)})")
        unknown = sorted(set(runs["agent"]) - set(PAPER_RATES))
        if unknown:
            p.error(f"argument --from: {args.runs!r} names agents without a paper rate: {', '.join(unknown)}")
        return _settings_of(args, runs)
    if args.seeds < 1:
        p.error(f"argument --seeds: must be >= 1, got {args.seeds}")
    if not (args.epsilon > 0 and np.isfinite(args.epsilon)):
        p.error(f"argument --epsilon: must be finite and > 0, got {args.epsilon}")
    if not 4 <= args.log2_eps_horizon <= 24:
        p.error(f"argument --log2-eps-horizon: must be in [4, 24], got {args.log2_eps_horizon}")
    if args.bootstrap < 0:
        p.error(f"argument --bootstrap: must be >= 0, got {args.bootstrap}")
    args.agents = [a for a in args.agents.split(",") if a]
    unknown = [a for a in args.agents if a not in PAPER_RATES or a not in agent_names()]
    if not args.agents or unknown:
        p.error(f"argument --agents: must name agents from {', '.join(PAPER_RATES)}, got {unknown or 'none'}")
    args.families = [f for f in args.families.split(",") if f]
    if not args.families:
        p.error("argument --families: must not be empty")
    return args


RUN_COLUMNS: tuple[str, ...] = ("fit", "block", "agent", "family", "seed", "horizon", "epsilon", "regret")
"""The columns of the ``--out`` CSV: one row per run, its final regret."""


def _settings_of(args: argparse.Namespace, runs: pd.DataFrame) -> argparse.Namespace:
    """``args`` with the settings of a saved run (``--from``): its agents, families, seeds, horizons and epsilons
    (the report's header states those, not the command line's defaults)."""
    t_fit, eps_fit = runs[runs["fit"] == "T"], runs[runs["fit"] == "eps"]
    log2 = sorted({int(np.log2(h)) for h in t_fit["horizon"]})
    args.runs = runs
    args.agents = [a for a in PAPER_RATES if a in set(runs["agent"])]
    args.families = list(dict.fromkeys(runs["family"]))
    args.seeds = int(runs["seed"].nunique())
    args.log2_horizons = log2 or args.log2_horizons
    args.epsilon = float(t_fit["epsilon"].iloc[0]) if len(t_fit) else args.epsilon
    args.epsilons = sorted(set(eps_fit["epsilon"])) or args.epsilons
    if len(eps_fit):
        args.log2_eps_horizon = int(np.log2(eps_fit["horizon"].iloc[0]))
    return args


def _final_regrets(names: list[str], epsilon: float, family: str, dim: int, n_arms: int, horizon: int,
                   seed: int) -> list[float]:
    """Each agent's cumulative regret at ``horizon`` on the same rounds (one run per agent)."""
    agents = [make_agent(n, epsilon=epsilon, delta=1e-5) if agent_is_private(n) else make_agent(n) for n in names]
    tables = run_many(agents, "PrivLinCB-v0", horizon=horizon, seed=seed, points_per_octave=1,
                      env_kwargs=dict(family=family, dim=dim, n_arms=n_arms))
    return [float(t["cum_regret"].iloc[-1]) for t in tables]


def measure(args: argparse.Namespace) -> pd.DataFrame:
    """One row per (fit, agent, family, seed, horizon, epsilon) with the final regret."""
    rows = []
    for block, (members, dim, n_arms) in BLOCKS.items():
        names = [a for a in members if a in args.agents]
        private = [a for a in names if agent_is_private(a)]
        for family in args.families:
            for seed in range(args.seeds):
                for log2 in args.log2_horizons:
                    for name, r in zip(names, _final_regrets(names, args.epsilon, family, dim, n_arms, 2 ** log2,
                                                             seed)):
                        rows.append(dict(fit="T", block=block, agent=name, family=family, seed=seed,
                                         horizon=2 ** log2, epsilon=args.epsilon, regret=r))
                for eps in args.epsilons if private else ():
                    horizon = 2 ** args.log2_eps_horizon
                    for name, r in zip(private, _final_regrets(private, eps, family, dim, n_arms, horizon, seed)):
                        rows.append(dict(fit="eps", block=block, agent=name, family=family, seed=seed,
                                         horizon=horizon, epsilon=eps, regret=r))
                print(f"  {block} {family} seed {seed} done", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def exponents(runs: pd.DataFrame, n_boot: int) -> pd.DataFrame:
    """The fitted exponents (with intervals) per fit, agent and family."""
    out = []
    for (fit, agent, family), g in runs.groupby(["fit", "agent", "family"], sort=False):
        col = "horizon" if fit == "T" else "epsilon"
        wide = g.pivot(index="seed", columns=col, values="regret").sort_index(axis=1)
        x = wide.columns.to_numpy(dtype=float)
        x = x if fit == "T" else 1.0 / x
        slope, low, high = fit_exponent(x, np.maximum(wide.to_numpy(), 1e-9), n_boot=n_boot)
        out.append(dict(fit=fit, agent=agent, family=family, exponent=slope, low=low, high=high))
    return pd.DataFrame(out)


READING: tuple[str, ...] = (
    "The \"vs paper\" columns say where the 95% interval lies against the paper's exponent (in 1/epsilon its range):",
    "below, above, or overlapping it (as stated).",
    "Reading the exponents: a bound sqrt(T) + c/eps has local slope below 1/2 in T while the additive",
    "term dominates and 0..1 in 1/eps; a gap-dependent run (log T regret) has a slope that falls with T;",
    "an agent that has not left its exploration phase (uniform play) has slope 1 in T and 0 in 1/eps.")


def verdict(low: float, high: float, paper: tuple[float, float] | None, tol: float = 1e-9) -> str:
    """Where a measured exponent's 95% interval [low, high] lies against the paper's range: ``"below"``,
    ``"above"``, ``"as stated"`` (they overlap, up to ``tol``), or ``"-"`` without a paper range or without an
    interval (``--bootstrap 0`` gives NaN bounds)."""
    if paper is None or not (np.isfinite(low) and np.isfinite(high)):
        return "-"
    return "below" if high < paper[0] - tol else "above" if low > paper[1] + tol else "as stated"


def _rows(table: pd.DataFrame, args: argparse.Namespace) -> list[tuple[str, ...]]:
    """(agent, family, T measured, T paper, T verdict, 1/eps measured, 1/eps paper, 1/eps verdict, bound (source))
    per agent and family."""
    keyed = {(r.fit, r.agent, r.family): r for r in table.itertuples()}
    rows = []
    for agent in args.agents:
        rate = PAPER_RATES[agent]
        for family in args.families:
            cells = []
            for fit, paper in (("T", (rate.t_exponent, rate.t_exponent)), ("eps", rate.eps_range)):
                r = keyed.get((fit, agent, family))
                cells += ["-", "-"] if r is None else [f"{r.exponent:5.2f} [{r.low:5.2f}, {r.high:5.2f}]",
                                                       verdict(r.low, r.high, paper)]
            rows.append((agent, family, cells[0], f"{rate.t_exponent:g}", cells[1], cells[2], rate.eps_exponent,
                         cells[3], f"{rate.bound} ({rate.source})"))
    return rows


def report(table: pd.DataFrame, args: argparse.Namespace, markdown: bool = False) -> str:
    """The exponents beside the paper's, one line per agent and family (a Markdown table with ``markdown``)."""
    lo, hi = args.log2_horizons[0], args.log2_horizons[-1]
    eps_txt = ",".join(f"{e:g}" for e in args.epsilons)
    title = (f"Regret exponents, {args.seeds} seeds, 95% percentile bootstrap over seeds "
             f"(in T: T = 2^{lo}..2^{hi} at epsilon {args.epsilon:g}; in 1/epsilon: epsilon {eps_txt} at "
             f"T = 2^{args.log2_eps_horizon}; delta 1e-5; JDP and baselines d = K = 10, LDP d = K = 5)")
    rows = _rows(table, args)
    if markdown:
        def tidy(cell: str) -> str:
            return re.sub(r"\[\s+", "[", re.sub(r"\s+", " ", cell.strip()))

        lines = [title + ".", "", "| agent | family | in T: measured [95%] | paper | measured vs paper | "
                 "in 1/epsilon: measured [95%] | paper | measured vs paper |", "|---|---|---|---|---|---|---|---|"]
        lines += ["| " + " | ".join(tidy(c) for c in row[:-1]) + " |" for row in rows]
        lines += ["", "| agent | the paper's bound | source |", "|---|---|---|"]
        lines += [f"| {a} | {PAPER_RATES[a].bound} | {PAPER_RATES[a].source} |" for a in args.agents]
        return "\n".join(lines + ["", " ".join(READING)])
    head = f"{'agent':16s} {'family':15s} {'T: measured [95%]':22s} {'paper':6s} {'vs paper':10s} " \
           f"{'1/eps: measured [95%]':24s} {'paper':18s} {'vs paper':10s} paper's bound (source)"
    lines = [title, "", head, "-" * len(head)]
    lines += [f"{a:16s} {f:15s} {t:22s} {tp:6s} {tv:10s} {e:24s} {ep:18s} {ev:10s} {b}"
              for a, f, t, tp, tv, e, ep, ev, b in rows]
    return "\n".join(lines + ["", *READING])


def main(argv=None) -> None:
    args = parse_args(argv)
    runs = args.runs if args.runs is not None else measure(args)
    if args.out and args.runs is None:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        runs.to_csv(args.out, index=False)
    print(report(exponents(runs, args.bootstrap), args, markdown=args.markdown))


if __name__ == "__main__":
    main()
