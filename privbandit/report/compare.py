"""Paired comparisons: a challenger against each baseline of a results table, seed by seed.

:func:`paired_comparison` is what :func:`~privbandit.bench.challenger.challenge` reports and the results board
shows; :func:`comparison_markdown` the report's sections on a challenger, :func:`challenger_figure` its figure.

Paired comparisons
------------------
Every agent of a sweep meets the same contexts and rewards for an (env, seed) (common random numbers, the seeds
of :mod:`privbandit.bench.grid`), so the comparison of the challenger with a baseline uses the per-seed differences
of final regret, d_s = R_challenger(s) - R_baseline(s), which remove the seed-to-seed variation the two share:

- mean difference and its Student-t 95% interval (n - 1 degrees of freedom over the n paired seeds);
- wins: the seeds where the challenger's regret is lower;
- ratio: the challenger's mean regret over the baseline's (on the paired seeds);
- verdict: ``better`` if the interval lies below 0, ``worse`` if above, else ``not separable at these
  seeds`` (always so with fewer than 2 paired seeds).

A private challenger is compared, per env and epsilon, with the private baselines of its privacy model
at the same (epsilon, delta) and with the non-private baselines (the price of privacy); a non-private
challenger with the non-private baselines.

References
----------
Source paper, `tab:comp` (the rates the baselines are known for), `eq:PoP` (the price of privacy).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd

from .figures import log_axis
from .leaderboard import BOARD_KEYS, leaderboard
from .tables import MARK_RULE, final_rows, markdown_table, mean_ci, uniform_marks

__all__ = ["BETTER", "NOT_SEPARABLE", "WORSE", "challenger_figure", "comparison_markdown", "paired_comparison"]

BETTER, WORSE, NOT_SEPARABLE = "better", "worse", "not separable at these seeds"
"""The verdicts of :func:`paired_comparison`."""


def paired_comparison(df: pd.DataFrame, challenger: str, *, reference: str | None = None, level: float = 0.95,
                      at: int | None = None) -> pd.DataFrame:
    """The challenger against each baseline through per-seed differences of final regret.

    Parameters
    ----------
    df : DataFrame
        A results table (of :func:`~privbandit.bench.sweep.sweep` or :func:`~privbandit.bench.challenger.challenge`).
    challenger : str
        The challenger's ``agent`` label.
    reference : str, optional
        A baseline label: its rows are marked (``reference``) and come first.
    level : float
        Confidence level of the interval of the mean difference.
    at : int, optional
        Compare the regret at round ``at`` instead of the horizon.

    Returns
    -------
    DataFrame
        One row per (env, horizon, epsilon, delta, baseline): ``n_seeds`` (paired), ``mean_diff``,
        ``ci_low``, ``ci_high`` (challenger minus baseline: negative is better), ``wins`` (seeds where the
        challenger's regret is lower), ``ratio`` (mean regret over the baseline's), ``verdict``.

    Raises
    ------
    ValueError
        If the table has no run of ``challenger``.
    """
    final = final_rows(df, at)
    mine = final[final["agent"] == challenger]
    if mine.empty:
        raise ValueError(f"the table has no run of the challenger {challenger!r}; "
                         f"agents: {sorted(set(final['agent']))}")
    rows = []
    for key, ch in mine.groupby(["env", "horizon", "epsilon", "delta", "privacy_model"], sort=False):
        env, horizon, eps, delta, model = key
        same = final[(final["env"] == env) & (final["horizon"] == horizon) & (final["agent"] != challenger)]
        private_peers = same[(same["privacy_model"] == model) & (same["epsilon"] == eps) & (same["delta"] == delta)]
        peers = pd.concat([private_peers, same[same["privacy_model"] == "none"]]) if model != "none" else private_peers
        ch_regret = ch.set_index("seed")["cum_regret"]
        for (base, base_model), b in peers.groupby(["agent", "privacy_model"], sort=False):
            pairs = pd.concat([ch_regret.rename("c"), b.set_index("seed")["cum_regret"].rename("b")], axis=1,
                              join="inner")
            if pairs.empty:
                continue
            d = (pairs["c"] - pairs["b"]).to_numpy(float)
            m, lo, hi = mean_ci(d, level=level)
            verdict = BETTER if hi < 0 else WORSE if lo > 0 else NOT_SEPARABLE  # NaN (one seed) compares False
            b_mean = float(pairs["b"].mean())
            rows.append(dict(env=env, horizon=int(horizon), epsilon=eps, delta=delta, challenger=challenger,
                             baseline=base, baseline_model=base_model, reference=base == reference,
                             n_seeds=len(d), mean_diff=m, ci_low=lo, ci_high=hi, wins=int(np.sum(d < 0)),
                             ratio=float(pairs["c"].mean()) / b_mean if b_mean > 0 else math.inf, verdict=verdict))
    cols = ["env", "horizon", "epsilon", "delta", "challenger", "baseline", "baseline_model", "reference", "n_seeds",
            "mean_diff", "ci_low", "ci_high", "wins", "ratio", "verdict"]
    out = pd.DataFrame(rows, columns=cols)
    if reference is not None and not out.empty:
        out = out.sort_values(["env", "horizon", "epsilon", "reference"], ascending=[True, True, True, False],
                              kind="stable").reset_index(drop=True)
    return out


def challenger_summary(df: pd.DataFrame, challenger: str, *, reference: str | None = None) -> pd.DataFrame:
    """One line per board where the challenger plays: its rank by mean final regret and the paired comparison
    against ``reference`` or, without one (or where it does not play), the board's strongest private baseline
    (the lowest mean regret on the challenger's seeds; any baseline when none is private).

    Returns
    -------
    DataFrame
        env, horizon, epsilon, delta, rank (``"r/n"``), regret (the challenger's mean), then the
        :func:`paired_comparison` columns of the chosen baseline.
    """
    cmp = paired_comparison(df, challenger, reference=reference)
    board = leaderboard(df)
    rows = []
    for (env, horizon, eps, delta), g in cmp.groupby(["env", "horizon", "epsilon", "delta"], sort=False):
        pick = g[g["reference"]]
        if pick.empty:
            private = g[g["baseline_model"] != "none"]
            pick = (private if len(private) else g).sort_values("ratio", ascending=False, kind="stable")
        b = board[(board["env"] == env) & (board["horizon"] == horizon) & (board["epsilon"] == eps)
                  & (board["delta"] == delta)]
        mine = b[b["agent"] == challenger].iloc[0]
        chosen = pick.iloc[0].drop(["env", "horizon", "epsilon", "delta"]).to_dict()
        rows.append(dict(env=env, horizon=horizon, epsilon=eps, delta=delta, rank=f"{int(mine['rank'])}/{len(b)}",
                         regret=float(mine["mean"])) | chosen)
    return pd.DataFrame(rows)


def comparison_lines(df: pd.DataFrame, challenger: str, reference: str | None = None) -> str:
    """:func:`challenger_summary` as a markdown table, with the paired difference and its interval in one
    column: what ``privbandit bench --agent`` prints."""
    summary = challenger_summary(df, challenger, reference=reference)
    if summary.empty:
        return "No baseline shares a seed with the challenger."
    return markdown_table(_shown(summary), ["env", "horizon", "epsilon", "rank", "regret", "baseline",
                                            "mean diff (95% CI)", "wins", "ratio", "verdict"])


def _shown(cmp: pd.DataFrame) -> pd.DataFrame:
    """:func:`paired_comparison` rows as the tables print them: the paired difference with its interval (none for
    one seed) in one column, wins as ``w/n``, no epsilon for a non-private board."""
    diffs = [f"{m:.4g} [{lo:.4g}, {hi:.4g}]" if not math.isnan(lo) else f"{m:.4g}"
             for m, lo, hi in zip(cmp["mean_diff"], cmp["ci_low"], cmp["ci_high"])]
    return cmp.assign(**{"mean diff (95% CI)": diffs, "wins": [f"{w}/{n}" for w, n in zip(cmp["wins"], cmp["n_seeds"])],
                         "epsilon": [("" if math.isinf(e) else e) for e in cmp["epsilon"]]})


def challenger_figure(board: pd.DataFrame, challenger: str, path: str | os.PathLike, *, columns: int = 3) -> Path:
    """The challenger against the field: per board (env, horizon, epsilon) where the challenger plays, every
    agent's mean final regret (a point) with its 95% interval (a line), the challenger in red, on a log axis
    (regrets of one board span orders of magnitude), the panels wrapped into a grid of at most ``columns``
    columns. Saved as a PNG at ``path``."""
    import matplotlib.pyplot as plt

    keys = [k for k, b in board.groupby(list(BOARD_KEYS), sort=False) if challenger in set(b["agent"])]
    n = max(1, len(keys))
    ncols = min(columns, n)
    nrows = -(-n // ncols)
    height = 0.3 * board["rank"].max() + 1.4 if len(board) else 2.0
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, height * nrows), squeeze=False)
    for ax in axes.flat[len(keys):]:
        ax.set_visible(False)
    for ax, key in zip(axes.flat, keys):
        b = board[(board[list(BOARD_KEYS)] == pd.Series(key, index=list(BOARD_KEYS))).all(axis=1)]
        b = b.sort_values("rank", ascending=False)
        y = np.arange(len(b))
        mine = (b["agent"] == challenger).to_numpy()
        low, high = b["ci_low"].fillna(b["mean"]), b["ci_high"].fillna(b["mean"])
        for sel, colour in ((~mine, "tab:gray"), (mine, "tab:red")):
            ax.hlines(y[sel], low[sel], high[sel], color=colour, linewidth=1.5)
            ax.plot(b["mean"][sel], y[sel], "o", color=colour, markersize=5)
        ax.set_yticks(y, b["agent"], fontsize=8)
        ax.grid(axis="x", alpha=0.3)
        if (b["mean"] > 0).all():
            ax.set_xlim(b["mean"].min() / 1.5, high.max() * 1.5)
            log_axis(ax, "x")
        ax.tick_params(axis="x", labelsize=8)
        env, horizon, model, eps, _ = key
        ax.set_title(f"{env}\nT={horizon}" + ("" if math.isinf(eps) else f", {model} eps={eps:g}"), fontsize=9)
        ax.set_xlabel("final regret (95% CI)", fontsize=8)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def comparison_markdown(df: pd.DataFrame, challenger: str, reference: str | None = None) -> str:
    """The report's sections on a challenger: the paired comparison and the leaderboard."""
    cmp = paired_comparison(df, challenger, reference=reference)
    board = leaderboard(df)
    ref = f" The reference is `{reference}` (listed first)." if reference else ""
    parts = ["## Challenger: paired comparison", "",
             f"`{challenger}` against each baseline on the same seeds (common random numbers): per-seed difference "
             "of final regret, challenger minus baseline (negative is better), its mean and Student-t 95% "
             "interval, the seeds the challenger wins, the ratio of mean regrets, and the verdict (`better` or "
             f"`worse` when the interval excludes 0).{ref}", "",
             "One line per board: the challenger's rank and its comparison with "
             + (f"`{reference}`" if reference else "the board's strongest private baseline") + ".", "",
             comparison_lines(df, challenger, reference), "", "Against every baseline:", "",
             markdown_table(_shown(cmp), ["env", "horizon", "epsilon", "baseline", "baseline_model", "n_seeds",
                                          "mean diff (95% CI)", "wins", "ratio", "verdict"]) if not cmp.empty
             else "No baseline shares a seed with the challenger.", "",
             "## Leaderboard", "",
             "Every agent ranked by mean final regret per env, horizon, privacy model and level (the non-private "
             f"agents join every board); `mark` against uniform play: {MARK_RULE}.", "",
             markdown_table(board.assign(epsilon=[("" if math.isinf(e) else e) for e in board["epsilon"]],
                                         mark=uniform_marks(board)),
                            ["env", "horizon", "model", "epsilon", "rank", "agent", "privacy_model", "n_seeds", "mean",
                             "ci_low", "ci_high", "mark"]), ""]
    return "\n".join(parts)
