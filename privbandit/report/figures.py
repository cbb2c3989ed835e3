"""Figures from tidy results: long-form DataFrame in, matplotlib Axes out (seaborn underneath).

Regret curves and regret against epsilon, regression metrics against T, information matrices as ellipses or
spectra, and the standard PNGs of a results folder (:func:`save_standard_figures`, used by ``privbandit bench``
and ``plot``). The functions never choose a matplotlib backend; scripts and the command line use ``Agg``. Curves
split by agent (``hue="agent"``) take their colours from :func:`agent_palette` unless given a palette.

Bands of a regret (or an error, any non-negative quantity) are the report's intervals (:func:`nonnegative_band`);
:data:`BAND` is for quantities that can be negative, ``errorbar=("ci", 95)`` gives seaborn's bootstrap.

References
----------
Source paper, `tab:comp` (regret rates), `eq:PoP` (price of privacy), `def:FLDP`, `def:FJDP`
(information matrices).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .tables import nonnegative_mean_ci

__all__ = ["MAX_PANEL_AGENTS", "PRIVACY_MODELS", "agent_palette", "coverage_vs_T", "ellipse_points",
           "information_ellipses", "information_spectra", "metric_vs_T", "nonnegative_band", "regret_curves",
           "regret_vs_epsilon", "save_standard_figures", "semi_axes"]

BAND: tuple[str, float] = ("se", 1.96)
"""The normal 95% interval of the mean, for quantities that can be negative."""

MAX_PANEL_AGENTS = 6
"""At most this many agents per panel of :func:`save_standard_figures` (those of lowest regret; the report's
tables have every agent)."""


def nonnegative_band(values: Sequence[float]) -> tuple[float, float]:
    """The band of the mean of a non-negative quantity over seeds: the (low, high) of
    :func:`privbandit.report.tables.nonnegative_mean_ci` (95%, log scale; NaN for one seed). A seaborn
    ``errorbar``.

    Parameters
    ----------
    values : sequence of float
        One non-negative value per seed.

    Returns
    -------
    tuple of float
        (low, high), never below 0.

    Examples
    --------
    >>> low, high = nonnegative_band([0.0, 0.0, 9.0])
    >>> bool(0 < low < 3 < high)
    True
    """
    _, low, high = nonnegative_mean_ci(np.asarray(values, dtype=float))
    return low, high

PRIVACY_MODELS: tuple[tuple[str, str], ...] = (("none", "non-private"), ("jdp", "joint DP"), ("ldp", "local DP"))
"""The privacy models in panel order, with their panel titles."""


def _colours() -> list[tuple[float, float, float]]:
    import matplotlib

    tab20 = list(matplotlib.colormaps["tab20"].colors)
    tab20b = list(matplotlib.colormaps["tab20b"].colors)
    # the 10 strong hues first, then their light versions, then tab20b's 20 (more than 20 registered agents)
    return tab20[0::2] + tab20[1::2] + tab20b[0::4] + tab20b[2::4] + tab20b[1::4] + tab20b[3::4]


def agent_palette(names: Iterable[str] | None = None) -> dict[str, tuple[float, float, float]]:
    """The fixed colour of each agent: the same agent has the same colour in every figure.

    The i-th registered agent (:func:`privbandit.agents.agent_names`, sorted) gets the i-th of 40 colours
    (tab20, its 10 strong hues first, then tab20b), whatever agents a figure shows and in whatever order; a name that
    is not a registered agent (a custom label) gets one of the colours from a hash of the name.

    Parameters
    ----------
    names : iterable of str, optional
        The agents to colour (default: every registered agent).

    Returns
    -------
    dict
        Name -> RGB tuple, in the order of ``names``.
    """
    from ..agents import agent_names

    colours = _colours()
    registered = {name: i for i, name in enumerate(agent_names())}
    names = list(agent_names() if names is None else dict.fromkeys(names))
    out = {}
    for name in names:
        i = registered.get(name)
        if i is None:  # after the registered agents' colours, then anywhere: stable, not necessarily unique
            h = int.from_bytes(hashlib.sha256(str(name).encode()).digest()[:8], "little")
            spare = len(colours) - len(registered)
            i = len(registered) + h % spare if spare > 0 else h
        out[name] = colours[i % len(colours)]
    return out


def _axes(ax: Any):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    return ax


def _titled(ax: Any, title: str | None) -> Any:
    """``ax``, with the title ``title`` if one is given."""
    if title:
        ax.set_title(title)
    return ax


def _need(data: pd.DataFrame, columns: Sequence[str | None]) -> None:
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a long-form pandas DataFrame, got {type(data).__name__}")
    missing = [c for c in columns if c is not None and c not in data.columns]
    if missing:
        raise ValueError(f"data is missing the columns {missing}; it has {list(data.columns)}")
    if data.empty:
        raise ValueError("data is empty: nothing to plot")


def regret_curves(data: pd.DataFrame, *, x: str = "t", y: str = "cum_regret", hue: str | None = "agent",
                  style: str | None = None, loglog: bool = False, errorbar: Any = nonnegative_band, ax: Any = None,
                  title: str | None = None, x_min: float | None = None, **kwargs: Any):
    """Mean regret curves over seeds with 95% bands.

    Parameters
    ----------
    data : DataFrame
        Long form, one row per (run, logged t) (the tables of ``privbandit.sim``).
    x, y : str
        Columns for the axes (default rounds t and cumulative regret).
    hue, style : str, optional
        Columns that split the curves (default: one colour per agent).
    loglog : bool
        Log-log axes (slopes read as regret exponents).
    errorbar : seaborn errorbar spec
        Default :func:`nonnegative_band` (95%, log scale, never below 0: ``y`` must be non-negative); pass
        :data:`BAND` for the normal interval of a quantity that can be negative.
    ax, title : optional
        The matplotlib Axes to draw on (default: a new figure) and its title.
    x_min : float, optional
        Drop rows with x below this (e.g. the first rounds, whose bands are wide on log axes).
    **kwargs
        Passed to :func:`seaborn.lineplot` (palette, hue_order, ...).

    Returns
    -------
    matplotlib.axes.Axes
    """
    import seaborn as sns

    _need(data, [x, y, hue, style])
    ax = _axes(ax)
    plot = data
    if x_min is not None:
        plot = plot[plot[x] >= x_min]
    if loglog:
        plot = plot[(plot[x] > 0) & (plot[y] > 0)]
    if plot.empty:
        raise ValueError("no rows left to plot (x_min, or non-positive values on log axes)")
    _nonnegative(plot, y, errorbar)
    if hue == "agent" and kwargs.get("palette") is None:        # agents keep their agent_palette colours
        kwargs["palette"] = agent_palette(plot["agent"].unique())
    sns.lineplot(data=plot, x=x, y=y, hue=hue, style=style, errorbar=errorbar, ax=ax, **kwargs)
    if loglog:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("round t" if x == "t" else x)
    ax.set_ylabel("cumulative regret" if y == "cum_regret" else y)
    return _titled(ax, title)


def _nonnegative(data: pd.DataFrame, y: str, errorbar: Any) -> None:
    """Raise if the band of a non-negative quantity is asked of a column with negative values."""
    if errorbar is nonnegative_band and (data[y] < 0).any():
        raise ValueError(f"column {y!r} has negative values: its band cannot be nonnegative_band; pass "
                         "errorbar=plots.BAND (the normal interval)")


def regret_vs_epsilon(data: pd.DataFrame, *, y: str = "cum_regret", hue: str = "agent",
                      errorbar: Any = nonnegative_band,
                      ax: Any = None, title: str | None = None, palette: Any = None):
    """Regret at the horizon against epsilon (log x axis); non-private agents as dashed horizontal lines.

    Parameters
    ----------
    data : DataFrame
        Long form with ``t``, ``horizon``, ``epsilon`` and ``y``; the rows with t = horizon are used.
    y, hue : str
        The column on the y axis (default the cumulative regret) and the one that splits the agents.
    errorbar : seaborn errorbar spec
        Default :func:`nonnegative_band`, as in :func:`regret_curves`.
    ax, title : optional
        As in :func:`regret_curves`.
    palette : dict or seaborn palette, optional
        Colours by ``hue`` (a dict also colours the non-private lines); default :func:`agent_palette` when
        ``hue="agent"``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import seaborn as sns

    _need(data, ["t", "horizon", "epsilon", y, hue])
    ax = _axes(ax)
    final = data[data["t"] == data["horizon"]]
    private = final[np.isfinite(final["epsilon"].astype(float))]
    if palette is None and hue == "agent":
        palette = agent_palette(final["agent"].unique())
    _nonnegative(final, y, errorbar)
    if not private.empty:
        sns.lineplot(data=private, x="epsilon", y=y, hue=hue, marker="o", errorbar=errorbar, ax=ax, palette=palette)
    for i, (label, g) in enumerate(final[~np.isfinite(final["epsilon"].astype(float))].groupby(hue, sort=True)):
        color = palette[label] if isinstance(palette, dict) and label in palette else f"C{(i + 5) % 10}"
        ax.axhline(float(g[y].mean()), linestyle="--", color=color, label=f"{label} (non-private)")
    ax.set_xscale("log")
    levels = np.unique(private["epsilon"].astype(float))
    if levels.size:
        from matplotlib.ticker import NullFormatter

        ax.set_xticks(levels, [f"{e:g}" for e in levels])
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("epsilon")
    ax.set_ylabel("regret at the horizon" if y == "cum_regret" else y)
    ax.legend(fontsize="small")
    return _titled(ax, title)


