"""Summaries of a results table: final regret with 95% CIs, log-log slopes, price of privacy, ledgers.

Every function takes the tidy table of :func:`~privbandit.sim.runner.run` (or of a sweep: many runs
stacked) and returns a small DataFrame; :func:`write_report` puts them into ``report.md``.

A *run* is one (env, agent, privacy_model, epsilon, delta, horizon, seed). Confidence intervals are
Student-t 95% intervals of the mean over seeds (one value per seed, so runs are independent); those of
the regret, a non-negative quantity, are taken on the log scale (:func:`nonnegative_mean_ci`, the figures'
bands too). Groups of fewer than :data:`MIN_SEEDS` seeds are
flagged: their interval (none at all for one seed) says little. Given the seeds a sweep planned
(:attr:`~privbandit.bench.sweep.SweepResult.planned`), every summary row carries ``n_seeds`` (found) and
``n_planned``, and a group with missing seeds is flagged ``incomplete``.

References
----------
Source paper, `tab:comp` (regret rates whose exponents the log-log slopes estimate), `eq:PoP` (the price
of privacy).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from .files import atomic_write

RUN_KEYS: tuple[str, ...] = ("env", "agent", "privacy_model", "epsilon", "delta", "horizon", "seed")
GROUP_KEYS: tuple[str, ...] = ("env", "agent", "privacy_model", "epsilon", "delta", "horizon")
MIN_SEEDS = 3
"""Fewer seeds than this and a summary row is flagged (``few_seeds``)."""
FEW_SEEDS = f"< {MIN_SEEDS} seeds"
"""The flag of such rows in the report's tables."""
PLAN_KEYS: tuple[str, ...] = ("env", "agent", "epsilon", "horizon")
"""The columns that match a summary row with its planned seeds (``n_planned``)."""


def _check(df: pd.DataFrame, needed: Iterable[str]) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ValueError(f"data is missing the columns {missing} (a table from privbandit.sim.run or a sweep)")


def mean_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student-t confidence interval (low, high) of independent values (NaN width for n < 2)."""
    v = np.asarray(values, dtype=float)
    m = float(v.mean())
    if v.size < 2:
        return m, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return m, m - half, m + half


def nonnegative_mean_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and confidence interval (low, high) of the mean of a non-negative quantity, taken on the log scale.

    The interval is ``mean / f, mean * f`` with ``f = exp(q * se / mean)``: the Student-t interval of
    log(mean) by the delta method (``se`` the standard error of the mean, ``q`` the t quantile with n - 1
    degrees of freedom). It is never below 0, is symmetric on a log axis, and is wider upwards than the
    additive interval. The report's regret intervals and the figures' bands use it.

    Parameters
    ----------
    values : array
        Independent non-negative values (one per seed).
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    tuple of float
        (mean, low, high); NaN ends for fewer than two values, (0, 0, 0) when every value is 0.

    Raises
    ------
    ValueError
        If a value is negative or not finite, or ``level`` is outside (0, 1).

    Examples
    --------
    >>> m, low, high = nonnegative_mean_ci(np.array([1.0, 3.0]))
    >>> m, low > 0, bool(np.isclose(low * high, m * m))
    (2.0, True, True)
    """
    v = np.asarray(values, dtype=float)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if v.size == 0 or not np.all(np.isfinite(v)) or np.any(v < 0):
        raise ValueError("values must be a non-empty array of finite non-negative numbers (a regret, an error)")
    m = float(v.mean())
    if v.size < 2:
        return m, math.nan, math.nan
    if m == 0:
        return 0.0, 0.0, 0.0
    se = float(v.std(ddof=1) / math.sqrt(v.size))
    factor = math.exp(min(float(stats.t.ppf(0.5 + level / 2, v.size - 1)) * se / m, 700.0))
    return m, m / factor, m * factor


def final_rows(df: pd.DataFrame, at: int | None = None) -> pd.DataFrame:
    """The last logged round (t = horizon) of every run, or its round t = ``at``.

    Parameters
    ----------
    at : int, optional
        A logged round (the runner logs every power of two). Runs shorter than ``at`` are dropped.

    Raises
    ------
    ValueError
        If ``at`` is not a positive integer, or no run logged round ``at``.
    """
    _check(df, RUN_KEYS + ("t", "cum_regret"))
    if at is None:
        return df[df["t"] == df["horizon"]]
    if isinstance(at, bool) or not isinstance(at, (int, np.integer)) or at < 1:
        raise ValueError(f"at must be a positive integer round, got {at!r}")
    rows = df[df["t"] == at]
    if rows.empty:
        raise ValueError(f"no run logged round at = {at} (the runner logs every power of two up to the horizon)")
    return rows


