"""privbandit.plots: long-form DataFrame in, Axes out; the drawn data is the data given."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

from privbandit import plots  # noqa: E402


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
    assert [t.split(":")[0] for t in titles] == ["non-private", "joint DP", "local DP"] * 2
    by_title = {ax.get_title(): {text.get_text() for text in ax.get_legend().get_texts()} if ax.get_legend() else None
                for ax in regret.axes}
    assert {"uniform", "elim-nonprivate"} <= by_title["non-private: log-log, t >= 16"]
    joint, local = by_title["joint DP: log-log, t >= 16"], by_title["local DP: log-log, t >= 16"]
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