def metric_vs_T(data: pd.DataFrame, metric: str, *, x: str = "T", hue: str | None = "oracle",
                style: str | None = None, loglog: bool = True, errorbar: Any = nonnegative_band, ax: Any = None,
                title: str | None = None):
    """A regression metric (error, width, ...) against the sample size, with 95% bands over seeds.

    :func:`regret_curves` with ``y=metric`` (non-negative with the default band), the sample size ``T`` on the x
    axis, one curve per oracle and log-log axes by default; the other arguments are its own.

    Returns
    -------
    matplotlib.axes.Axes
    """
    return regret_curves(data, x=x, y=metric, hue=hue, style=style, loglog=loglog, errorbar=errorbar, ax=ax,
                         title=title)


def coverage_vs_T(data: pd.DataFrame, *, coverage: str = "coverage", x: str = "T", hue: str | None = "oracle",
                  style: str | None = None, nominal: float = 0.95, errorbar: Any = BAND, ax: Any = None,
                  title: str | None = None):
    """Coverage of the confidence widths against T (log x axis) with the nominal level dotted.

    Parameters
    ----------
    data : DataFrame
        Long form, one row per (seed, ``x``).
    coverage, x : str
        The columns of the coverage (y axis) and of the sample size (x axis).
    hue, style : str, optional
        Columns that split the curves.
    nominal : float
        The nominal level, drawn as a dotted line.
    errorbar : seaborn errorbar spec
        Default: the normal 95% interval of the mean (:data:`BAND`).
    ax, title : optional
        As in :func:`regret_curves`.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import seaborn as sns

    _need(data, [x, coverage, hue, style])
    ax = _axes(ax)
    sns.lineplot(data=data, x=x, y=coverage, hue=hue, style=style, errorbar=errorbar, marker="o", ax=ax)
    ax.axhline(nominal, color="k", linestyle=":", label=f"nominal {nominal:g}")
    ax.set_xscale("log")
    ax.set_ylim(top=1.02)
    ax.set_ylabel("coverage")
    return _titled(ax, title)


def ellipse_points(matrix: np.ndarray, n: int = 200) -> np.ndarray:
    """The image {M u : ||u|| = 1} of the unit circle under a 2x2 matrix M, as (n, 2) points.

    Parameters
    ----------
    matrix : ndarray
        A finite 2x2 matrix M.
    n : int
        The number of points.
    """
    m = np.asarray(matrix, dtype=float)
    if m.shape != (2, 2) or not np.all(np.isfinite(m)):
        raise ValueError(f"matrix must be a finite 2x2 array, got shape {m.shape}")
    angle = np.linspace(0.0, 2 * np.pi, n)
    return np.column_stack([np.cos(angle), np.sin(angle)]) @ m.T


def semi_axes(matrix: np.ndarray) -> np.ndarray:
    """Semi-axes of the image of the unit ball under a symmetric matrix: |eigenvalues|, largest first.

    Parameters
    ----------
    matrix : ndarray
        A symmetric (d, d) matrix.
    """
    m = np.asarray(matrix, dtype=float)
    return np.sort(np.abs(np.linalg.eigvalsh((m + m.T) / 2)))[::-1]


def _matrix_items(matrices: Mapping[str, np.ndarray], what: str):
    if not matrices:
        raise ValueError(f"matrices must map at least one label to {what}")
    return matrices.items()

def information_ellipses(matrices: Mapping[str, np.ndarray], *, normalize: bool = False, ax: Any = None,
                         title: str | None = None):
    """Draw 2x2 matrices as ellipses: the image of the unit circle under each.

    For the shapes to be comparable, pass matrices of the same kind, e.g. Sigma^{1/2} (the covariance
    ellipse), U*^{-1} and W*^{-1} (`lem:U-L1-covariance`: ||U*^{-1} theta|| ~ E|<phi, theta>|, an L1 analogue
    of ||Sigma^{1/2} theta||).

    Parameters
    ----------
    matrices : mapping
        Label -> 2x2 matrix.
    normalize : bool
        Scale each ellipse to a largest semi-axis of 1 (compare shapes only).

    Returns
    -------
    matplotlib.axes.Axes

    References
    ----------
    Source paper, `def:FLDP`, `def:FJDP`, `lem:U-L1-covariance`.
    """
    ax = _axes(ax)
    for i, (label, m) in enumerate(_matrix_items(matrices, "a 2x2 matrix")):
        pts = ellipse_points(m)
        if normalize:
            pts = pts / max(float(semi_axes(m)[0]), 1e-300)
        ax.plot(pts[:, 0], pts[:, 1], color=f"C{i}", label=label)
    ax.set_aspect("equal", adjustable="datalim")
    ax.axhline(0, color="0.8", linewidth=0.5)
    ax.axvline(0, color="0.8", linewidth=0.5)
    ax.legend(fontsize="small")
    return _titled(ax, title)


def information_spectra(matrices: Mapping[str, np.ndarray], *, ax: Any = None, title: str | None = None):
    """Draw the semi-axes of symmetric d x d matrices, largest first, each divided by its largest.

    The d-dimensional view of :func:`information_ellipses`: a flat line is a round ellipsoid, a steep
    one a lopsided ellipsoid (the last point is 1 / the axis ratio). Log y axis.

    Parameters
    ----------
    matrices : mapping
        Label -> symmetric (d, d) matrix, e.g. Sigma^{1/2}, U*^{-1}, W*^{-1}.

    Returns
    -------
    matplotlib.axes.Axes

    References
    ----------
    Source paper, `def:FLDP`, `def:FJDP`, `lem:U-L1-covariance`.
    """
    ax = _axes(ax)
    for i, (label, m) in enumerate(_matrix_items(matrices, "a square matrix")):
        m = np.asarray(m, dtype=float)
        if m.ndim != 2 or m.shape[0] != m.shape[1] or not np.all(np.isfinite(m)):
            raise ValueError(f"matrices[{label!r}] must be a finite square array, got shape {m.shape}")
        axes = semi_axes(m)
        ax.plot(np.arange(1, axes.size + 1), axes / max(float(axes[0]), 1e-300), "o-", color=f"C{i}", label=label,
                markersize=3)
    ax.set_yscale("log")
    ax.set_xlabel("semi-axis (largest first)")
    ax.set_ylabel("semi-axis / largest")
    ax.legend(fontsize="small")
    return _titled(ax, title)


def _privacy_models(data: pd.DataFrame) -> pd.Series:
    """Each row's privacy model (the ``privacy_model`` column; without it, "none" or "private" by epsilon)."""
    if "privacy_model" in data.columns:
        return data["privacy_model"].astype(str)
    eps = data["epsilon"].astype(float)
    return pd.Series(np.where(np.isinf(eps), "none", "private"), index=data.index)


