"""The results board: one self-contained HTML page of a results table, to explore in a browser.

:func:`write_board` reads results folders (what ``privbandit bench`` or ``run --out`` writes: ``results.csv`` and
``report.json``) and the stored reference results of a suite (:func:`~privbandit.bench.stored.stored_results`),
computes every number the page shows with :mod:`privbandit.report.tables`, :mod:`~privbandit.report.leaderboard` and
:mod:`~privbandit.report.compare` (:func:`board_data`), and writes one page (:func:`board_html`) with the data,
its script and style and Plotly's JavaScript inlined: it opens from a file with no network.

Its views (the leaderboard as a sortable table, one board at a time, the price of privacy, a challenger's paired
comparison) are described in the command-line guide, ``docs/guide/cli.md`` (``board``). Plotly draws the figures:
its JavaScript (about 4.8 MB) ships inside the ``plotly`` wheel, so the page needs no network, and its figures
have legend toggling, log axes and hover built in, which the page's own script drives with ``Plotly.react``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .compare import paired_comparison
from .figures import agent_palette
from .files import atomic_write
from .leaderboard import BOARD_KEYS, leaderboard, paired_difference, read_results
from .tables import (
    GROUP_KEYS,
    MARK_RULE,
    NO_BETTER,
    RUN_KEYS,
    UNIFORM,
    WORSE,
    final_regret,
    final_rows,
    ledger_guarantees,
    nonnegative_mean_ci,
    uniform_mark,
    uniform_regret,
    what_ran,
)

__all__ = ["BoardSource", "NO_BETTER", "PER_OCTAVE", "WORSE", "board_data", "board_html", "folder_source",
           "thin_times", "write_board"]

PER_OCTAVE = 4
"""Points per doubling of t that the page keeps of each regret curve (the runner logs about 8)."""


@dataclass(frozen=True)
class BoardSource:
    """One results table and what the page says about it.

    Parameters
    ----------
    name : str
        The folder, or ``stored SUITE``.
    table : DataFrame
        Its results table (``results.csv``).
    command : str
        The command that made the data.
    notes : tuple of str
        The report's notes (what ran, cells left out).
    references : mapping
        Private agent -> its non-private counterpart (for the price of privacy).
    challenger : str, optional
        The challenger of a ``bench --agent`` run.
    reference : str, optional
        The challenger's first baseline.
    """

    name: str
    table: pd.DataFrame = field(repr=False)
    command: str
    notes: tuple[str, ...] = ()
    references: Mapping[str, str] = field(default_factory=dict)
    challenger: str | None = None
    reference: str | None = None


def folder_source(folder: str | os.PathLike) -> BoardSource:
    """The :class:`BoardSource` of a results folder: ``results.csv`` and, when there, ``report.json``."""
    folder = Path(folder)
    table = read_results(folder)
    meta_path = folder / "report.json"
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    notes = tuple(str(n) for n in meta.get("notes", ()))
    command = next((n.removeprefix("command: ").strip("`") for n in notes if n.startswith("command: ")),
                   f"the results in {folder}")
    return BoardSource(name=str(folder), table=table, command=command,
                       notes=tuple(n for n in notes if not n.startswith("command: ")),
                       references=dict(meta.get("references", {})), challenger=meta.get("challenger"),
                       reference=meta.get("reference"))


def thin_times(logged: Sequence[int], per_octave: int = PER_OCTAVE) -> list[int]:
    """The logged rounds a curve keeps: the first logged round at or after each 2^(j/per_octave), and the last.

    Examples
    --------
    >>> thin_times(range(1, 17), per_octave=1)
    [1, 2, 4, 8, 16]
    """
    ts = np.unique(np.asarray(list(logged), dtype=np.int64))
    if per_octave < 1:
        raise ValueError(f"per_octave must be a positive integer, got {per_octave!r}")
    if ts.size == 0:
        return []
    grid = 2.0 ** (np.arange(0, math.ceil(math.log2(ts[-1]) * per_octave) + 1) / per_octave)
    idx = np.unique(np.minimum(np.searchsorted(ts, grid - 1e-9), ts.size - 1))
    return sorted({int(t) for t in ts[idx]} | {int(ts[0]), int(ts[-1])})


def _num(v: Any, digits: int = 6) -> float | None:
    """A number for the page's JSON: ``digits`` significant digits, None for NaN or infinity."""
    v = float(v)
    return None if not math.isfinite(v) else float(f"{v:.{digits}g}")


