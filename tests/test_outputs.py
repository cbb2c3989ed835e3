"""What a reader sees: the report's summary and per-horizon tables, the challenger figure's grid, log ticks."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd

from privbandit.plots import log_ticks
from privbandit.sim.compare import challenger_figure
from privbandit.sim.report import final_regret_tables, summary_table

matplotlib.use("Agg")


def _final():
    rows = [("e", 64, "jdp", 1.0, "slow", 30.0), ("e", 64, "jdp", 1.0, "fast", 20.0),
            ("e", 64, "none", np.inf, "np", 10.0), ("e", 16, "jdp", 1.0, "fast", 5.0),
            ("e", 16, "none", np.inf, "np", 4.0)]
    final = pd.DataFrame(rows, columns=["env", "horizon", "privacy_model", "epsilon", "agent", "mean"])
    return final.assign(ci_low=final["mean"] - 1, ci_high=final["mean"] + 1, n_seeds=3, n_planned=3, few_seeds=False,
                        incomplete=False, delta=1e-5)


def test_the_summary_names_the_best_private_agent_and_its_ratio():
    summary = summary_table(_final())
    assert summary[["horizon", "best private", "best non-private"]].values.tolist() == [[16, "fast", "np"],
                                                                                        [64, "fast", "np"]]
    assert summary["ratio"].tolist() == [1.25, 2.0]


def test_one_final_regret_table_per_horizon_rows_by_regret():
    lines = "\n".join(final_regret_tables(_final())).splitlines()
    assert [line for line in lines if line.startswith("###")] == ["### T = 16", "### T = 64"]
    t64 = lines[lines.index("### T = 64"):]
    agents = [line.split("|")[2].strip() for line in t64 if line.startswith("| e |")]
    assert agents == ["np", "fast", "slow"]


def test_the_challenger_figure_wraps_its_panels_and_skips_boards_without_the_challenger(tmp_path):
    boards = []
    for i in range(5):
        agents = ["base", "me"] if i < 4 else ["base", "other"]
        boards.append(pd.DataFrame(dict(env=f"env{i}", horizon=16, model="jdp", epsilon=1.0, delta=1e-5,
                                        rank=[1, 2], agent=agents, mean=[1.0, 2.0], ci_low=[0.5, 1.5],
                                        ci_high=[1.5, 2.5])))
    path = challenger_figure(pd.concat(boards, ignore_index=True), "me", tmp_path / "c.png")
    height, width = matplotlib.image.imread(path).shape[:2]
    assert (width, height) == (round(4.6 * 3 * 110), round(2 * 2.0 * 110))  # 4 panels: 3 columns, 2 rows of 2 in


def test_log_ticks_label_at_least_two_values():
    assert log_ticks(30, 700) == [50.0, 100.0, 200.0, 500.0]
    assert len(log_ticks(52, 61)) >= 2 and all(52 <= t <= 61 for t in log_ticks(52, 61))