def _model_order(models: Iterable[str]) -> list[tuple[str, str]]:
    """(model, panel title) of the models present: none, jdp, ldp first, then any other."""
    present = set(models)
    known = [(m, title) for m, title in PRIVACY_MODELS if m in present]
    return known + [(m, m) for m in sorted(present - {m for m, _ in PRIVACY_MODELS})]


def _legend_below(ax: Any, note: str = "") -> None:
    """Move ``ax``'s legend under it, in two columns, titled ``note`` (if any)."""
    import seaborn as sns

    if ax.get_legend() is not None:
        sns.move_legend(ax, "upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize="x-small", frameon=False,
                        title=note or None, title_fontsize="x-small")


def _suptitle(fig: Any, text: str) -> None:
    """A figure title wrapped to the figure's width (long env labels do not run off a one-panel figure)."""
    import textwrap

    fig.suptitle("\n".join(textwrap.wrap(text, width=max(20, int(fig.get_figwidth() * 10)))))


def panel_level(sub: pd.DataFrame) -> float:
    """The epsilon a private panel of regret curves shows: the one most agents ran at, the largest on ties
    (the regret against epsilon, and the report, have the others)."""
    counts = sub.groupby("epsilon")["agent"].nunique()
    return float(max(counts.index, key=lambda e: (counts[e], float(e))))