def _stack(sources: Sequence[BoardSource]) -> pd.DataFrame:
    """The sources' tables as one, each run once (the first source that has it), with its source's index."""
    frames = [s.table.assign(source=i) for i, s in enumerate(sources) if len(s.table)]
    if not frames:
        raise ValueError("no results to show")
    return pd.concat(frames, ignore_index=True).drop_duplicates(subset=list(RUN_KEYS) + ["t"], keep="first")


def curve_table(df: pd.DataFrame, per_octave: int = PER_OCTAVE) -> pd.DataFrame:
    """Mean cumulative regret over seeds with its 95% band at the thinned rounds (:func:`thin_times`) of each
    (env, agent, privacy level, horizon): the band is :func:`~privbandit.report.tables.nonnegative_mean_ci`'s,
    the figures' rule.

    Returns
    -------
    DataFrame
        :data:`~privbandit.report.tables.GROUP_KEYS`, t, n_seeds, mean, low, high.
    """
    keep = {int(h): set(thin_times(g["t"].unique(), per_octave)) for h, g in df.groupby("horizon")}
    thin = df[[int(t) in keep[int(h)] for t, h in zip(df["t"], df["horizon"])]]
    regret = thin["cum_regret"].to_numpy(float)
    rows = []
    for key, idx in sorted(thin.groupby(list(GROUP_KEYS) + ["t"], sort=False, dropna=False).indices.items()):
        m, lo, hi = nonnegative_mean_ci(regret[idx])
        rows.append((*key, len(idx), m, lo, hi))
    return pd.DataFrame(rows, columns=list(GROUP_KEYS) + ["t", "n_seeds", "mean", "low", "high"])


def _curves(df: pd.DataFrame, per_octave: int) -> tuple[list[dict], dict[tuple, int]]:
    """The page's curves (one per run group) and the index of each group key."""
    curves, index = [], {}
    for key, g in curve_table(df, per_octave).groupby(list(GROUP_KEYS), sort=True, dropna=False):
        index[tuple(key)] = len(curves)
        k = dict(zip(GROUP_KEYS, key))
        curves.append(dict(agent=k["agent"], env=k["env"], model=k["privacy_model"], epsilon=_num(k["epsilon"]),
                           horizon=int(k["horizon"]), t=[int(t) for t in g["t"]],
                           mean=[_num(v, 4) for v in g["mean"]], low=[_num(v, 4) for v in g["low"]],
                           high=[_num(v, 4) for v in g["high"]], n_seeds=int(g["n_seeds"].max())))
    return curves, index


def _paired(regret: Mapping[str, pd.Series], agent: str, ref: str | None) -> list[float | None] | None:
    """The leaderboard's paired difference of final regret, agent minus ``ref``, as [mean, low, high, seeds] (None
    for the agent itself or without a shared seed)."""
    n, m, lo, hi = paired_difference(regret, agent, None if ref == agent else ref)
    return [_num(m), _num(lo), _num(hi), n] if n else None


def _ledgers(df: pd.DataFrame) -> dict[tuple, float]:
    """(agent, privacy_model, epsilon, delta) -> the worst user's composed epsilon of the agent's ledgers."""
    if "epsilon_spent" not in df:
        return {}
    g = ledger_guarantees(df)
    return {(r.agent, r.privacy_model, float(r.epsilon), float(r.delta)): float(r.epsilon_spent)
            for r in g.itertuples(index=False)}


def _curve_of(index: Mapping[tuple, int], env: str, agent: str, model: str, eps: float, delta: float,
              horizon: int) -> int | None:
    """The index of an agent's curve on a board (a non-private agent's own level is its only one)."""
    if model == "none":
        return next((i for k, i in index.items() if k[0] == env and k[1] == agent and k[2] == "none"
                     and int(k[5]) == horizon), None)
    return index.get((env, agent, model, eps, delta, horizon))


