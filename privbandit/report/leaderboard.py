"""The leaderboard: agents ranked by regret per env, horizon, privacy model and epsilon, in one table or across folders.

:func:`leaderboard` ranks the agents of one results table per env, horizon, privacy model and level;
:func:`ranked_boards` stacks results tables (folders of ``privbandit bench`` or ``run --out``, the stored results
of a suite), keeps each run once, and adds to every board each agent's mark against uniform play and its paired
differences (per seed: the seeds fix the round streams) to the board's reference and to its best private agent.
``privbandit leaderboard DIR...`` prints :func:`leaderboard_markdown`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .files import read_cell
from .tables import RUN_KEYS, final_regret, final_rows, format_interval, markdown_table, mean_ci, uniform_marks

__all__ = ["BOARD_KEYS", "PAIRED_COLUMNS", "best_private_line", "leaderboard", "leaderboard_markdown",
           "paired_difference", "ranked_boards", "read_results"]

BOARD_KEYS: tuple[str, ...] = ("env", "horizon", "model", "epsilon", "delta")
"""A leaderboard is per env, horizon, privacy model and level (the non-private agents join every board)."""


def leaderboard(df: pd.DataFrame, at: int | None = None) -> pd.DataFrame:
    """Every agent ranked by mean final regret per env, horizon, privacy model and privacy level.

    The non-private agents (one run per env and seed) join every board of their env and horizon (model
    ``"none"`` alone when the table has no private run there). Rank 1 is the lowest mean regret.

    Parameters
    ----------
    df : DataFrame
        The results table (:func:`~privbandit.sim.run` or a sweep).
    at : int, optional
        Rank by the regret at this logged round (default the horizon).

    Returns
    -------
    DataFrame
        env, horizon, model, epsilon, delta, rank, agent, privacy_model, n_seeds, mean, ci_low, ci_high.
    """
    final = final_regret(df, at)
    private = final[final["privacy_model"] != "none"]
    public = final[final["privacy_model"] == "none"]
    boards = []
    for (env, horizon), g in final.groupby(["env", "horizon"], sort=False):
        levels = private[(private["env"] == env) & (private["horizon"] == horizon)]
        levels = levels[["privacy_model", "epsilon", "delta"]].drop_duplicates().itertuples(index=False) \
            if not levels.empty else [("none", math.inf, 0.0)]
        pub = public[(public["env"] == env) & (public["horizon"] == horizon)]
        for model, eps, delta in levels:
            priv = g[(g["privacy_model"] == model) & (g["epsilon"] == eps) & (g["delta"] == delta)]
            board = pd.concat([priv, pub]).sort_values("mean", kind="stable").assign(model=model, epsilon=eps,
                                                                                    delta=delta)
            board.insert(0, "rank", range(1, len(board) + 1))
            boards.append(board)
    cols = ["env", "horizon", "model", "epsilon", "delta", "rank", "agent", "privacy_model", "n_seeds", "mean",
            "ci_low", "ci_high"]
    return pd.concat(boards, ignore_index=True)[cols] if boards else pd.DataFrame(columns=cols)


def read_results(folder: str | Path) -> pd.DataFrame:
    """The ``results.csv`` of a results folder."""
    path = Path(folder) / "results.csv"
    if not path.is_file():
        raise ValueError(f"{folder} has no results.csv (make one with privbandit bench or run --out)")
    return read_cell(path)


def paired_difference(regret: dict[str, pd.Series], agent: str, ref: str | None) -> tuple[int, float, float, float]:
    """(seeds paired, mean, low, high) of the per-seed difference of final regret, agent minus ``ref`` (Student-t
    95% interval; NaN without a shared seed or a reference)."""
    if ref is None:
        return 0, np.nan, np.nan, np.nan
    pairs = pd.concat([regret[agent].rename("a"), regret[ref].rename("r")], axis=1, join="inner")
    d = (pairs["a"] - pairs["r"]).to_numpy(float)
    m, lo, hi = mean_ci(d) if d.size else (np.nan, np.nan, np.nan)
    return d.size, m, lo, hi


PAIRED_COLUMNS: tuple[str, ...] = ("mark", "reference", "n_paired", "diff", "diff_low", "diff_high", "best_private",
                                   "private_n_paired", "private_diff", "private_diff_low", "private_diff_high")
"""The columns :func:`ranked_boards` adds to :func:`leaderboard`'s."""