def lowest_regret_agents(sub: pd.DataFrame, limit: int = MAX_PANEL_AGENTS) -> list[str]:
    """The ``limit`` agents of ``sub`` of lowest mean regret at the last round every agent logged, in order of
    appearance (the rows of one panel; runs of different horizons compare at their common round)."""
    common = sub.groupby("agent")["t"].max().min()
    at = sub[sub["t"] <= common]
    at = at[at["t"] == at.groupby("agent")["t"].transform("max")]
    ranked = at.groupby("agent", sort=False)["cum_regret"].mean().sort_values(kind="stable")
    keep = set(ranked.index[:limit])
    return [a for a in dict.fromkeys(sub["agent"]) if a in keep]


def _left_out(agents: Sequence[str], rows: pd.DataFrame) -> str:
    """The legend's note on the agents of ``rows`` a panel leaves out (none when it shows ``agents``, all)."""
    everyone = rows["agent"].nunique()
    return "" if len(agents) == everyone else (f"{len(agents)} of {everyone} agents (lowest regret);\n"
                                               "the others are in the report's tables")


def _regret_figure(g: pd.DataFrame, env: str):
    """Regret curves of one env: a column per privacy model (private ones at one epsilon, :func:`panel_level`),
    linear (top) and log-log (bottom), at most :data:`MAX_PANEL_AGENTS` agents per panel, each with its colour,
    dashes and marker. The linear panels' y axis spans every run's regret: the band of a mean over few seeds can
    be far wider (:func:`nonnegative_band`) and is cut by the frame there."""
    import matplotlib.pyplot as plt

    models = _model_order(g["model"])
    fig, axes = plt.subplots(2, len(models), figsize=(4.8 * len(models) + 0.6, 8.8), squeeze=False)
    for col, (model, name) in enumerate(models):
        sub = g[g["model"] == model]
        if model != "none":  # one epsilon per column
            level = panel_level(sub)
            sub = sub[sub["epsilon"].astype(float) == level]
            name = f"{name}, epsilon = {level:g}"
        agents = lowest_regret_agents(sub)
        sub, note = sub[sub["agent"].isin(agents)], _left_out(agents, sub)
        common = dict(hue="agent", style="agent", palette=agent_palette(agents), hue_order=agents,
                      style_order=agents)
        regret_curves(sub, ax=axes[0, col], title=f"{name}: cumulative regret", **common)
        axes[0, col].set_ylim(0, 1.05 * float(sub["cum_regret"].max()) or 1.0)  # every run, not a few seeds' bands
        regret_curves(sub, loglog=True, x_min=16, ax=axes[1, col], title=f"{name}: log-log, t >= 16", **common)
        axes[0, col].get_legend().remove()
        log_axis(axes[1, col])
        _legend_below(axes[1, col], note)
        for ax in axes[:, col]:
            _mark_agents(ax, agents, common["palette"])
    _suptitle(fig, env)
    fig.tight_layout()
    return fig


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")
"""Marker shapes of the agents of one panel, in legend order (identical curves stay apart)."""


