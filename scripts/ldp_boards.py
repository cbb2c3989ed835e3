"""Which agent to use under local DP: the local-DP boards of a results folder, against the issue's targets.

For every local-DP board of a results folder (every env with local-DP agents; epsilon = 1 unless ``--epsilon``),
three tables, each computed from the folder's curves (means over seeds of the cumulative regret, 95% intervals on
the log scale as every privbandit table):

- **targets**: uniform play's regret; the best non-private agent; the best private agent with its regret as a
  fraction of uniform play's (target: <= 0.3x on a linear board, <= 0.5x on a GLM board), whether it is one of
  privbandit's practical agents (:data:`OURS`), the best prior-work baseline (:data:`PRIOR_WORK`) and whether the
  best agent's whole 95% interval lies below that baseline's; the best agent's log-log slope over
  T = 2^18 ... 2^20 (target < 0.75). Every verdict is printed beside the numbers it reads.
- **picks**: the best private agent at T = 2^14, 2^16, 2^18 and 2^20 (the regret of the first T rounds of the same
  runs), with its fraction of uniform play's, per board; and at every epsilon of the folder at its horizon.
- **readings**: which agent to use, by family and link, from the two tables above.

Usage::

    privbandit bench --suite paper --out DIR        # the stored results are installed; or run them
    python scripts/ldp_boards.py DIR                 # the three tables as markdown to stdout
    python scripts/ldp_boards.py DIR --markdown OUT  # OUT/ldp_targets.md, OUT/ldp_picks.md, OUT/ldp_readings.md

``--heldout OUT`` runs the settings no agent was tuned on instead (a family, a link slope and a (d, K) off the
boards: :data:`HELDOUT_ENVS`, T = 2^20, 5 seeds, epsilon 1, delta 1e-5; about 10 minutes on 2 cores) into the
results folder OUT through the bench workflow's cell runner (:func:`privbandit.bench.workflow.run_cells`), writes
the rounds its tables read to ``OUT/ldp_heldout.csv`` (:func:`compact`) and prints its tables; the docs build reads
the committed copy::

    python scripts/ldp_boards.py --heldout results/ldp_heldout
    python scripts/ldp_boards.py --from-csv docs/data/ldp_heldout.csv

References
----------
Source paper, `def:LDP`, `tab:comp` (the local-DP baselines: Zheng et al.'s LDP-UCB, Han et al.'s LDP-SGD).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from privbandit.report.leaderboard import read_results
from privbandit.report.tables import final_regret, format_interval, format_number, loglog_slopes, markdown_table

OURS: tuple[str, ...] = ("elim-ldp-pooled", "elim-ldp-greedy-pooled", "elim-ldp-vec", "elim-glm-ldp-pooled",
                         "elim-glm-ldp-vec")
"""privbandit's practical local-DP agents (pooled releases; the vector report)."""

PRIOR_WORK: tuple[str, ...] = ("ldp-ucb", "ldp-glm-sgd", "squarecb-ldp-sgd", "elim-ldp-ssp")
"""Label prefixes of the prior work's local-DP agents: Zheng et al.'s LDP-UCB (both radii), Han et al.'s LDP-SGD,
SquareCB on LDP-SGD, sufficient-statistics perturbation."""

TARGET_OF_UNIFORM = {"linear": 0.3, "glm": 0.5}
"""The best private agent's largest regret as a fraction of uniform play's, per kind of board."""

TARGET_SLOPE = 0.75
"""The best private agent's largest log-log slope of regret over :data:`SLOPE_WINDOW`."""

SLOPE_WINDOW = (2 ** 18, 2 ** 20)
"""The rounds the slope is fitted on (the logged rounds inside the window)."""

PICK_HORIZONS = (2 ** 14, 2 ** 16, 2 ** 18, 2 ** 20)
"""The horizons of the picks table (the first T rounds of the same runs)."""

HELDOUT_ENVS = (("isotropic-d5k5", "PrivLinCB-v0", dict(family="isotropic", dim=5, n_arms=5)),
                ("glm-heavy-tailed-d5k5-s4", "PrivGLMCB-v0",
                 dict(family="heavy-tailed", dim=5, n_arms=5, link_kwargs={"scale": 4.0})),
                ("heavy-tailed-d10k10", "PrivLinCB-v0", dict(family="heavy-tailed", dim=10, n_arms=10)))
