"""scripts/ldp_boards.py: the local-DP boards' targets, picks and readings follow from the curves; its errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import load_script

ldp = load_script("ldp_boards")

T = 2 ** 20
LOGGED = [2 ** 14, 2 ** 16] + [int(t) for t in np.geomspace(2 ** 18, T, 9).round()]


def _curves(boards: dict[str, dict[tuple[str, str, float], tuple[float, float]]], seeds: int = 4) -> pd.DataFrame:
    """Runs whose regret is c t^slope (times a seed's factor in [0.95, 1.05]): board -> (agent, model, epsilon) ->
    (regret at T, slope)."""
    rows = []
    for env, agents in boards.items():
        for (agent, model, eps), (final, slope) in agents.items():
            for seed in range(seeds):
                scale = final * (0.95 + 0.1 * seed / (seeds - 1))
                rows += [dict(env=env, agent=agent, privacy_model=model, epsilon=eps, delta=1e-5, horizon=T,
                              seed=seed, t=t, cum_regret=scale * (t / T) ** slope) for t in LOGGED]
    return pd.DataFrame(rows)


INF = np.inf
BOARDS = {
    "heavy-tailed-d5k5": {("uniform", "none", INF): (1000.0, 1.0),
                          ("linucb-practical-batch64", "none", INF): (10.0, 0.5),
                          ("elim-ldp-vec", "ldp", 1.0): (200.0, 0.5),
                          ("ldp-ucb-practical-batch64", "ldp", 1.0): (900.0, 1.0),
                          ("elim-ldp-vec", "ldp", 0.3): (700.0, 0.9)},
    "glm-rare-direction-d5k5-s6": {("uniform", "none", INF): (1000.0, 1.0), ("elim-ldp-vec", "ldp", 1.0): (300.0, 0.8),
                                   ("elim-glm-ldp-vec", "ldp", 1.0): (310.0, 0.8),
                                   ("ldp-glm-sgd-batch64", "ldp", 1.0): (320.0, 0.9)},
}


def test_the_targets_table_reads_each_boards_numbers():
    rows = ldp.target_rows(_curves(BOARDS)).set_index("board")
    lin, glm = rows.loc["heavy-tailed-d5k5"], rows.loc["glm-rare-direction-d5k5-s6"]
    assert lin["best private (95% CI)"].startswith("elim-ldp-vec 200") and lin["ours"] == "yes"
    assert lin["/ uniform"] == "0.2 (met: <= 0.3)" and lin["interval below it"] == "yes"
    assert lin["best prior work (95% CI)"].startswith("ldp-ucb-practical-batch64 900")
    assert lin["slope 2^18-2^20"] == "0.5 (met: < 0.75)"
    assert glm["/ uniform"] == "0.3 (met: <= 0.5)"
    assert glm["interval below it"] == "no"                       # 300 +- 5% against 320 +- 5%: they overlap
    assert glm["slope 2^18-2^20"] == "0.8 (missed: < 0.75)"
    read = ldp.readings(ldp.target_rows(_curves(BOARDS)), ldp.pick_rows(_curves(BOARDS)))
    assert any(line.startswith("- `glm-rare-direction-d5k5-s6` misses: slope 2^18-2^20, interval not below")
               for line in read)
    assert not any("meets every target" in line for line in read)


def test_a_prior_work_winner_and_a_missed_fraction_are_said():
    boards = {"spiky-d5k5": {("uniform", "none", INF): (1000.0, 1.0), ("elim-ldp-vec", "ldp", 1.0): (500.0, 0.6),
                             ("ldp-ucb-practical-batch64", "ldp", 1.0): (400.0, 0.6)}}
    targets = ldp.target_rows(_curves(boards))
    row = targets.iloc[0]
    assert row["ours"] == "no" and row["/ uniform"] == "0.4 (missed: <= 0.3)" and row["interval below it"] == "no"
    (line,) = [r for r in ldp.readings(targets, ldp.pick_rows(_curves(boards))) if "misses" in r]
    assert "best private agent not one of ours" in line and "/ uniform" in line


def test_the_picks_follow_the_horizon_and_epsilon():
    # elim-ldp-vec's slope 0.5 from 200 at T: at 2^14 it is 25, above ldp-ucb's 900 / 64 = 14
    picks = ldp.pick_rows(_curves(BOARDS)).set_index("board")
    lin = picks.loc["heavy-tailed-d5k5"]
    assert lin["T = 2^14"].startswith("ldp-ucb-practical-batch64") and lin["T = 2^20"] == "elim-ldp-vec 0.2x"
    assert lin["eps 0.3, T = 2^20"] == "elim-ldp-vec 0.7x"
    assert list(picks.columns) == ["T = 2^14", "T = 2^16", "T = 2^18", "T = 2^20", "eps 0.3, T = 2^20"]


def test_the_link_line_compares_the_glm_agent_with_its_linear_twin():
    (line,) = ldp.link_lines(_curves(BOARDS))
    assert "`glm-rare-direction-d5k5-s6`: 1.033 (the intervals overlap)" in line


def test_labels_are_sorted_into_ours_and_prior_work():
    assert ldp.is_ours("elim-ldp-vec") and ldp.is_ours("elim-glm-ldp-pooled") and not ldp.is_ours("elim-ldp")
    assert ldp.is_prior_work("ldp-ucb-practical-batch64") and ldp.is_prior_work("elim-ldp-ssp")
    assert not ldp.is_prior_work("elim-ldp-vec")


def test_the_command_line_refuses_missing_inputs(tmp_path):
    for argv in ([], [str(tmp_path)], ["--from-csv", str(tmp_path / "no.csv")]):
        with pytest.raises(SystemExit) as exc:
            ldp.main(argv)
        assert exc.value.code == 2


def test_the_command_line_writes_the_three_tables_from_a_csv(tmp_path):
    csv = tmp_path / "runs.csv"
    ldp.compact(_curves(BOARDS).assign(regret=0.0, epoch=0, epsilon_spent=1.0)).to_csv(csv, index=False)
    assert ldp.main(["--from-csv", str(csv), "--markdown", str(tmp_path / "md")]) == 0
    assert (tmp_path / "md" / "ldp_targets.md").read_text().startswith("| board |")
    assert "`elim-ldp-vec`" in (tmp_path / "md" / "ldp_readings.md").read_text()