def log_ticks(low: float, high: float) -> list[float]:
    """Readable ticks of a log axis on [low, high]: powers of ten, else 1, 2, 5 times them, else 1, 2, 3, 5, 7
    times them (the first of these with at least three ticks), else (a range narrower than that) round linear
    steps; at least two ticks.

    Examples
    --------
    >>> log_ticks(30, 700)
    [50.0, 100.0, 200.0, 500.0]
    >>> log_ticks(300, 400_000)
    [1000.0, 10000.0, 100000.0]
    >>> log_ticks(15_000, 90_000)
    [20000.0, 30000.0, 50000.0, 70000.0]
    >>> log_ticks(110, 180)
    [120.0, 140.0, 160.0, 180.0]
    """
    from matplotlib.ticker import MaxNLocator

    if not (0 < low < high):
        return []
    powers = [10.0 ** k for k in range(int(np.floor(np.log10(low))), int(np.ceil(np.log10(high))) + 1)]
    for subs in ((1,), (1, 2, 5), (1, 2, 3, 5, 7)):
        ticks = [float(f"{m * p:.6g}") for p in powers for m in subs if low <= m * p <= high]
        if len(ticks) >= 3:
            return ticks
    return [float(f"{v:.6g}") for v in MaxNLocator(nbins=4).tick_values(low, high) if low <= v <= high]