def _plan(planned: pd.DataFrame | None) -> dict[tuple, int]:
    """(env, agent, epsilon, horizon) -> seeds planned, from a table with :data:`PLAN_KEYS` and ``n_planned``."""
    if planned is None or len(planned) == 0:
        return {}
    _check(planned, PLAN_KEYS + ("n_planned",))
    return {(str(r.env), str(r.agent), float(r.epsilon), int(r.horizon)): int(r.n_planned)
            for r in planned.itertuples(index=False)}


def _summarize(values: pd.DataFrame, column: str, nonnegative: bool = False,
               planned: pd.DataFrame | None = None) -> pd.DataFrame:
    plan = _plan(planned)
    interval = nonnegative_mean_ci if nonnegative else mean_ci
    rows = []
    for key, g in values.groupby(list(GROUP_KEYS), sort=False, dropna=False):
        m, lo, hi = interval(g[column].to_numpy())
        k = dict(zip(GROUP_KEYS, key))
        n = len(g)
        n_planned = max(n, plan.get((str(k["env"]), str(k["agent"]), float(k["epsilon"]), int(k["horizon"])), n))
        rows.append(dict(k, n_seeds=n, n_planned=n_planned, incomplete=n < n_planned, few_seeds=n < MIN_SEEDS,
                         mean=m, ci_low=lo, ci_high=hi))
    return pd.DataFrame(rows, columns=list(GROUP_KEYS) + ["n_seeds", "n_planned", "incomplete", "few_seeds", "mean",
                                                          "ci_low", "ci_high"])


def final_regret(df: pd.DataFrame, at: int | None = None, planned: pd.DataFrame | None = None) -> pd.DataFrame:
    """Mean cumulative regret at the horizon (or at round ``at``) with its 95% CI.

    One row per (env, agent, privacy level, T); with ``at``, the regret of the first ``at`` rounds
    (so ``price_of_privacy(final_regret(df, at=t), ...)`` follows the price of privacy over time). The interval
    is :func:`nonnegative_mean_ci`'s; ``few_seeds`` flags rows of fewer than :data:`MIN_SEEDS` seeds.

    Parameters
    ----------
    planned : DataFrame, optional
        Seeds planned per group: columns :data:`PLAN_KEYS` and ``n_planned`` (a sweep's
        :attr:`~privbandit.bench.sweep.SweepResult.planned`). Each row gets ``n_planned`` (its found
        ``n_seeds`` where the plan does not say) and ``incomplete`` (fewer seeds found than planned).
    """
    return _summarize(final_rows(df, at), "cum_regret", nonnegative=True, planned=planned)


def incomplete_groups(final: pd.DataFrame) -> int:
    """How many rows of :func:`final_regret`'s table have fewer seeds than planned."""
    return int(final["incomplete"].sum()) if "incomplete" in final else 0


