"""The leaderboard: agents ranked by regret per env, horizon, privacy model and epsilon, in one table or across folders.

:func:`leaderboard` ranks the agents of one results table per env, horizon, privacy model and level;
:func:`ranked_boards` stacks results tables (folders of ``privbandit bench`` or ``run --out``, and the stored
results of a suite, :func:`privbandit.bench.stored.stored_results`), keeps each run once, and ranks every
board of :func:`leaderboard` by mean final regret, with each agent's paired
difference to a reference agent of the board (per-seed differences of final regret, Student-t 95%
interval: the seeds fix the round streams, so two agents on one seed saw the same rounds). The reference is
the one asked for when the board has it, else the board's best non-private agent, else its first.
``privbandit leaderboard DIR...`` prints :func:`leaderboard_markdown`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .files import read_cell
from .tables import RUN_KEYS, final_regret, final_rows, format_interval, markdown_table, mean_ci

__all__ = ["BOARD_KEYS", "leaderboard", "leaderboard_markdown", "ranked_boards", "read_results"]

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


def ranked_boards(tables: Sequence[pd.DataFrame], reference: str | None = None) -> pd.DataFrame:
    """Every board ranked by mean final regret, with the paired difference to the board's reference.

    Returns
    -------
    DataFrame
        The columns of :func:`leaderboard`, then ``reference`` (the board's reference
        agent), ``n_paired``, ``diff``, ``diff_low``, ``diff_high`` (agent minus reference, per seed).
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
        ref = reference if reference in agents else (public["agent"].iloc[0] if len(public) else agents[0])
        here = final[(final["env"] == env) & (final["horizon"] == horizon)]
        level = here[((here["privacy_model"] == model) & (here["epsilon"] == eps) & (here["delta"] == delta))
                     | (here["privacy_model"] == "none")]
        regret = {a: g.set_index("seed")["cum_regret"] for a, g in level.groupby("agent")}
        rows = []
        for agent in agents:
            pairs = pd.concat([regret[agent].rename("a"), regret[ref].rename("r")], axis=1, join="inner")
            d = (pairs["a"] - pairs["r"]).to_numpy(float)
            m, lo, hi = mean_ci(d) if d.size else (np.nan, np.nan, np.nan)
            rows.append((ref, d.size, m, lo, hi))
        extra = pd.DataFrame(rows, columns=["reference", "n_paired", "diff", "diff_low", "diff_high"], index=b.index)
        out.append(pd.concat([b, extra], axis=1))
    return pd.concat(out, ignore_index=True)


def leaderboard_markdown(boards: pd.DataFrame, level: int = 2) -> str:
    """One markdown table per board (env, horizon, privacy model, epsilon), each under a heading of ``level``."""
    parts = []
    for key, b in boards.groupby(list(BOARD_KEYS), sort=True):
        env, horizon, model, eps, _ = key
        title = f"{env}, T={horizon}" + ("" if model == "none" else f", {model} eps={eps:g}")
        ref = b["reference"].iloc[0]
        table = b.assign(**{
            "regret (95% CI)": [format_interval(m, lo, hi) for m, lo, hi in zip(b["mean"], b["ci_low"], b["ci_high"])],
            f"minus {ref} (paired 95% CI)": ["reference" if a == ref else
                                             f"{format_interval(m, lo, hi)} ({n} seeds)"
                                             for a, m, lo, hi, n in zip(b["agent"], b["diff"], b["diff_low"],
                                                                        b["diff_high"], b["n_paired"])]})
        parts += [f"{'#' * level} {title}", "", markdown_table(table, ["rank", "agent", "privacy_model", "n_seeds",
                                                             "regret (95% CI)", f"minus {ref} (paired 95% CI)"]), ""]
    return "\n".join(parts)