def compact_number(value: float) -> str:
    """A tick label of at most about four characters: ``950``, ``2.5k``, ``120k``, ``1M``.

    Examples
    --------
    >>> [compact_number(v) for v in (0.5, 950, 2500, 120_000, 1_000_000)]
    ['0.5', '950', '2.5k', '120k', '1M']
    """
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def log_axis(ax: Any, axis: str = "y") -> None:
    """Put ``ax``'s ``axis`` (``"x"`` or ``"y"``) on a log scale with compact labels at readable ticks
    (:func:`log_ticks`, :func:`compact_number`), keeping its current limits."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    getattr(ax, f"set_{axis}scale")("log")
    low, high = getattr(ax, f"get_{axis}lim")()
    which = getattr(ax, f"{axis}axis")
    which.set_major_locator(FixedLocator(log_ticks(low, high)))
    which.set_major_formatter(FuncFormatter(lambda v, _: compact_number(v)))
    which.set_minor_formatter(NullFormatter())
    getattr(ax, f"set_{axis}lim")(low, high)


def _mark_agents(ax: Any, agents: Sequence[str], palette: Mapping[str, Any]) -> None:
    """Give each agent's curves (and legend entries) a marker of :data:`MARKERS`, placed at staggered points
    so that curves that coincide still show every agent's marker."""
    from matplotlib.colors import to_rgb

    shapes = {to_rgb(palette[a]): (MARKERS[i % len(MARKERS)], i) for i, a in enumerate(agents) if a in palette}
    legend = ax.get_legend()
    handles = list(getattr(legend, "legend_handles", [])) if legend is not None else []
    for line in list(ax.get_lines()) + handles:
        try:
            key = to_rgb(line.get_color())
        except (AttributeError, ValueError):
            continue
        if key in shapes:
            marker, i = shapes[key]
            line.set_marker(marker)
            line.set_markersize(5)
            if line in handles:
                continue
            line.set_markevery((0.02 + 0.17 * (i % 6) / 6, 0.17))


