"""privbandit.report.figures: long-form DataFrame in, Axes out; the drawn data is the data given."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

from privbandit.report import figures as plots  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _results(seeds: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    t = np.array([1, 2, 4, 8, 16, 32, 64])
    for agent, eps, slope in (("elim-jdp", 0.3, 0.7), ("elim-jdp", 1.0, 0.6), ("elim-nonprivate", np.inf, 0.5),
                              ("uniform", np.inf, 1.0)):
        for seed in range(seeds):
            cum = t ** slope * (1 + 0.05 * rng.standard_normal(t.size))
            for ti, c in zip(t, cum):
                rows.append(dict(env="heavy-tailed-d5k5", agent=agent, epsilon=eps, seed=seed, t=ti, horizon=64,
                                 cum_regret=c))
    return pd.DataFrame(rows)


def test_regret_curves_returns_axes_with_one_line_per_agent_and_log_axes():
    df = _results()
    ax = plots.regret_curves(df, loglog=True)
    assert isinstance(ax, Axes)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = {t.get_text() for t in ax.get_legend().get_texts()}
    assert labels == {"elim-jdp", "elim-nonprivate", "uniform"}
    ax2 = plots.regret_curves(df, hue="agent")
    assert ax2.get_xscale() == "linear"


def test_regret_curves_band_contains_the_mean():
    df = _results(seeds=5)
    ax = plots.regret_curves(df[df["agent"] == "uniform"], hue=None)
    line = ax.get_lines()[0]
    x, y = line.get_xdata(), line.get_ydata()
    expected = df[df["agent"] == "uniform"].groupby("t")["cum_regret"].mean()
    np.testing.assert_allclose(y, expected.loc[x].to_numpy())
    band = ax.collections[0].get_paths()[0].vertices
    assert band[:, 1].min() < y.min() + 1e-9 and band[:, 1].max() >= y.max()


def test_regret_vs_epsilon_draws_private_points_and_nonprivate_lines():
    ax = plots.regret_vs_epsilon(_results())
    assert isinstance(ax, Axes) and ax.get_xscale() == "log"
    hlines = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert len(hlines) == 2  # elim-nonprivate and uniform
    final = _results()
    final = final[(final.t == 64) & (final.agent == "uniform")]["cum_regret"].mean()
    assert any(np.isclose(ln.get_ydata()[0], final) for ln in hlines)


def test_metric_and_coverage_vs_T():
    rng = np.random.default_rng(1)
    df = pd.DataFrame([dict(oracle=o, T=T, seed=s, error=1 / np.sqrt(T) * (1 + 0.1 * rng.random()),
                            coverage=min(1.0, 0.9 + 0.1 * rng.random()))
                       for o in ("ssp", "iw") for T in (2 ** 10, 2 ** 12, 2 ** 14) for s in range(3)])
    ax = plots.metric_vs_T(df, "error")
    assert isinstance(ax, Axes) and ax.get_yscale() == "log"
    ax = plots.coverage_vs_T(df, nominal=0.95)
    assert isinstance(ax, Axes)
    assert any(np.allclose(ln.get_ydata(), 0.95) for ln in ax.get_lines())


def test_information_ellipses_semi_axes_are_the_eigenvalues():
    m = np.array([[2.0, 0.0], [0.0, 0.5]])
    pts = plots.ellipse_points(m, n=401)
    assert np.isclose(np.abs(pts[:, 0]).max(), 2.0) and np.isclose(np.abs(pts[:, 1]).max(), 0.5)
    ax = plots.information_ellipses({"Sigma^1/2": m, "U*^-1": np.eye(2)}, normalize=True)
    assert isinstance(ax, Axes)
    first = ax.get_lines()[0]
    assert np.isclose(np.abs(first.get_xdata()).max(), 1.0)  # normalized to a largest semi-axis of 1



def test_information_spectra_draw_the_semi_axes_over_the_largest():
    ax = plots.information_spectra({"Sigma^1/2": np.diag([4.0, 1.0, 2.0]), "U*^-1": -np.eye(3)})
    first, second = ax.get_lines()
    assert np.allclose(first.get_ydata(), [1.0, 0.5, 0.25]) and np.allclose(second.get_ydata(), 1.0)
    assert ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="square"):
        plots.information_spectra({"bad": np.ones((2, 3))})

def test_bad_inputs_raise_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="missing the columns"):
        plots.regret_curves(pd.DataFrame({"t": [1]}))
    with pytest.raises(ValueError, match="empty"):
        plots.regret_curves(_results().iloc[:0])
    with pytest.raises(TypeError, match="DataFrame"):
        plots.regret_curves([1, 2, 3])
    with pytest.raises(ValueError, match="2x2"):
        plots.ellipse_points(np.eye(3))
    with pytest.raises(ValueError, match="at least one"):
        plots.information_ellipses({})


def test_save_standard_figures_writes_pngs(tmp_path):
    paths = plots.save_standard_figures(_results(), tmp_path)
    names = sorted(p.name for p in paths)
    assert names == ["epsilon_heavy-tailed-d5k5.png", "regret_heavy-tailed-d5k5.png"]
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _models(env: str = "heavy-tailed-d5k5") -> pd.DataFrame:
    """Results of a non-private, a JDP and an LDP agent plus uniform play, with their privacy models."""
    df = _results()
    df["env"] = env
    model = {"elim-jdp": "jdp", "elim-nonprivate": "none", "uniform": "none"}
    df["privacy_model"] = df["agent"].map(model)
    ldp = df[df["agent"] == "elim-jdp"].assign(agent="elim-ldp", privacy_model="ldp")
    return pd.concat([df, ldp], ignore_index=True)


@pytest.fixture
def saved_figures(monkeypatch):
    """The figures that save_standard_figures draws, drawn, in the order it saves them."""
    from matplotlib.figure import Figure

    figures = []
    real = Figure.savefig

    def savefig(self, *args, **kwargs):
        real(self, *args, **kwargs)
        self.test_renderer = self.canvas.get_renderer()  # closing the figure drops its Agg canvas
        figures.append(self)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return figures


def _legend_colours(fig) -> dict[str, tuple]:
    from matplotlib.colors import to_rgb

    colours = {}
    for ax in fig.axes:
        legend = ax.get_legend()
        for handle, text in zip(legend.legend_handles if legend else [], legend.get_texts() if legend else []):
            shown = {"elim-jdp", "elim-ldp", "elim-nonprivate", "uniform"}
            if hasattr(handle, "get_color") and text.get_text() in shown:
                colours.setdefault(text.get_text(), set()).add(to_rgb(handle.get_color()))
    return colours


def test_agent_palette_is_fixed_by_the_registered_agents():
    from privbandit.agents import agent_names

    full = plots.agent_palette()
    assert list(full) == list(agent_names()) and len(set(full.values())) == len(full)  # one colour each
    subset = plots.agent_palette(["uniform", "elim-jdp"])
    assert subset == {"uniform": full["uniform"], "elim-jdp": full["elim-jdp"]}
    assert plots.agent_palette(["my-label"])["my-label"] == plots.agent_palette(["uniform", "my-label"])["my-label"]


@pytest.mark.slow
def test_one_colour_per_agent_in_every_figure(tmp_path, saved_figures):
    df = _models()
    plots.save_standard_figures(df, tmp_path / "all")
    plots.save_standard_figures(df[df["agent"].isin(["uniform", "elim-nonprivate"])], tmp_path / "two")
    plots.save_standard_figures(df[df["agent"] == "elim-jdp"], tmp_path / "one")
    seen: dict[str, set] = {}
    for fig in saved_figures:
        for agent, colours in _legend_colours(fig).items():
            seen.setdefault(agent, set()).update(colours)
    assert set(seen) == {"elim-jdp", "elim-ldp", "elim-nonprivate", "uniform"}
    assert all(len(c) == 1 for c in seen.values()), seen
    assert len({next(iter(c)) for c in seen.values()}) == len(seen)
    # and a figure drawn by hand with a subset of agents uses the same colours
    ax = plots.regret_curves(df[df["agent"].isin(["uniform", "elim-jdp"])], hue_order=["uniform", "elim-jdp"])
    from matplotlib.colors import to_rgb

    got = {t.get_text(): to_rgb(h.get_color()) for h, t in zip(ax.get_legend().legend_handles,
                                                               ax.get_legend().get_texts())}
    assert got == {a: next(iter(seen[a])) for a in ("uniform", "elim-jdp")}


def test_regret_panels_are_split_by_privacy_model(tmp_path, saved_figures):
    plots.save_standard_figures(_models(), tmp_path)
    regret, epsilon = saved_figures
    titles = [ax.get_title() for ax in regret.axes]
    # a private model's curves at the epsilon most of its agents ran (the largest on ties): here 1
    assert [t.split(":")[0] for t in titles] == ["non-private", "joint DP, epsilon = 1", "local DP, epsilon = 1"] * 2
    by_title = {ax.get_title(): {text.get_text() for text in ax.get_legend().get_texts()} if ax.get_legend() else None
                for ax in regret.axes}
    assert {"uniform", "elim-nonprivate"} <= by_title["non-private: log-log, t >= 16"]
    joint = by_title["joint DP, epsilon = 1: log-log, t >= 16"]
    local = by_title["local DP, epsilon = 1: log-log, t >= 16"]
    assert "elim-jdp" in joint and "uniform" not in joint
    assert "elim-ldp" in local and "elim-jdp" not in local
    assert [ax.get_title() for ax in epsilon.axes] == ["joint DP", "local DP"]


def test_titles_do_not_collide(tmp_path, saved_figures):
    env = "PrivLinCB-v0-family=rare-direction-dim=3-n_arms=3"  # the label of `privbandit run`
    df = _models(env)
    plots.save_standard_figures(df[df["agent"] == "elim-jdp"], tmp_path)
    for fig in saved_figures:
        renderer = fig.test_renderer
        texts = [ax.title for ax in fig.axes if ax.get_title()] + [t for t in fig.texts if t.get_text()]
        boxes = [t.get_window_extent(renderer) for t in texts]
        assert env in " ".join(t.get_text() for t in texts)
        for i, a in enumerate(boxes):
            assert a.x0 >= 0 and a.x1 <= fig.bbox.width, texts[i].get_text()  # inside the figure
            for j, b in enumerate(boxes[:i]):
                assert not a.overlaps(b), (texts[i].get_text(), texts[j].get_text())


def _bands(ax) -> list[np.ndarray]:
    """The y values of every band (filled region) of ``ax``."""
    from matplotlib.collections import PolyCollection

    return [path.vertices[:, 1] for c in ax.collections if isinstance(c, PolyCollection) for path in c.get_paths()]


def _points(ax) -> set[float]:
    """The distinct x values of the data drawn on ``ax`` (lines in data coordinates: not axhline's)."""
    return {float(x) for line in ax.get_lines() if line.get_transform() == ax.transData
            for x in np.asarray(line.get_xdata(), dtype=float) if np.isfinite(x)}


def _problems(figures) -> list[str]:
    """What a reader must not see in the saved figures: a band below 0 (or at 0 on a log axis, where it plunges
    to the frame's bottom) and a panel with fewer than two points."""
    problems = []
    for fig in figures:
        for ax in (a for a in fig.axes if a.get_visible()):
            for band in _bands(ax):
                low = float(np.nanmin(band)) if np.isfinite(band).any() else np.inf
                if low < 0 or (ax.get_yscale() == "log" and low <= 0):
                    problems.append(f"{ax.get_title()!r}: band down to {low}")
            if len(_points(ax)) < 2:
                problems.append(f"{ax.get_title()!r}: {len(_points(ax))} point(s)")
    return problems


def _noisy(seeds: int = 4) -> pd.DataFrame:
    """A JDP agent at two epsilons and an LDP agent at one, whose seeds differ widely at the first rounds (some
    at 0 regret): a normal band of their mean goes below 0."""
    df = _models()
    df = df[~((df["agent"] == "elim-ldp") & (df["epsilon"] == 0.3))].copy()
    rows = []
    for seed in range(seeds):
        extra = df[df["seed"] == 0].assign(seed=seed + 10)
        extra["cum_regret"] = np.where(extra["t"] <= 4, 8.0 * (seed == 0), extra["cum_regret"] * (1 + seed))
        rows.append(extra)
    return pd.concat([df, *rows], ignore_index=True)


def test_no_band_below_zero_and_no_panel_without_two_points(tmp_path, saved_figures):
    df = _noisy()
    ax = plots.regret_curves(df[df["agent"] == "elim-ldp"], errorbar=plots.BAND)
    assert min(float(np.nanmin(b)) for b in _bands(ax)) < 0  # the normal band would go below 0 here
    plt.close("all")
    paths = plots.save_standard_figures(df, tmp_path)
    assert [p.name for p in paths] == ["regret_heavy-tailed-d5k5.png", "epsilon_heavy-tailed-d5k5.png"]
    assert _problems(saved_figures) == []
    regret, epsilon = saved_figures
    assert all(ax.get_yscale() == "log" for ax in regret.axes[3:])  # the log-log row, where zero would plunge
    # local DP ran at one epsilon: no panel of its own, the title says where its numbers are
    assert [ax.get_title() for ax in epsilon.axes] == ["joint DP"]
    assert "local DP: one epsilon, in the report's tables" in " ".join(epsilon.texts[0].get_text().split())


def test_no_epsilon_figure_when_every_private_model_ran_at_one_epsilon(tmp_path, saved_figures):
    df = _models()
    paths = plots.save_standard_figures(df[df["epsilon"] != 0.3], tmp_path)
    assert [p.name for p in paths] == ["regret_heavy-tailed-d5k5.png"]
    assert _problems(saved_figures) == []


def test_the_problems_check_catches_a_band_below_zero_and_a_lone_point():
    df = _noisy()
    ax = plots.regret_curves(df[df["agent"] == "elim-ldp"], errorbar=plots.BAND)
    lone = plots.regret_vs_epsilon(df[df["agent"] == "elim-ldp"])  # one epsilon: one point
    problems = _problems([ax.figure, lone.figure])
    assert any("band down to" in p for p in problems) and any("1 point(s)" in p for p in problems)


def test_bands_are_the_reports_intervals():
    from privbandit.report.tables import final_regret

    df = _noisy().assign(privacy_model=lambda d: d["privacy_model"], delta=1e-5)
    ax = plots.regret_vs_epsilon(df[df["agent"] == "elim-jdp"])
    final = final_regret(df[df["agent"] == "elim-jdp"]).sort_values("epsilon")
    band = ax.collections[0].get_paths()[0].vertices
    for eps, low, high in zip(final["epsilon"], final["ci_low"], final["ci_high"]):
        at = band[np.isclose(band[:, 0], eps), 1]
        assert np.isclose(at.min(), low) and np.isclose(at.max(), high) and low > 0


def test_a_panel_shows_at_most_max_agents_and_says_so(tmp_path, saved_figures):
    from matplotlib.colors import to_rgb

    from privbandit.agents import agent_names

    df = _models()
    names = [a for a in agent_names() if "jdp" in a and a != "elim-jdp"][:plots.MAX_PANEL_AGENTS + 3]
    many = [df[df["agent"] == "elim-jdp"].assign(agent=name, cum_regret=lambda d, i=i: d["cum_regret"] * (2 + i))
            for i, name in enumerate(names)]
    plots.save_standard_figures(pd.concat([df, *many], ignore_index=True), tmp_path)
    regret, epsilon = saved_figures
    joint = regret.axes[4].get_legend()
    shown = {t.get_text() for t in joint.get_texts()}
    everyone = len(names) + 1
    assert shown == {"elim-jdp", *names[:plots.MAX_PANEL_AGENTS - 1]}  # the lowest regrets
    assert f"{plots.MAX_PANEL_AGENTS} of {everyone} agents (lowest regret)" in joint.get_title().get_text()
    # each shown agent's curve has its own colour and marker
    styles = {(ln.get_marker(), to_rgb(ln.get_color())) for ln in regret.axes[4].get_lines()
              if ln.get_transform() == regret.axes[4].transData}
    assert len(styles) == plots.MAX_PANEL_AGENTS and len({m for m, _ in styles}) == plots.MAX_PANEL_AGENTS
    assert f"{plots.MAX_PANEL_AGENTS} of {everyone} agents" in epsilon.axes[0].get_legend().get_title().get_text()