"""Settings no agent was tuned on: a family off the boards (isotropic), a link slope off the boards (the logistic
link at slope 4; the boards have 2 and 6), and a (d, K) off the boards (10, 10; the local-DP boards have (5, 5))."""

HELDOUT_AGENTS = ("uniform", "linucb-practical", "elim-ldp-greedy", "ldp-ucb-practical", "elim-ldp-pooled",
                  "elim-ldp-vec")
"""The agents of every held-out setting (the GLM one adds :data:`HELDOUT_GLM_AGENTS`)."""

HELDOUT_GLM_AGENTS = ("ldp-glm-sgd", "elim-glm-ldp-pooled", "elim-glm-ldp-vec")
"""The GLM agents of the held-out GLM setting."""


def is_ours(label: str) -> bool:
    """Whether an agent label is one of :data:`OURS` (a ``-batchN`` suffix aside)."""
    return label.split("-batch")[0] in OURS


def is_prior_work(label: str) -> bool:
    """Whether an agent label is a prior-work baseline's (:data:`PRIOR_WORK`)."""
    return label.startswith(PRIOR_WORK)


def _kind(env: str) -> str:
    return "glm" if env.startswith("glm-") else "linear"


def _met(ok: bool) -> str:
    return "met" if ok else "missed"


def _boards(final: pd.DataFrame, epsilon: float) -> list[tuple[str, float, pd.DataFrame, pd.DataFrame]]:
    """(env, uniform's mean, the non-private rows, the local-DP rows at ``epsilon``) per local-DP board."""
    out = []
    for env, board in final.groupby("env", sort=True):
        private = board[(board["privacy_model"] == "ldp") & (board["epsilon"] == epsilon)]
        public = board[board["privacy_model"] == "none"]
        uniform = public.loc[public["agent"] == "uniform", "mean"]
        if private.empty or uniform.empty:
            continue
        out.append((str(env), float(uniform.iloc[0]), public, private))
    return out


def target_rows(df: pd.DataFrame, epsilon: float = 1.0) -> pd.DataFrame:
    """The targets table (module docstring) of a results table ``df`` (its curves)."""
    final = final_regret(df)
    rows = []
    for env, u, public, private in _boards(final, epsilon):
        best = private.loc[private["mean"].idxmin()]
        learners = public[public["agent"] != "uniform"]
        best_public = learners.loc[learners["mean"].idxmin()] if not learners.empty else None
        prior = private[private["agent"].map(is_prior_work)]
        best_prior = prior.loc[prior["mean"].idxmin()] if not prior.empty else None
        runs = df[(df["env"] == env) & (df["agent"] == best["agent"]) & (df["epsilon"] == epsilon)]
        slope = loglog_slopes(runs, *SLOPE_WINDOW)
        slope_mean = float(slope["mean"].iloc[0]) if not slope.empty else float("nan")
        limit = TARGET_OF_UNIFORM[_kind(env)]
        separated = best_prior is not None and best["ci_high"] < best_prior["ci_low"]
        rows.append({
            "board": env, "uniform": format_number(u),
            "best non-private": "" if best_public is None else
            f"{best_public['agent']} {format_number(best_public['mean'])}",
            "best private (95% CI)": f"{best['agent']} "
                                     f"{format_interval(best['mean'], best['ci_low'], best['ci_high'])}",
            "/ uniform": f"{format_number(best['mean'] / u)} ({_met(best['mean'] / u <= limit)}: <= {limit:g})",
            "ours": "yes" if is_ours(str(best["agent"])) else "no",
            "best prior work (95% CI)": "" if best_prior is None else
            f"{best_prior['agent']} {format_interval(best_prior['mean'], best_prior['ci_low'], best_prior['ci_high'])}",
            "interval below it": "" if best_prior is None else ("yes" if separated else "no"),
            "slope 2^18-2^20": f"{format_number(slope_mean)} ({_met(slope_mean < TARGET_SLOPE)}: < {TARGET_SLOPE:g})"})
    return pd.DataFrame(rows)


def _best(final: pd.DataFrame, env: str, epsilon: float) -> tuple[str, float] | None:
    """(best local-DP agent, its mean over uniform play's) of ``env`` at ``epsilon`` in a final-regret table."""
    boards = [b for b in _boards(final[final["env"] == env], epsilon)]
    if not boards:
        return None
    _, u, _, private = boards[0]
    best = private.loc[private["mean"].idxmin()]
    return str(best["agent"]), float(best["mean"]) / u