def epsilon_panels(top: pd.DataFrame) -> tuple[list[tuple[str, str]], list[str]]:
    """The private models of a regret-against-epsilon figure: those run at two epsilons or more (a panel
    each), and the titles of the others (one epsilon: nothing to draw a line through, left to the report).
    ``top`` has a ``model`` column (:func:`save_standard_figures`)."""
    shown, left = [], []
    for model, name in _model_order(top["model"]):
        if model != "none":
            levels = top.loc[top["model"] == model, "epsilon"].astype(float).nunique()
            (shown if levels >= 2 else left).append((model, name))
    return shown, [name for _, name in left]


def _references(reference: pd.DataFrame) -> pd.DataFrame:
    """The non-private agents an epsilon panel draws: the one of lowest final regret, and uniform play."""
    final = reference[reference["t"] == reference["horizon"]]
    if final.empty:
        return reference
    means = final.groupby("agent")["cum_regret"].mean()
    keep = {means.idxmin()} | ({"uniform"} & set(means.index))
    return reference[reference["agent"].isin(keep)]


def _epsilon_figure(top: pd.DataFrame, env: str):
    """Regret at the horizon against epsilon, a panel per private model run at two epsilons or more (at most
    :data:`MAX_PANEL_AGENTS` agents each); the best non-private agent and uniform play dashed. None when no
    model has two epsilons."""
    import matplotlib.pyplot as plt

    private, left = epsilon_panels(top)
    if not private:
        return None
    fig, axes = plt.subplots(1, len(private), figsize=(5.2 * len(private) + 0.6, 5.6), squeeze=False)
    reference = _references(top[top["model"] == "none"])
    for ax, (model, name) in zip(axes[0], private):
        rows = top[top["model"] == model]
        agents = lowest_regret_agents(rows[rows["t"] == rows["horizon"]])
        sub = pd.concat([rows[rows["agent"].isin(agents)], reference])
        palette = agent_palette(sub["agent"].unique())
        regret_vs_epsilon(sub, ax=ax, palette=palette, title=name)
        if (sub.loc[sub["t"] == sub["horizon"], "cum_regret"] > 0).all():
            log_axis(ax)  # uniform play's regret does not flatten the others
        _legend_below(ax, _left_out(agents, rows))
        _mark_agents(ax, list(dict.fromkeys(sub["agent"])), palette)
    title = f"{env}: regret at T = {int(top['horizon'].iloc[0])} against epsilon"
    if left:
        title += f" ({', '.join(left)}: one epsilon, in the report's tables)"
    _suptitle(fig, title)
    fig.tight_layout()
    return fig


def save_standard_figures(data: pd.DataFrame, out: str | Path, *, dpi: int = 90) -> list[Path]:
    """Write the figures of a results table to ``out`` and return the PNG paths.

    Per env: regret curves (linear and log-log), one column of panels per privacy model (none, JDP,
    LDP; a private model at the epsilon most of its agents ran), so that agents at uniform play do not flatten
    the others; and regret at the horizon against epsilon, one panel per private model run at two epsilons or
    more (none when no model was). At most :data:`MAX_PANEL_AGENTS` agents per panel, those of lowest regret.
    Agents keep the colours of :func:`agent_palette`; bands are :func:`nonnegative_band`.

    Parameters
    ----------
    data : DataFrame
        The results table (columns env, agent, epsilon, t, horizon, cum_regret; privacy_model if present).
    out : path
        The folder of the PNGs (made if missing).
    dpi : int
        Resolution of the PNGs.

    Returns
    -------
    list of Path
        The PNGs written: ``regret_ENV.png`` and ``epsilon_ENV.png`` per env.
    """
    import matplotlib.pyplot as plt

    _need(data, ["env", "agent", "epsilon", "t", "horizon", "cum_regret"])
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for env, g in data.groupby("env", sort=True):
        g = g.assign(model=_privacy_models(g))
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in str(env))  # the PNGs' file names
        figures = [("regret", _regret_figure(g, str(env)))]
        top = g[g["horizon"] == g["horizon"].max()]  # one horizon per figure: final regrets are comparable
        figures.append(("epsilon", _epsilon_figure(top, str(env))))
        for kind, fig in figures:
            if fig is not None:
                paths.append(out / f"{kind}_{safe}.png")
                fig.savefig(paths[-1], dpi=dpi)
                plt.close(fig)
    return paths