def _boards(df: pd.DataFrame, final: pd.DataFrame, index: Mapping[tuple, int]) -> list[dict]:
    """One entry per board of :func:`~privbandit.report.leaderboard.leaderboard`: its rows with their marks, paired
    differences to the best non-private and the best private agent, ledgers and curves."""
    ends = final_rows(df)
    ledgers = _ledgers(df)
    boards = []
    for key, b in leaderboard(df).groupby(list(BOARD_KEYS), sort=True):
        env, horizon, model, eps, delta = key
        here = ends[(ends["env"] == env) & (ends["horizon"] == horizon)]
        level = here[((here["privacy_model"] == model) & (here["epsilon"] == eps) & (here["delta"] == delta))
                     | (here["privacy_model"] == "none")]
        regret = {a: g.set_index("seed")["cum_regret"] for a, g in level.groupby("agent")}
        public, private = b[b["privacy_model"] == "none"], b[b["privacy_model"] != "none"]
        best_public = public["agent"].iloc[0] if len(public) else None
        best_private = private["agent"].iloc[0] if len(private) else None
        uniform = uniform_regret(final, env, horizon)
        rows = []
        for r in b.itertuples(index=False):
            spent = ledgers.get((r.agent, r.privacy_model, float(eps), float(delta))) if r.privacy_model != "none" \
                else None
            rows.append(dict(rank=int(r.rank), agent=r.agent, model=r.privacy_model, n_seeds=int(r.n_seeds),
                             mean=_num(r.mean), low=_num(r.ci_low), high=_num(r.ci_high),
                             flag=uniform_mark((r.mean, r.ci_low, r.ci_high), uniform) if r.agent != UNIFORM else "",
                             vs_public=_paired(regret, r.agent, best_public),
                             vs_private=_paired(regret, r.agent, best_private),
                             ledger=None if spent is None else _num(spent),
                             curve=_curve_of(index, env, r.agent, r.privacy_model, eps, delta, int(horizon))))
        title = f"{env}, T={int(horizon)}" + ("" if model == "none" else f", {model} eps={eps:g}")
        boards.append(dict(id=f"board-{len(boards)}", title=title, env=env, horizon=int(horizon), model=model,
                           epsilon=_num(eps), delta=_num(delta), best_public=best_public, best_private=best_private,
                           seeds=sorted(int(s) for s in level["seed"].unique()),
                           sources=sorted(int(s) for s in level["source"].unique()), rows=rows))
    return boards


def _price(final: pd.DataFrame, references: Mapping[str, str], index: Mapping[tuple, int],
           sources: Mapping[tuple, list[int]]) -> list[dict]:
    """The price of privacy per (env, horizon, privacy model): each private agent's final regret at every epsilon,
    with its non-private counterpart (its reference, else the best non-private agent of the env and horizon)."""
    out = []
    private = final[final["privacy_model"] != "none"]
    for (env, horizon, model), g in private.groupby(["env", "horizon", "privacy_model"], sort=True):
        here = final[(final["env"] == env) & (final["horizon"] == horizon)]
        public = here[here["privacy_model"] == "none"].sort_values("mean", kind="stable")
        uniform = uniform_regret(final, env, horizon)
        agents = []
        for agent, a in g.groupby("agent", sort=True):
            ref = references.get(agent)
            ref_row = public[public["agent"] == ref]
            chosen = "reference" if len(ref_row) else "best non-private"
            if ref_row.empty:
                ref_row = public.head(1)
            points = [dict(epsilon=_num(r.epsilon), mean=_num(r.mean), low=_num(r.ci_low), high=_num(r.ci_high),
                           n_seeds=int(r.n_seeds), flag=uniform_mark((r.mean, r.ci_low, r.ci_high), uniform),
                           curve=index.get((env, agent, model, r.epsilon, r.delta, horizon)))
                      for r in a.sort_values("epsilon").itertuples(index=False)]
            counterpart = None
            if len(ref_row):
                r = ref_row.iloc[0]
                counterpart = dict(agent=r["agent"], chosen=chosen, mean=_num(r["mean"]), low=_num(r["ci_low"]),
                                   high=_num(r["ci_high"]),
                                   curve=_curve_of(index, env, r["agent"], "none", math.inf, 0.0, int(horizon)))
            agents.append(dict(agent=agent, points=points, counterpart=counterpart))
        out.append(dict(id=f"price-{len(out)}", title=f"{env}, T={int(horizon)}, {model}", env=env,
                        horizon=int(horizon), model=model, agents=agents,
                        epsilons=sorted({p["epsilon"] for a in agents for p in a["points"]}),
                        sources=sources.get((env, int(horizon)), [])))
    return out


def _comparisons(df: pd.DataFrame, sources: Sequence[BoardSource]) -> list[dict]:
    """The paired comparison of each source's challenger against the baselines (:mod:`privbandit.report.compare`)."""
    out = []
    for i, s in enumerate(sources):
        if s.challenger is None or s.challenger not in set(df["agent"]):
            continue
        cmp = paired_comparison(df, s.challenger, reference=s.reference)
        rows = [dict(env=r.env, horizon=int(r.horizon), epsilon=_num(r.epsilon), baseline=r.baseline,
                     model=r.baseline_model, reference=bool(r.reference), n_seeds=int(r.n_seeds),
                     diff=[_num(r.mean_diff), _num(r.ci_low), _num(r.ci_high)], wins=int(r.wins), ratio=_num(r.ratio),
                     verdict=r.verdict) for r in cmp.itertuples(index=False)]
        out.append(dict(challenger=s.challenger, reference=s.reference, source=i, rows=rows))
    return out