def loglog_slopes(df: pd.DataFrame, t_min: int | None = None, t_max: int | None = None,
                  planned: pd.DataFrame | None = None) -> pd.DataFrame:
    """Slope of log(cumulative regret) against log(t) per run, then its mean and 95% CI over seeds.

    Parameters
    ----------
    t_min, t_max : int, optional
        The fitting window (default [T/64, T] of each run; logged rounds inside it with positive regret).
        A slope of 1/2 is sqrt(T) regret, 1 is linear regret.
    planned : DataFrame, optional
        Seeds planned per group, as in :func:`final_regret`.
    """
    _check(df, RUN_KEYS + ("t", "cum_regret"))
    rows = []
    for key, g in df.groupby(list(RUN_KEYS), sort=False, dropna=False):
        horizon = int(key[RUN_KEYS.index("horizon")])
        lo = t_min if t_min is not None else max(1, horizon // 64)
        hi = t_max if t_max is not None else horizon
        w = g[(g["t"] >= lo) & (g["t"] <= hi) & (g["cum_regret"] > 0)]
        slope = math.nan
        if len(w) >= 2 and w["t"].nunique() >= 2:
            slope = float(np.polyfit(np.log(w["t"].to_numpy(float)), np.log(w["cum_regret"].to_numpy(float)), 1)[0])
        rows.append(dict(zip(RUN_KEYS, key), slope=slope))
    per_run = pd.DataFrame(rows, columns=list(RUN_KEYS) + ["slope"]).dropna(subset=["slope"])
    return _summarize(per_run, "slope", planned=planned)


UNIFORM = "uniform"
"""The agent whose regret is that of learning nothing (uniform play): every view marks agents against it
(:func:`uniform_mark`)."""


NO_BETTER = "no better than uniform"
"""The mark of an agent whose 95% interval of final regret reaches uniform play's (:func:`uniform_mark`)."""
WORSE = "worse than uniform"
"""The mark of an agent whose whole 95% interval of final regret lies above uniform play's (:func:`uniform_mark`)."""
MARK_RULE = (f'"{NO_BETTER}": its 95% interval of final regret reaches uniform play\'s on the same env and horizon; '
             f'"{WORSE}": its whole interval lies above uniform play\'s')
"""The marks of :func:`uniform_mark` in words, as the views print them."""


def _interval_of(row: pd.Series) -> tuple[float, float, float]:
    """(mean, low, high) of a :func:`final_regret` row (NaN ends when it has no interval columns)."""
    return float(row["mean"]), float(row.get("ci_low", math.nan)), float(row.get("ci_high", math.nan))


def uniform_mark(agent: tuple[float, float, float], uniform: tuple[float, float, float] | None,
                 rel: float = 0.01) -> str:
    """How an agent's final regret stands against uniform play's: :data:`WORSE`, :data:`NO_BETTER` or ``""``.

    The one rule of every view (``report.md``, ``privbandit leaderboard``, the results board, the docs' results
    page). An agent is "no better than uniform" when its 95% interval reaches uniform play's (its high end at or
    above uniform's low end: the seeds do not show it learned more than playing at random), and "worse than
    uniform" when its whole interval lies above uniform's (its low end above uniform's high end). An end that is
    missing (one seed: no interval) is replaced by the mean, and uniform's ends by ``(1 -+ rel)`` times its mean,
    so one seed is "no better" only at or above uniform's low end and never "worse" (nothing says it is not noise).

    Parameters
    ----------
    agent, uniform : (mean, low, high)
        Final regrets with 95% intervals (NaN ends for one seed); ``uniform`` None when uniform play did not run
        on the board (then there is no mark).
    rel : float
        The relative margin of uniform play's regret without an interval, in [0, 1).

    Returns
    -------
    str
        :data:`WORSE`, :data:`NO_BETTER` or ``""``.

    Raises
    ------
    ValueError
        If ``rel`` is outside [0, 1).

    Examples
    --------
    >>> uniform_mark((29515.0, 29400.0, 29630.0), (29515.0, 29400.0, 29630.0))  # elim-ldp on digits, stored quick suite
    'no better than uniform'
    >>> uniform_mark((90.0, 85.0, 95.0), (60.0, 55.0, 65.0))
    'worse than uniform'
    >>> uniform_mark((538.8, 16.2, 17919.0), (1687.0, 1523.0, 1870.0))  # two seeds: it may have learned nothing
    'no better than uniform'
    >>> uniform_mark((20.0, 15.0, 25.0), (60.0, 55.0, 65.0))
    ''
    """
    if not 0 <= rel < 1:
        raise ValueError(f"rel must be in [0, 1), got {rel!r}")
    if uniform is None or math.isnan(uniform[0]):
        return ""
    u_low = uniform[1] if not math.isnan(uniform[1]) else (1 - rel) * uniform[0]
    u_high = uniform[2] if not math.isnan(uniform[2]) else (1 + rel) * uniform[0]
    a_high = agent[2] if not math.isnan(agent[2]) else agent[0]
    if not math.isnan(agent[1]) and agent[1] > u_high:
        return WORSE
    return NO_BETTER if a_high >= u_low else ""


def uniform_regret(final: pd.DataFrame, env: str, horizon: int,
                   uniform: str = UNIFORM) -> tuple[float, float, float] | None:
    """Uniform play's final regret (mean, low, high) on an env and horizon of :func:`final_regret`'s table (None
    when it did not run there)."""
    u = final[(final["env"] == env) & (final["horizon"] == horizon) & (final["agent"] == uniform)]
    return _interval_of(u.iloc[0]) if len(u) else None


def uniform_marks(final: pd.DataFrame, uniform: str = UNIFORM) -> list[str]:
    """:func:`uniform_mark` of every row of a table with the columns of :func:`final_regret` (env, horizon, agent,
    mean, ci_low, ci_high), against uniform play on the row's env and horizon (``""`` for uniform play itself and
    where it did not run)."""
    refs = {(str(r["env"]), int(r["horizon"])): _interval_of(r)
            for _, r in final[final["agent"] == uniform].iterrows()}
    return ["" if r["agent"] == uniform else uniform_mark(_interval_of(r), refs.get((str(r["env"]), int(r["horizon"]))))
            for _, r in final.iterrows()]


def price_notes(agent: tuple[float, float, float], reference: tuple[float, float, float],
                uniform: tuple[float, float, float] | None) -> str:
    """What a reader must know about one row of the price-of-privacy table, in words, from its numbers.

    Parameters
    ----------
    agent, reference : (mean, low, high)
        Final regret of the private agent and of its counterpart (the best non-private agent of its board,
        :func:`best_nonprivate`), with 95% intervals (NaN ends for one seed).
    uniform : (mean, low, high), optional
        Final regret of uniform play on the same env and horizon (None when it did not run).

    Returns
    -------
    str
        ``""`` or "; "-joined findings: a ratio below 1 (with whether the intervals overlap), an agent no better
        than uniform play or worse (:func:`uniform_mark`) and a counterpart no better than uniform play (its ratio
        is then no price of privacy).

    Examples
    --------
    >>> price_notes((50.0, 40.0, 60.0), (100.0, 90.0, 110.0), None)
    'ratio below 1: lower regret than the best non-private agent (beyond both 95% intervals)'
    >>> price_notes((3815.0, 3700.0, 3930.0), (2400.0, 2300.0, 2500.0), (3815.0, 3790.0, 3840.0))
    "no better than uniform play: its 95% interval reaches uniform play's, it may not have learned at this T"
    """
    notes = []
    if agent[0] < reference[0]:
        if math.isnan(agent[1]) or math.isnan(reference[1]):
            why = "one seed: no interval says whether it is noise"
        elif agent[2] < reference[1] or reference[2] < agent[1]:
            why = "beyond both 95% intervals"
        else:
            why = "within noise: the 95% intervals overlap"
        notes.append(f"ratio below 1: lower regret than the best non-private agent ({why})")
    mark = uniform_mark(agent, uniform)
    if mark == NO_BETTER:
        notes.append(f"{NO_BETTER} play: its 95% interval reaches uniform play's, it may not have learned at this T")
    elif mark == WORSE:
        notes.append(f"{WORSE} play: its whole 95% interval lies above uniform play's")
    if uniform_mark(reference, uniform):
        notes.append("the best non-private agent is no better than uniform play: the ratio is no price of privacy")
    return "; ".join(notes)


def best_nonprivate(final: pd.DataFrame) -> dict[tuple[str, int], pd.Series]:
    """(env, horizon) -> the :func:`final_regret` row of the non-private agent of lowest mean final regret there:
    the counterpart of every private agent's price of privacy (:func:`price_of_privacy`) and of the report's
    Summary (:func:`summary_table`).

    The source paper's price of privacy (`eq:PoP`) divides the best private error by the best non-private one:
    what privacy costs a user who could otherwise run any non-private agent, whatever the private agent's own
    algorithm. Boards without a non-private agent have none.
    """
    public = final[final["privacy_model"] == "none"]
    return {(str(env), int(horizon)): g.loc[g["mean"].idxmin()]
            for (env, horizon), g in public.groupby(["env", "horizon"], sort=True)}


PRICE_COLUMNS: tuple[str, ...] = ("env", "agent", "privacy_model", "epsilon", "horizon", "regret", "reference",
                                  "reference_regret", "ratio", "same_algorithm", "same_algorithm_ratio", "note")
"""The columns of :func:`price_of_privacy`'s table."""


def price_of_privacy(final: pd.DataFrame, references: Mapping[str, str] | None = None,
                     uniform: str = UNIFORM) -> pd.DataFrame:
    """Final regret of each private agent over that of the best non-private agent on the same env and T.

    Every private agent is priced against the same kind of counterpart: the non-private agent of lowest mean
    final regret on its board (:func:`best_nonprivate`, the paper's `eq:PoP`), so the ratios of one board are
    comparable and the lowest of them is the Summary's (:func:`summary_table`). Beside it, ``same_algorithm_ratio``
    divides by the agent's own algorithm run without privacy (``references``), where that ran: what privacy costs
    that algorithm, not the user.

    Parameters
    ----------
    final : DataFrame
        :func:`final_regret`'s table.
    references : mapping, optional
        Agent label -> label of the same algorithm without privacy (e.g. ``{"elim-jdp": "elim-nonprivate"}``),
        for the ``same_algorithm`` columns (empty where an agent has none, or it did not run on the board).
    uniform : str
        Label of uniform play: rows at its regret are flagged (:func:`price_notes`).

    Returns
    -------
    DataFrame
        :data:`PRICE_COLUMNS`: env, agent, privacy_model, epsilon, horizon, regret, reference (the best non-private
        agent), reference_regret, ratio (the price of privacy), same_algorithm, same_algorithm_ratio, note (the
        findings of :func:`price_notes` on the price: a ratio below 1, an agent at uniform play's regret). One row
        per private agent and privacy level on a board with a non-private agent.

    Examples
    --------
    >>> final = pd.DataFrame(dict(env="e", horizon=8, privacy_model=["jdp", "none", "none"], epsilon=[1, np.inf,
    ...                           np.inf], agent=["p", "p-plain", "best"], mean=[30.0, 20.0, 10.0]))
    >>> row = price_of_privacy(final, {"p": "p-plain"}).iloc[0]
    >>> row["reference"], float(row["ratio"]), row["same_algorithm"], float(row["same_algorithm_ratio"])
    ('best', 3.0, 'p-plain', 1.5)
    """
    references = references or {}
    best = best_nonprivate(final)
    rows = []
    for _, r in final[final["privacy_model"] != "none"].iterrows():
        base = best.get((str(r["env"]), int(r["horizon"])))
        if base is None:
            continue
        here = final[(final["env"] == r["env"]) & (final["horizon"] == r["horizon"])]
        own = here[(here["agent"] == references.get(r["agent"])) & (here["privacy_model"] == "none")]
        own_mean = float(own["mean"].iloc[0]) if not own.empty else math.nan
        b = float(base["mean"])
        note = price_notes(_interval_of(r), _interval_of(base), uniform_regret(final, r["env"], r["horizon"], uniform))
        rows.append(dict(env=r["env"], agent=r["agent"], privacy_model=r["privacy_model"], epsilon=r["epsilon"],
                         horizon=r["horizon"], regret=r["mean"], reference=base["agent"], reference_regret=b,
                         ratio=r["mean"] / b if b > 0 else math.inf,
                         same_algorithm=own["agent"].iloc[0] if not own.empty else "",
                         same_algorithm_ratio=(math.nan if own.empty else r["mean"] / own_mean if own_mean > 0
                                               else math.inf), note=note))
    return pd.DataFrame(rows, columns=list(PRICE_COLUMNS))


def price_over_time(df: pd.DataFrame, *, first: int = 2 ** 12) -> pd.DataFrame:
    """The price of privacy as the run goes on: each private agent's mean regret over that of the best non-private
    agent of its board (:func:`best_nonprivate`, at the horizon: one counterpart for the whole row, the one of
    :func:`price_of_privacy`) at the logged rounds t = ``first``, 4 ``first``, 16 ``first``, ... up to the horizon
    (and at the horizon).

    Beside the cumulative ratio at t, ``recent_ratio`` is that of the regret earned in the rounds (t/4, t] alone:
    where the cumulative ratio is heading (a private agent that has started to eliminate pays less per round
    than its early rounds cost it).

    Parameters
    ----------
    df : DataFrame
        The results table (every power of two is logged).
    first : int
        The first round of the table (a power of two).

    Returns
    -------
    DataFrame
        env, agent, reference, epsilon, horizon, t, ratio, recent_ratio (NaN where the reference earned no regret
        in (t/4, t]), one row per private agent, privacy level and t.
    """
    cols = ["env", "agent", "reference", "epsilon", "horizon", "t", "ratio", "recent_ratio"]
    rows = []
    best = {key: str(row["agent"]) for key, row in best_nonprivate(final_regret(df)).items()}
    for horizon, runs in df.groupby("horizon", sort=True):
        times = sorted({t for t in (first * 4 ** k for k in range(64)) if t <= horizon} | {int(horizon)})
        means = {t: runs[runs["t"] == t].groupby(["env", "agent", "privacy_model", "epsilon"])["cum_regret"].mean()
                 for t in {*times, *(t // 4 for t in times)} if (runs["t"] == t).any()}
        for t in times:
            if t not in means or t // 4 not in means:
                continue
            now, before = means[t], means[t // 4]
            plain = {(env, agent): v for (env, agent, model, _), v in now.items() if model == "none"}
            plain_before = {(env, agent): v for (env, agent, model, _), v in before.items() if model == "none"}
            for (env, agent, model, eps), value in now.items():
                ref = best.get((str(env), int(horizon)))
                if model == "none" or (env, ref) not in plain or (env, ref) not in plain_before:
                    continue
                b, b0 = plain[(env, ref)], plain_before[(env, ref)]
                a0 = before.get((env, agent, model, eps), math.nan)
                rows.append(dict(env=env, agent=agent, reference=ref, epsilon=eps, horizon=int(horizon), t=t,
                                 ratio=value / b if b > 0 else math.inf,
                                 recent_ratio=(value - a0) / (b - b0) if b > b0 else math.nan))
    return pd.DataFrame(rows, columns=cols)


def ledger_guarantees(df: pd.DataFrame) -> pd.DataFrame:
    """Worst user's composed epsilon (from the agents' ledgers) per agent and privacy level, against the spec.

    Parameters
    ----------
    df : DataFrame
        The results table, with the ``epsilon_spent`` of every run.
    """
    _check(df, RUN_KEYS + ("epsilon_spent",))
    keys = ["agent", "privacy_model", "epsilon", "delta"]
    runs = df.drop_duplicates(list(RUN_KEYS))
    g = runs.groupby(keys, sort=False, dropna=False).agg(runs=("seed", "size"), epsilon_spent=("epsilon_spent", "max"))
    g = g.reset_index()
    g["within_budget"] = g["epsilon_spent"] <= g["epsilon"] * (1 + 1e-9)
    return g


def format_number(v: object) -> str:
    """A number as the tables print it: 4 significant digits, no exponent below 1e4 (whole numbers above);
    NaN as an empty cell."""
    if isinstance(v, (float, np.floating)):
        if math.isnan(v):
            return ""
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.4g}" if abs(v) < 1e4 else f"{v:.0f}"
    return str(v)


def format_interval(mean: float, low: float, high: float) -> str:
    """``mean [low, high]`` with :func:`format_number` (the mean alone when the interval is NaN: one seed)."""
    if math.isnan(low):
        return format_number(mean)
    return f"{format_number(mean)} [{format_number(low)}, {format_number(high)}]"


def markdown_table(df: pd.DataFrame, columns: Sequence[str] | None = None) -> str:
    """A GitHub markdown table of ``df`` (numbers to 4 significant digits)."""
    cols = list(columns or df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, r in df[cols].iterrows():
        lines.append("| " + " | ".join(format_number(r[c]) for c in cols) + " |")
    return "\n".join(lines)


def _flags(table: pd.DataFrame) -> list[str]:
    return ["; ".join(f for f in (f"incomplete: {n} of {p} seeds" if n < p else "", FEW_SEEDS if n < MIN_SEEDS
                                  else "") if f) for n, p in zip(table["n_seeds"], table["n_planned"])]


def headline_table(final: pd.DataFrame) -> pd.DataFrame:
    """Final regret as ``mean [low, high]`` strings, one row per (env, agent, privacy level), with the
    seeds found and planned; ``mark`` is :func:`uniform_mark` against uniform play on the row's env and horizon,
    and the ``flag`` column marks incomplete rows (fewer seeds found than planned) and rows of fewer than
    :data:`MIN_SEEDS` seeds."""
    out = final.copy()
    out["regret (95% CI)"] = [format_interval(m, lo, hi) for m, lo, hi in zip(out["mean"], out["ci_low"],
                                                                               out["ci_high"])]
    out["mark"] = uniform_marks(out)
    out["flag"] = _flags(out)
    return out[["env", "agent", "privacy_model", "epsilon", "horizon", "n_seeds", "n_planned", "regret (95% CI)",
                "mark", "flag"]]


def summary_table(final: pd.DataFrame) -> pd.DataFrame:
    """The report's opening: per block (env, horizon, privacy model, epsilon) the private agent of lowest
    mean final regret with its 95% interval, and its ratio to the best non-private agent of the same env and horizon
    (:func:`best_nonprivate`): the lowest ``ratio`` of :func:`price_of_privacy` in the block. ``mark`` says when
    that best private agent is no better than uniform play, or worse (:func:`uniform_mark`): a block's best private
    agent is never one that did not beat uniform play without saying so.

    Examples
    --------
    >>> final = pd.DataFrame(dict(env="e", horizon=8, privacy_model=["jdp", "jdp", "none"], epsilon=[1, 1, np.inf],
    ...                           agent=["a", "b", "c"], mean=[30.0, 20.0, 10.0]))
    >>> row = summary_table(final).iloc[0]
    >>> row["best private"], float(row["regret"]), row["best non-private"], float(row["ratio"]), row["mark"]
    ('b', 20.0, 'c', 2.0, '')
    """
    rows = []
    public = best_nonprivate(final)
    private = final[final["privacy_model"] != "none"]
    for (env, horizon, model, eps), g in private.groupby(["env", "horizon", "privacy_model", "epsilon"], sort=True):
        best = g.loc[g["mean"].idxmin()]
        ref = public.get((str(env), int(horizon)))
        ratio = math.nan if ref is None else best["mean"] / ref["mean"] if ref["mean"] > 0 else math.inf
        mine = _interval_of(best)
        rows.append((env, horizon, model, eps, best["agent"], mine[0], format_interval(*mine),
                     None if ref is None else ref["agent"], math.nan if ref is None else ref["mean"], ratio,
                     uniform_mark(mine, uniform_regret(final, env, horizon))))
    return pd.DataFrame(rows, columns=["env", "horizon", "privacy_model", "epsilon", "best private", "regret",
                                       "regret (95% CI)", "best non-private", "non-private regret", "ratio", "mark"])


SUMMARY_COLUMNS: tuple[str, ...] = ("env", "horizon", "privacy_model", "epsilon", "best private", "regret (95% CI)",
                                    "best non-private", "non-private regret", "ratio", "mark")
"""The columns of :func:`summary_table` that ``report.md``'s Summary prints."""


def what_ran(df: pd.DataFrame) -> str:
    """One line on what a results table holds, from its rows: runs, agents, envs, horizons and seeds.

    A shrunk run (``bench --seeds 2 --horizon 4096``) says its own seeds and horizon here, whatever the suite's
    description says.

    Examples
    --------
    >>> df = pd.DataFrame(dict(env="e", agent=["a", "a", "b"], privacy_model="none", epsilon=np.inf, delta=0.0,
    ...                        horizon=4096, seed=[0, 1, 0], t=4096, cum_regret=1.0))
    >>> what_ran(df)
    'ran: 3 runs of 2 agents on 1 env; T = 4096 (2^12); 1 to 2 seeds per agent, env and level (seeds 0, 1)'
    """
    _check(df, RUN_KEYS)
    runs = df.drop_duplicates(list(RUN_KEYS))
    if runs.empty:
        return "ran: no runs"
    per = runs.groupby(list(GROUP_KEYS), sort=False, dropna=False)["seed"].nunique()
    seeds = sorted(int(x) for x in runs["seed"].unique())
    listed = f"{seeds[0]}-{seeds[-1]}" if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)) \
        else ", ".join(map(str, seeds))
    counts = f"{per.min()} seed{'s' if per.max() > 1 else ''}" if per.min() == per.max() else \
        f"{per.min()} to {per.max()} seeds"
    horizons = ", ".join(f"{h} (2^{h.bit_length() - 1})" if h & (h - 1) == 0 else str(h)
                         for h in sorted(int(x) for x in runs["horizon"].unique()))
    n_agents, n_envs = runs["agent"].nunique(), runs["env"].nunique()
    return (f"ran: {len(runs)} runs of {n_agents} agent{'s' if n_agents > 1 else ''} on {n_envs} "
            f"env{'s' if n_envs > 1 else ''}; T = {horizons}; {counts} per agent, env and level (seeds {listed})")


def by_horizon(final: pd.DataFrame) -> list[tuple[int, pd.DataFrame]]:
    """Rows of :func:`final_regret` split by horizon (ascending), each ordered by env, then mean regret: rows at
    different horizons are not comparable (regret grows with T)."""
    return [(int(horizon), g.sort_values(["env", "mean"], kind="stable"))
            for horizon, g in final.groupby("horizon", sort=True)]


def final_regret_tables(final: pd.DataFrame) -> list[str]:
    """The final-regret tables of the report, one per horizon, rows by env then mean regret (markdown lines)."""
    return [line for horizon, g in by_horizon(final)
            for line in (f"### T = {horizon}", "", markdown_table(headline_table(g)), "")]


def _summary_lines(final: pd.DataFrame) -> list[str]:
    """The report's summary section (when a private agent ran) and its count of incomplete groups."""
    parts = []
    summary = summary_table(final)
    if not summary.empty:
        parts += ["", "## Summary", "", "Best private agent per block (lowest mean final regret, with its 95% "
                  "interval) and its price of privacy: its ratio to the best non-private agent of the same env and "
                  "horizon (the counterpart of every ratio of the Price of privacy table below, whose lowest ratio "
                  f"per block this is). `mark`: `{NO_BETTER}` when its 95% interval reaches uniform play's "
                  f"(`{UNIFORM}`: the seeds do not show that it beats playing at random), `{WORSE}` when its whole "
                  "interval lies above it.", "",
                  markdown_table(summary, SUMMARY_COLUMNS)]
    missing = incomplete_groups(final)
    if missing:
        parts += [f"- **{missing} groups incomplete** (fewer seeds found than planned, flagged below): rerun the "
                  "command to finish"]
    return parts


def _final_regret_lines(final: pd.DataFrame) -> list[str]:
    """The report's final-regret section: how it is computed, then one table per horizon."""
    return ["", "## Final regret", "",
            "Cumulative pseudo-regret at the horizon: mean over seeds and 95% confidence interval of the mean, "
            "taken on the log scale (Student-t, delta method: mean divided and multiplied by one factor), so it "
            "never reaches below 0; the figures' bands use the same rule. `n_seeds` seeds found of `n_planned` "
            "planned; `incomplete` "
            f"flags rows with missing seeds, `{FEW_SEEDS}` rows of fewer than {MIN_SEEDS} seeds, "
            "whose interval says little (one seed has none); `mark`: "
            f"`{NO_BETTER}` when the row's 95% interval reaches uniform play's on its env and T, `{WORSE}` when it "
            "lies wholly above it. One table per horizon, rows by env, then by regret.", "",
            *final_regret_tables(final)]


def _slope_lines(slopes: pd.DataFrame, slope_window: tuple[int | None, int | None]) -> list[str]:
    """The report's log-log slopes section over ``slope_window``."""
    window = "[T/64, T]" if slope_window == (None, None) else f"[{slope_window[0]}, {slope_window[1]}]"
    return ["## Log-log slopes", "",
            f"Slope of log cumulative regret against log t over t in {window}, per seed, then mean and 95% CI "
            "(1/2 is sqrt(T) regret, 1 is linear).", "",
            markdown_table(slopes.rename(columns={"mean": "slope"}).assign(flag=_flags(slopes)),
                           ["env", "agent", "privacy_model", "epsilon", "horizon", "n_seeds", "n_planned", "slope",
                            "ci_low", "ci_high", "flag"]), ""]


PRICE_HEADERS: dict[str, str] = {"reference": "best non-private", "reference_regret": "its regret",
                                 "ratio": "price (ratio to best non-private)", "same_algorithm": "same algorithm",
                                 "same_algorithm_ratio": "ratio to same algorithm"}
"""The report's headers of :func:`price_of_privacy`'s columns that name the counterpart of their ratio."""


def _price_lines(final: pd.DataFrame, references: Mapping[str, str]) -> list[str]:
    """The report's price-of-privacy section, rows by env, T, privacy model, epsilon and price."""
    pop = price_of_privacy(final, references)
    none = "No private agent on a board with a non-private agent in this run."
    pop = pop.sort_values(["env", "horizon", "privacy_model", "epsilon", "ratio"], kind="stable")
    return ["## Price of privacy", "",
            "Final regret of each private agent over that of the best non-private agent of the same env and T "
            "(every agent against the same kind of counterpart, the source paper's `eq:PoP`: what privacy costs a "
            "user who could run any non-private agent; the Summary's ratio is the lowest of its block). `ratio to "
            "same algorithm` divides by the agent's own algorithm run without privacy instead, where it ran: what "
            "privacy costs that algorithm. `note` is computed from the final-regret table: it flags a price below 1 "
            "(noise, or a private algorithm that explores better than every non-private one), an agent no better "
            f"than uniform play (`{UNIFORM}`; its 95% interval reaches uniform's: it may not have learned, so its "
            "ratio is no price of privacy) or worse (its whole interval above uniform's), and a best non-private "
            "agent no better than uniform play.", "",
            markdown_table(pop.rename(columns=PRICE_HEADERS)) if not pop.empty else none, ""]


def _price_over_time_lines(df: pd.DataFrame) -> list[str]:
    """The report's price-of-privacy-over-time section, at each private agent's largest epsilon."""
    pot = price_over_time(df)
    if pot.empty:
        return []
    pot = pot[pot["epsilon"] == pot.groupby(["env", "agent"])["epsilon"].transform("max")]
    pot = pot.assign(cell=[f"{r:.2f}" + ("" if math.isnan(q) else f" ({q:.2f})")
                           for r, q in zip(pot["ratio"], pot["recent_ratio"])])
    wide = pot.pivot_table(index=["env", "agent", "reference", "epsilon", "horizon"], columns="t", values="cell",
                           aggfunc="first").reset_index()
    wide.columns = [f"t = 2^{int(c).bit_length() - 1}" if isinstance(c, (int, np.integer)) else c
                    for c in wide.columns]
    return ["## Price of privacy over time", "",
            "Mean regret of each private agent (at its largest epsilon) over that of the best non-private agent of "
            "its env and T (`reference`, as in the Price of privacy table), "
            "cumulative at t, and in brackets of the rounds (t/4, t] alone (where the ratio is heading).", "",
            markdown_table(wide.fillna("")), ""]


def _ledger_lines(df: pd.DataFrame) -> list[str]:
    """The report's privacy-ledger section."""
    return ["## Privacy ledgers", "",
            "Worst user's composed epsilon (at the spec's delta) over all runs, from each agent's per-record ledger; "
            "every run also checked it against the spec when it ended.", "",
            markdown_table(ledger_guarantees(df)), ""]


def _figure_lines(figures: Sequence[str | os.PathLike], out: Path) -> list[str]:
    """The report's figures section (none without figures), paths relative to ``out``."""
    if not figures:
        return []
    parts = ["## Figures", ""]
    for f in figures:
        rel = os.path.relpath(Path(f), out)
        parts += [f"![{Path(f).stem}]({rel})", ""]
    return parts


def write_report(df: pd.DataFrame, out: str | os.PathLike, *, title: str = "privbandit benchmark",
                 references: Mapping[str, str] | None = None, figures: Sequence[str | os.PathLike] = (),
                 notes: Sequence[str] = (), slope_window: tuple[int | None, int | None] = (None, None),
                 sections: Sequence[str] = (), planned: pd.DataFrame | None = None) -> Path:
    """Write ``report.md`` atomically (final regret with CIs, log-log slopes, price of privacy, ledgers, figures).

    The header opens with :func:`what_ran` (runs, horizons and seeds, from the table), then ``notes``.

    Parameters
    ----------
    df : DataFrame
        The results table.
    out : path
        Folder of the report; figure paths are written relative to it.
    references : mapping, optional
        Agent label -> label of the same algorithm without privacy (the price table's ``same algorithm``
        column; every price of privacy is against the best non-private agent of its board).
    figures : sequence of paths
        PNG files to embed.
    notes : sequence of str
        Lines for the top of the report (command, wall time, ...).
    slope_window : (t_min, t_max)
        Window of the log-log slopes (default [T/64, T]).
    sections : sequence of str
        More markdown sections, placed after the final regret (e.g. a challenger's paired comparison and
        leaderboard, :func:`privbandit.report.compare.comparison_markdown`).
    planned : DataFrame, optional
        Seeds planned per group (see :func:`final_regret`): incomplete groups are flagged and counted.

    Returns
    -------
    Path
        The report's path.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    final = final_regret(df, planned=planned)
    slopes = loglog_slopes(df, *slope_window, planned=planned)
    parts = [f"# {title}", "", f"- {what_ran(df)}", *[f"- {n}" for n in notes], *_summary_lines(final),
             *_final_regret_lines(final),
             *sections, *_slope_lines(slopes, slope_window), *_price_lines(final, references or {}),
             *_price_over_time_lines(df), *_ledger_lines(df), *_figure_lines(figures, out)]
    return atomic_write(out / "report.md", "\n".join(parts))