def ranked_boards(tables: Sequence[pd.DataFrame], reference: str | None = None) -> pd.DataFrame:
    """Every board ranked by mean final regret, with the paired differences to the board's reference (``reference``
    when the board has it, else its best non-private agent, else its first) and to its best private agent, and
    each agent's mark against uniform play.

    Returns
    -------
    DataFrame
        The columns of :func:`leaderboard`, then :data:`PAIRED_COLUMNS`: ``mark`` (:func:`~privbandit.report.tables.
        uniform_mark` against uniform play on the board: "no better than uniform", "worse than uniform" or ""),
        ``reference`` (the board's reference agent), ``n_paired``, ``diff``, ``diff_low``, ``diff_high`` (agent
        minus reference, per seed), ``best_private`` (the board's private agent of lowest mean final regret, empty
        on a board without one) and ``private_n_paired``, ``private_diff``, ``private_diff_low``,
        ``private_diff_high`` (agent minus that best private agent, per seed).
    """
    frames = [t for t in tables if len(t)]
    if not frames:
        raise ValueError("no results to rank")
    df = pd.concat(frames, ignore_index=True).drop_duplicates(subset=list(RUN_KEYS) + ["t"], keep="first")
    board = leaderboard(df)
    final = final_rows(df)
    out = []
    for key, b in board.groupby(list(BOARD_KEYS), sort=False):
        env, horizon, model, eps, delta = key
        agents = list(b["agent"])
        public = b[b["privacy_model"] == "none"]
        private = b[b["privacy_model"] != "none"]
        ref = reference if reference in agents else (public["agent"].iloc[0] if len(public) else agents[0])
        best_private = private["agent"].iloc[0] if len(private) else None
        here = final[(final["env"] == env) & (final["horizon"] == horizon)]
        level = here[((here["privacy_model"] == model) & (here["epsilon"] == eps) & (here["delta"] == delta))
                     | (here["privacy_model"] == "none")]
        regret = {a: g.set_index("seed")["cum_regret"] for a, g in level.groupby("agent")}
        marks = uniform_marks(b)
        rows = [(mark, ref, *paired_difference(regret, agent, ref), best_private or "",
                 *paired_difference(regret, agent, best_private)) for agent, mark in zip(agents, marks)]
        extra = pd.DataFrame(rows, columns=list(PAIRED_COLUMNS), index=b.index)
        out.append(pd.concat([b, extra], axis=1))
    return pd.concat(out, ignore_index=True)


def best_private_line(board: pd.DataFrame) -> str:
    """The line above a board's table that names its best private agent: its regret with the 95% interval, its
    mark against uniform play, and its paired difference to the board's reference (a board of
    :func:`ranked_boards`).

    Examples
    --------
    >>> b = pd.DataFrame(dict(agent=["np", "p", "uniform"], privacy_model=["none", "jdp", "none"], n_seeds=3,
    ...                       mean=[10.0, 100.0, 101.0], ci_low=[9.0, 95.0, 99.0], ci_high=[11.0, 105.0, 103.0],
    ...                       mark=["", "no better than uniform", ""], reference="np", n_paired=3,
    ...                       diff=[0.0, 90.0, 91.0], diff_low=[0.0, 85.0, 88.0], diff_high=[0.0, 95.0, 94.0],
    ...                       best_private="p"))
    >>> best_private_line(b)
    'Best private: `p`, regret 100 [95, 105] (**no better than uniform**); minus `np`: 90 [85, 95] (3 seeds).'
    """
    name = str(board["best_private"].iloc[0]) if len(board) else ""
    if not name:
        return "No private agent on this board."
    r = board[board["agent"] == name].iloc[0]
    ref = str(r["reference"])
    line = f"Best private: `{name}`, regret {format_interval(r['mean'], r['ci_low'], r['ci_high'])}"
    if r["mark"]:
        line += f" (**{r['mark']}**)"
    if ref != name and int(r["n_paired"]):
        diff = format_interval(r["diff"], r["diff_low"], r["diff_high"])
        line += f"; minus `{ref}`: {diff} ({int(r['n_paired'])} seeds)"
    return line + "."


def leaderboard_markdown(boards: pd.DataFrame, level: int = 2) -> str:
    """One markdown table per board (env, horizon, privacy model, epsilon), each under a heading of ``level``: the
    board's best private agent (:func:`best_private_line`), then every agent ranked with its mark against uniform
    play and its paired differences to the reference and to the best private agent (:func:`ranked_boards`)."""
    parts = []
    for key, b in boards.groupby(list(BOARD_KEYS), sort=True):
        env, horizon, model, eps, _ = key
        title = f"{env}, T={horizon}" + ("" if model == "none" else f", {model} eps={eps:g}")
        ref, best = b["reference"].iloc[0], b["best_private"].iloc[0]
        to_ref, to_best = f"minus {ref} (paired 95% CI)", f"minus best private {best} (paired 95% CI)"
        columns = ["rank", "agent", "privacy_model", "n_seeds", "regret (95% CI)", "mark", to_ref]
        cells = {
            "regret (95% CI)": [format_interval(m, lo, hi) for m, lo, hi in zip(b["mean"], b["ci_low"], b["ci_high"])],
            to_ref: ["reference" if a == ref else f"{format_interval(m, lo, hi)} ({n} seeds)"
                     for a, m, lo, hi, n in zip(b["agent"], b["diff"], b["diff_low"], b["diff_high"], b["n_paired"])]}
        if best and best != ref:
            columns.append(to_best)
            cells[to_best] = ["best private" if a == best else f"{format_interval(m, lo, hi)} ({n} seeds)"
                              for a, m, lo, hi, n in zip(b["agent"], b["private_diff"], b["private_diff_low"],
                                                         b["private_diff_high"], b["private_n_paired"])]
        parts += [f"{'#' * level} {title}", ""]
        if model != "none":
            parts += [best_private_line(b), ""]
        parts += [markdown_table(b.assign(**cells), columns), ""]
    return "\n".join(parts)