def _cell(best: tuple[str, float] | None) -> str:
    return "" if best is None else f"{best[0]} {format_number(best[1])}x"


def pick_rows(df: pd.DataFrame, epsilon: float = 1.0) -> pd.DataFrame:
    """The picks table (module docstring): per board, the best local-DP agent (and its regret over uniform play's)
    at each horizon of :data:`PICK_HORIZONS` up to the runs' own at ``epsilon``, and at every epsilon at the
    horizon."""
    horizon = int(df["horizon"].max())
    at = {t: final_regret(df, at=t) for t in PICK_HORIZONS if t <= horizon}
    last = final_regret(df)
    epsilons = sorted(float(e) for e in df.loc[df["privacy_model"] == "ldp", "epsilon"].unique())
    rows = []
    for env, *_ in _boards(last, epsilon):
        row = {"board": env}
        for t, final in at.items():
            row[f"T = 2^{t.bit_length() - 1}"] = _cell(_best(final, env, epsilon))
        for eps in epsilons:
            if eps != epsilon:
                row[f"eps {eps:g}, T = 2^{horizon.bit_length() - 1}"] = _cell(_best(last, env, eps))
        rows.append(row)
    return pd.DataFrame(rows)


LINK_PAIR = ("elim-glm-ldp-vec", "elim-ldp-vec")
"""The GLM agent and the linear agent it is built from, compared on every GLM board (does modelling the link pay)."""


def link_lines(df: pd.DataFrame, epsilon: float = 1.0) -> list[str]:
    """Per GLM board, :data:`LINK_PAIR`'s ratio of means and whether their 95% intervals overlap."""
    final = final_regret(df)
    lines = []
    for env, _, _, private in _boards(final, epsilon):
        pair = [private[private["agent"] == a] for a in LINK_PAIR]
        if not env.startswith("glm-") or any(p.empty for p in pair):
            continue
        (g,), (lin,) = (p.itertuples() for p in pair)
        overlap = g.ci_low <= lin.ci_high and lin.ci_low <= g.ci_high
        lines.append(f"`{env}`: {format_number(g.mean / lin.mean)} ("
                     + ("the intervals overlap" if overlap else "the intervals are apart") + ")")
    if not lines:
        return []
    return [f"- **Modelling the link under local DP**, `{LINK_PAIR[0]}` over `{LINK_PAIR[1]}` (the same reports on "
            f"the GLM's working rows): " + "; ".join(lines) + "."]


def readings(targets: pd.DataFrame, picks: pd.DataFrame) -> list[str]:
    """Bullets that read the two tables: which agent wins where, and the targets met or missed."""
    lines = []
    columns = [c for c in picks.columns if c.startswith("T = ")]
    for kind in ("linear", "glm"):
        rows = picks[picks["board"].map(_kind) == kind]
        if rows.empty:
            continue
        name = "linear boards (PrivLinCB-v0)" if kind == "linear" else "GLM boards (PrivGLMCB-v0)"
        last = rows[columns[-1]].str.split(" ").str[0]
        counts = last.value_counts()
        lead = counts.index[0]
        where = ", ".join(f"`{b}`" for b, a in zip(rows["board"], last) if a == lead)
        others = "; ".join(f"`{b}`: `{a}`" for b, a in zip(rows["board"], last) if a != lead)
        lines.append(f"- **{name}, {columns[-1]}, epsilon as in the targets table**: `{lead}` is the best local-DP "
                     f"agent on {counts.iloc[0]} of {len(rows)} ({where})"
                     + (f"; elsewhere {others}." if others else "."))
        early = rows[columns[0]].str.split(" ").str[0]
        if (early != last).any():
            changed = "; ".join(f"`{b}`: `{e}` at {columns[0]}"
                                for b, e, a in zip(rows["board"], early, last) if e != a)
            lines.append(f"  At shorter horizons the best agent differs on some boards ({changed}).")
    for _, row in targets.iterrows():
        missed = [c for c in ("/ uniform", "slope 2^18-2^20") if "missed" in row[c]]
        if row["ours"] != "yes":
            missed.append("best private agent not one of ours")
        if row["interval below it"] == "no":
            missed.append("interval not below the best prior work's")
        if missed:
            lines.append(f"- `{row['board']}` misses: {', '.join(missed)} (targets table).")
    if all("missed" not in r["/ uniform"] and "missed" not in r["slope 2^18-2^20"] and r["ours"] == "yes"
           and r["interval below it"] != "no" for _, r in targets.iterrows()):
        lines.append(f"- Every board of the targets table meets every target: the best private agent is one of "
                     f"privbandit's, its 95% interval lies below the best prior-work baseline's, its regret is within "
                     f"the fraction of uniform play's, and its slope over T = 2^18 ... 2^20 is below {TARGET_SLOPE:g}.")
    return lines