def _source_entry(s: BoardSource, df: pd.DataFrame, i: int) -> dict:
    """What the page's header says of a source: its command, notes, and the seeds and horizons it holds."""
    mine = df[df["source"] == i]
    return dict(name=s.name, command=s.command, notes=list(s.notes), challenger=s.challenger, ran=what_ran(mine),
                seeds=sorted(int(x) for x in mine["seed"].unique()),
                horizons=sorted(int(x) for x in mine["horizon"].unique()),
                runs=int(len(mine.drop_duplicates(list(RUN_KEYS)))), envs=sorted(str(e) for e in mine["env"].unique()))


def board_data(sources: Sequence[BoardSource], per_octave: int = PER_OCTAVE) -> dict:
    """Every number the page shows, from the sources' results tables (JSON-ready: NaN and infinity as None).

    Returns
    -------
    dict
        ``sources`` (command, notes, seeds, horizons), ``agents`` (name -> colour, privacy model), ``curves``
        (mean cumulative regret and 95% band at the thinned rounds), ``boards`` (the leaderboard's boards, rows
        ranked), ``price`` (final regret against epsilon per env, horizon and privacy model) and ``comparisons``
        (challengers' paired comparisons).

    Raises
    ------
    ValueError
        If the sources hold no results.
    """
    df = _stack(sources)
    final = final_regret(df)
    curves, index = _curves(df, per_octave)
    models = final.drop_duplicates("agent").set_index("agent")["privacy_model"]
    palette = agent_palette(sorted(models.index))
    agents = {a: dict(color="#{:02x}{:02x}{:02x}".format(*(round(255 * c) for c in palette[a])), model=str(m))
              for a, m in models.items()}
    references: dict[str, str] = {}
    for s in reversed(sources):  # the first source that names a counterpart wins
        references.update(s.references)
    by_board = {(str(e), int(h)): sorted(int(x) for x in g["source"].unique())
                for (e, h), g in df.groupby(["env", "horizon"])}
    return dict(sources=[_source_entry(s, df, i) for i, s in enumerate(sources)], agents=agents, curves=curves,
                boards=_boards(df, final, index), price=_price(final, references, index, by_board),
                comparisons=_comparisons(df, sources), uniform=UNIFORM,
                marks=dict(no_better=NO_BETTER, worse=WORSE, rule=MARK_RULE), per_octave=per_octave)


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def board_html(data: Mapping[str, Any], title: str = "privbandit results board") -> str:
    """The page of :func:`board_data`'s ``data``: one HTML file with Plotly's JavaScript, the page's script and
    style, and the data inlined (no network)."""
    from html import escape

    from plotly.offline import get_plotlyjs

    payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<link rel="icon" href="data:,">\n<title>{escape(title)}</title>\n'
            f"<style>{_asset('board.css')}</style>\n<script>{get_plotlyjs()}</script>\n</head>\n<body>\n"
            f'<h1>{escape(title)}</h1>\n<script id="board-data" type="application/json">{payload}</script>\n'
            f"<script>{_asset('board.js')}</script>\n</body></html>\n")


def write_board(folders: Sequence[str | os.PathLike], out: str | os.PathLike, stored: Sequence[BoardSource] = (),
                *, title: str = "privbandit results board") -> Path:
    """Write the results board of results folders and stored suites to ``out`` (atomically).

    Parameters
    ----------
    folders : sequence of path
        Results folders (``results.csv``, and ``report.json`` for the command, notes and counterparts).
    out : path
        The HTML file.
    stored : sequence of BoardSource, optional
        Stored results that join: :func:`privbandit.bench.stored.stored_source` of a suite (``"quick"``,
        ``"paper"``).
    title : str
        The page's title.

    Returns
    -------
    Path
        ``out``.

    Raises
    ------
    ValueError
        If a folder has no ``results.csv``, or there is nothing to show.

    Examples
    --------
    >>> from privbandit.bench.stored import stored_source
    >>> from privbandit.report import write_board
    >>> write_board(["results/quick"], "board.html", stored=[stored_source("quick")])  # doctest: +SKIP
    PosixPath('board.html')
    """
    sources = [folder_source(f) for f in folders] + list(stored)
    if not sources:
        raise ValueError("give results folders or stored suites")
    out = Path(out)
    atomic_write(out, board_html(board_data(sources), title=title))
    return out
