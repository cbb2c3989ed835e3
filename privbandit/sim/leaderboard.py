"""Leaderboards across results folders: per env, privacy model and epsilon, agents ranked by regret.

:func:`ranked_boards` stacks results tables (folders of ``privbandit bench`` or ``run --out``, and the stored
reference results of a suite, :mod:`privbandit.sim.reference`), keeps each run once, and ranks every
board of :func:`privbandit.sim.compare.leaderboard` by mean final regret, with each agent's paired
difference to a reference agent of the board (per-seed differences of final regret, Student-t 95%
interval: the seeds fix the round streams, so two agents on one seed saw the same rounds). The reference is
the one asked for when the board has it, else the board's best non-private agent, else its first.
``privbandit leaderboard DIR...`` prints :func:`leaderboard_markdown`.
"""

from __future__ import annotations

import tarfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .compare import BOARD_KEYS, leaderboard
from .report import RUN_KEYS, final_rows, format_interval, markdown_table, mean_ci

__all__ = ["ranked_boards", "leaderboard_markdown", "read_results", "stored_results"]


def read_results(folder: str | Path) -> pd.DataFrame:
    """The ``results.csv`` of a results folder."""
    from .cells import read_cell

    path = Path(folder) / "results.csv"
    if not path.is_file():
        raise ValueError(f"{folder} has no results.csv (make one with privbandit bench or run --out)")
    return read_cell(path)


def stored_results(suite: str) -> pd.DataFrame:
    """The stored reference results of a suite as one table (empty if none are shipped)."""
    from .cells import read_cell
    from .reference import reference_path

    archive, _ = reference_path(suite)
    if not archive.exists():
        return pd.DataFrame()
    tables = []
    with tarfile.open(archive, mode="r:xz") as tar:
        for member in tar.getmembers():
            if member.isfile():
                tables.append(read_cell(tar.extractfile(member).read()))
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()


def ranked_boards(tables: Sequence[pd.DataFrame], reference: str | None = None) -> pd.DataFrame:
    """Every board ranked by mean final regret, with the paired difference to the board's reference.

    Returns
    -------
    DataFrame
        The columns of :func:`~privbandit.sim.compare.leaderboard`, then ``reference`` (the board's reference
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
        env, horizon = key[0], key[1]
        agents = list(b["agent"])
        public = b[b["privacy_model"] == "none"]
        ref = reference if reference in agents else (public["agent"].iloc[0] if len(public) else agents[0])
        here = final[(final["env"] == env) & (final["horizon"] == horizon)]
        model, eps, delta = key[2], key[3], key[4]
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