def compact(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of a results table these tables read: the rounds of :data:`PICK_HORIZONS` and those of
    :data:`SLOPE_WINDOW`, without the per-round columns."""
    keep = df["t"].isin(PICK_HORIZONS) | df["t"].between(*SLOPE_WINDOW) | (df["t"] == df["horizon"])
    return df.loc[keep, [c for c in df.columns if c not in ("regret", "epoch", "epsilon_spent")]]


def run_heldout(out: Path, seeds: int = 5, horizon: int = 2 ** 20) -> pd.DataFrame:
    """Run :data:`HELDOUT_ENVS` (module docstring) into the results folder ``out``; returns its results table."""
    from privbandit.bench.grid import AgentEntry, EnvEntry, Grid
    from privbandit.bench.suites import PAPER_UCB_BATCH, batched, preset_entry
    from privbandit.bench.workflow import run_cells, write_outputs

    def entries(labels):
        made = []
        for label in labels:
            private = label not in ("uniform", "linucb-practical")
            made.append(preset_entry(label, private=private) if label.endswith("practical")
                        else AgentEntry(label, private=private))
        return batched(tuple(made), PAPER_UCB_BATCH)

    grids = []
    for label, env_id, kwargs in HELDOUT_ENVS:
        agents = HELDOUT_AGENTS + (HELDOUT_GLM_AGENTS if env_id == "PrivGLMCB-v0" else ())
        grids.append(Grid(entries(agents), (EnvEntry(label, env_id, kwargs),), epsilons=(1.0,), seeds=seeds,
                          horizon=horizon, delta=1e-5))
    cells = [c for g in grids for c in g.cells()]
    result = run_cells(cells, out, jobs=-1, progress=False)
    write_outputs(result.table, out, title="local DP, held-out settings", references={}, notes=[])
    table = compact(result.table)
    table.to_csv(out / "ldp_heldout.csv", index=False)
    return table


def _tables(df: pd.DataFrame, epsilon: float) -> tuple[str, str, str]:
    targets, picks = target_rows(df, epsilon), pick_rows(df, epsilon)
    read = readings(targets, picks) + link_lines(df, epsilon)
    return markdown_table(targets), markdown_table(picks), "\n".join(read) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", type=Path, nargs="?", help="a results folder of privbandit bench (its results.csv)")
    p.add_argument("--epsilon", type=float, default=1.0, help="the boards' epsilon (default 1)")
    p.add_argument("--markdown", type=Path, help="write ldp_targets.md, ldp_picks.md and ldp_readings.md here")
    p.add_argument("--heldout", type=Path, metavar="OUT", help="run the held-out settings into this results folder")
    p.add_argument("--from-csv", type=Path, metavar="CSV", help="read the held-out run's ldp_heldout.csv")
    args = p.parse_args(argv)
    if args.heldout is not None:
        df = run_heldout(args.heldout)
    elif args.from_csv is not None:
        if not args.from_csv.is_file():
            p.error(f"--from-csv: no file {args.from_csv}")
        df = pd.read_csv(args.from_csv)
    elif args.results is None:
        p.error("give a results folder, --heldout OUT or --from-csv CSV")
    elif not (args.results / "results.csv").is_file():
        p.error(f"{args.results} has no results.csv (write one with privbandit bench --suite paper --out DIR)")
    else:
        df = read_results(args.results)
    if target_rows(df, args.epsilon).empty:
        print(f"ldp_boards.py: no local-DP board with uniform play at epsilon {args.epsilon:g}", file=sys.stderr)
        return 1
    targets, picks, read = _tables(df, args.epsilon)
    if args.markdown is not None:
        args.markdown.mkdir(parents=True, exist_ok=True)
        for name, text in (("ldp_targets", targets), ("ldp_picks", picks), ("ldp_readings", read)):
            (args.markdown / f"{name}.md").write_text(text)
    else:
        print(f"{targets}\n\n{picks}\n\n{read}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
