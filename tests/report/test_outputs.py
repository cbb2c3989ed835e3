"""What a reader sees: the report's summary, per-horizon and price tables, its intervals, the challenger figure's
grid, log ticks."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pandas as pd
import pytest

from privbandit.report.compare import challenger_figure
from privbandit.report.figures import log_ticks
from privbandit.report.tables import final_regret_tables, price_of_privacy, summary_table, write_report

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


def _priced():
    """Final regrets of one env: uniform play, two non-private references, and private agents that are dearer than
    their reference, cheaper than it, and exactly at uniform play's regret (3815, the issue's elim-jdp)."""
    rows = [("uniform", "none", np.inf, 3815.0, 3790.0, 3840.0), ("np", "none", np.inf, 100.0, 90.0, 110.0),
            ("np-flat", "none", np.inf, 3800.0, 3700.0, 3900.0),
            ("dear", "jdp", 1.0, 300.0, 250.0, 350.0), ("cheap", "jdp", 1.0, 52.44, 40.0, 65.0),
            ("close", "jdp", 0.3, 95.0, 80.0, 112.0), ("flat", "jdp", 1.0, 3815.0, 3790.0, 3840.0),
            ("flat-too", "ldp", 1.0, 3830.0, 3700.0, 3950.0)]
    final = pd.DataFrame(rows, columns=["agent", "privacy_model", "epsilon", "mean", "ci_low", "ci_high"])
    return final.assign(env="e", horizon=64, delta=1e-5, n_seeds=3, n_planned=3, few_seeds=False, incomplete=False)


def test_the_price_table_flags_a_ratio_below_1_and_agents_at_uniform_play():
    refs = {"dear": "np", "cheap": "np", "close": "np", "flat": "np", "flat-too": "np-flat"}
    pop = price_of_privacy(_priced(), refs).set_index("agent")
    assert pop.loc["cheap", "ratio"] == pytest.approx(0.5244)
    for agent in pop.index:  # every row whose ratio is below 1, or whose agent is at uniform's regret, says so
        below, flat = pop.loc[agent, "ratio"] < 1, pop.loc[agent, "regret"] >= 3790.0
        assert ("ratio below 1" in pop.loc[agent, "note"]) == below, agent
        assert ("no better than uniform play" in pop.loc[agent, "note"]) == flat, agent
    assert pop.loc["dear", "note"] == ""
    assert "beyond both 95% intervals" in pop.loc["cheap", "note"]
    assert "within noise" in pop.loc["close", "note"]
    # flat-too's own algorithm (np-flat) is at uniform play, but its price is against the best non-private agent
    assert pop.loc["flat-too", "reference"] == "np" and pop.loc["flat-too", "same_algorithm"] == "np-flat"
    assert pop.loc["flat-too", "same_algorithm_ratio"] == pytest.approx(3830.0 / 3800.0)
    # a board whose best non-private agent did not learn says that its ratios are no price of privacy
    stuck = price_of_privacy(_priced()[lambda f: f["agent"] != "np"], refs).set_index("agent")
    assert "the best non-private agent is no better than uniform play" in stuck.loc["dear", "note"]
    # without uniform play in the table, there is nothing to compare with
    alone = price_of_privacy(_priced()[lambda f: f["agent"] != "uniform"], refs).set_index("agent")
    assert alone.loc["flat", "note"] == "" and "ratio below 1" in alone.loc["cheap", "note"]


def _mixed_counterparts() -> pd.DataFrame:
    """The issue's board: two non-private agents of different algorithms (a UCB one, the best, and a plain one) and
    private agents whose same-algorithm counterparts differ, as elim-jdp-pooled (elim-ucb) and elim-ldp-pooled and
    elim-ldp-greedy (elim-nonprivate) did in the quick suite: the best LDP agent is 118x the best non-private."""
    rng = np.random.default_rng(5)
    rows = []
    for agent, model, eps, level in (("uniform", "none", np.inf, 30000.0), ("elim-ucb", "none", np.inf, 83.5),
                                     ("elim-nonprivate", "none", np.inf, 1850.0), ("jdp-ucb", "jdp", 1.0, 238.4),
                                     ("ldp-plain", "ldp", 1.0, 9909.0), ("ldp-greedy", "ldp", 1.0, 9852.0)):
        for seed in range(3):
            rows.append(dict(env="e", agent=agent, privacy_model=model, epsilon=eps, delta=1e-5, horizon=64,
                             seed=seed, t=64, cum_regret=level * (1 + 0.01 * rng.standard_normal()),
                             epsilon_spent=0.0 if model == "none" else 1.0))
    return pd.DataFrame(rows)


MIXED_REFERENCES = {"jdp-ucb": "elim-ucb", "ldp-plain": "elim-nonprivate", "ldp-greedy": "elim-nonprivate"}


def test_every_price_is_against_the_best_nonprivate_agent_and_the_summary_is_its_lowest():
    from privbandit.report.tables import best_nonprivate, final_regret

    final = final_regret(_mixed_counterparts())
    pop = price_of_privacy(final, MIXED_REFERENCES)
    best = best_nonprivate(final)[("e", 64)]
    assert best["agent"] == "elim-ucb" and set(pop["reference"]) == {"elim-ucb"}
    assert np.allclose(pop["ratio"], pop["regret"] / best["mean"])
    # the same-algorithm ratio is a column of its own, never the price
    assert pop.set_index("agent").loc["ldp-plain", "same_algorithm_ratio"] == pytest.approx(9909 / 1850, rel=0.05)
    summary = summary_table(final)
    for row in summary.itertuples():
        block = pop[(pop["privacy_model"] == row.privacy_model) & (pop["epsilon"] == row.epsilon)]
        assert row.ratio == pytest.approx(block["ratio"].min()), row.privacy_model
    assert summary.set_index("privacy_model").loc["ldp", "ratio"] == pytest.approx(9852 / 83.5, rel=0.05)


def test_the_report_says_what_every_price_is_against_and_agrees_with_its_summary(tmp_path):
    text = write_report(_mixed_counterparts(), tmp_path, references=MIXED_REFERENCES).read_text()
    summary = text.split("## Summary", 1)[1].split("## Final regret")[0]
    price = text.split("## Price of privacy", 1)[1].split("## Privacy ledgers")[0]
    assert "price (ratio to best non-private)" in price and "best non-private agent of the same env and T" in price

    def cells(section: str, header: str) -> dict[str, list[str]]:
        lines = [line for line in section.splitlines() if line.startswith("|")]
        names = [c.strip() for c in lines[0].strip("|").split("|")]
        rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]
        return {r[names.index(header)]: r for r in rows}, names

    price_rows, price_names = cells(price, "agent")
    summary_rows, summary_names = cells(summary, "best private")
    assert {r[price_names.index("best non-private")] for r in price_rows.values()} == {"elim-ucb"}
    for agent, row in summary_rows.items():  # the Summary's ratio is the price table's, for the same agent
        assert row[summary_names.index("ratio")] == price_rows[agent][price_names.index(
            "price (ratio to best non-private)")], agent
    assert summary_rows["ldp-greedy"][summary_names.index("ratio")].startswith("11")  # ~118, not 5.3


def test_each_suite_reference_is_its_agent_without_privacy_playing_the_same_rule():
    """A suite's reference is the same algorithm without privacy (the price table's `same algorithm`): an
    elimination agent's reference plays its rule among the survivors (elim-ldp-pooled plays UCB: elim-ucb)."""
    from privbandit.agents import make_agent
    from privbandit.bench.labels import resolve_label
    from privbandit.bench.suites import SUITES

    checked = set()
    for suite in SUITES.values():
        for grid in suite.grids:
            for entry in grid.agents:
                if not entry.reference or (entry.label, entry.reference) in checked:
                    continue
                checked.add((entry.label, entry.reference))
                private = make_agent(entry.name, **dict(entry.kwargs), epsilon=1.0, delta=1e-5)
                name, kwargs = resolve_label(entry.reference)
                plain = make_agent(name, **kwargs)
                if hasattr(private, "play") and hasattr(plain, "play"):
                    assert private.play == plain.play, (entry.label, entry.reference)
    assert ("elim-ldp-pooled", "elim-ucb") in checked and ("elim-jdp-pooled", "elim-ucb") in checked


def test_the_report_prints_the_price_notes(tmp_path):
    rng = np.random.default_rng(3)
    rows = []
    for agent, model, eps, level in (("uniform", "none", np.inf, 1000.0), ("elim-nonprivate", "none", np.inf, 200.0),
                                     ("elim-jdp", "jdp", 1.0, 1000.0), ("elim-jdp-ucb", "jdp", 1.0, 100.0)):
        for seed in range(3):
            value = level if agent in ("uniform", "elim-jdp") else level * (1 + 0.05 * rng.standard_normal())
            rows.append(dict(env="e", agent=agent, privacy_model=model, epsilon=eps, delta=1e-5, horizon=64,
                             seed=seed, t=64, cum_regret=value, epsilon_spent=0.0 if model == "none" else 1.0))
    path = write_report(pd.DataFrame(rows), tmp_path, references={"elim-jdp": "elim-nonprivate",
                                                                  "elim-jdp-ucb": "elim-nonprivate"})
    price = path.read_text().split("## Price of privacy", 1)[1].split("## Privacy ledgers")[0]
    line = {row.split("|")[2].strip(): row for row in price.splitlines() if row.startswith("| e |")}
    assert "no better than uniform play" in line["elim-jdp"] and "ratio below 1" not in line["elim-jdp"]
    assert "ratio below 1" in line["elim-jdp-ucb"] and "uniform" not in line["elim-jdp-ucb"]
    assert "best non-private agent" in line["elim-jdp-ucb"]


def test_regret_intervals_stay_above_zero_and_match_the_figures_band():
    from privbandit.report.figures import nonnegative_band
    from privbandit.report.tables import nonnegative_mean_ci

    values = np.array([0.0, 0.0, 1.0, 30.0])
    m, low, high = nonnegative_mean_ci(values)
    assert 0 < low < m < high and np.isclose(low * high, m * m)  # symmetric on a log axis
    assert nonnegative_band(values) == (low, high)
    assert nonnegative_mean_ci(np.zeros(3)) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="non-negative"):
        nonnegative_mean_ci(np.array([1.0, -1.0]))


def _runs(agent: str, epsilon: float, per_round: list[float], seeds: int = 2) -> pd.DataFrame:
    """Cumulative-regret rows logged at every power of two, ``per_round[k]`` the regret of each round in
    (2^(k-1), 2^k] (round 1 for k = 0)."""
    rows = []
    for seed in range(seeds):
        cum, t = 0.0, 1
        for k, r in enumerate(per_round):
            cum += r * (1 if k == 0 else t // 2)
            rows.append(dict(env="e", agent=agent, privacy_model="none" if math.isinf(epsilon) else "jdp",
                             epsilon=epsilon, delta=1e-5, seed=seed, horizon=2 ** (len(per_round) - 1), t=t,
                             cum_regret=cum))
            t *= 2
    return pd.DataFrame(rows)


def test_the_price_over_time_is_the_ratio_of_mean_regrets_and_of_the_recent_rounds():
    from privbandit.report.tables import price_over_time

    n = 15                                                   # rounds 1 .. 2^14
    private = [1.0] * 13 + [0.1, 0.1]                        # pays as the reference until 2^12, then 10x less
    df = pd.concat([_runs("p", 1.0, private), _runs("p", 0.3, [1.0] * n), _runs("ref", math.inf, [1.0] * n),
                    _runs("worse", math.inf, [2.0] * n)])
    pot = price_over_time(df).set_index(["epsilon", "t"])
    assert set(pot["reference"]) == {"ref"}                  # the best non-private agent, not the worse one
    assert sorted(pot.index.get_level_values("t").unique()) == [2 ** 12, 2 ** 14]
    assert pot.loc[(0.3, 2 ** 14), "ratio"] == pytest.approx(1.0)
    assert pot.loc[(1.0, 2 ** 12), "ratio"] == pytest.approx(1.0)
    # rounds (2^12, 2^14]: 2^12 + 2^13 rounds at 0.1 against 1.0
    assert pot.loc[(1.0, 2 ** 14), "recent_ratio"] == pytest.approx(0.1)
    assert pot.loc[(1.0, 2 ** 14), "ratio"] == pytest.approx((2 ** 12 + 0.1 * 3 * 2 ** 12) / 2 ** 14)
    assert price_over_time(df[df["agent"] != "p"]).empty and price_over_time(df[df["agent"] == "p"]).empty


# ---- marks against uniform play, best private lines, headers that say what ran (issue 48) ----

def _marked_table() -> pd.DataFrame:
    """One board of three seeds: uniform play, a non-private agent that learns, and private agents exactly at
    uniform's regret (the issue's elim-ldp on digits, 29,515), wholly above it, and clearly below it."""
    rows = []
    for agent, model, eps, levels in (("uniform", "none", np.inf, [29400.0, 29515.0, 29630.0]),
                                      ("learns", "none", np.inf, [900.0, 1000.0, 1100.0]),
                                      ("flat", "ldp", 1.0, [29400.0, 29515.0, 29630.0]),
                                      ("bad", "ldp", 1.0, [39000.0, 40000.0, 41000.0]),
                                      ("good", "ldp", 1.0, [4900.0, 5000.0, 5100.0])):
        for seed, value in enumerate(levels):
            rows.append(dict(env="digits", agent=agent, privacy_model=model, epsilon=eps, delta=1e-5, horizon=64,
                             seed=seed, t=64, cum_regret=value, epsilon_spent=0.0 if model == "none" else eps))
    return pd.DataFrame(rows)


def test_the_mark_against_uniform_is_one_rule_of_the_intervals():
    from privbandit.report.tables import NO_BETTER, WORSE, uniform_mark

    u = (100.0, 90.0, 110.0)
    assert uniform_mark(u, u) == NO_BETTER                                   # exactly uniform's numbers
    assert uniform_mark((60.0, 40.0, 90.0), u) == NO_BETTER                  # its interval reaches uniform's low end
    assert uniform_mark((60.0, 40.0, 89.9), u) == ""                         # wholly below: it beats uniform play
    assert uniform_mark((150.0, 110.1, 200.0), u) == WORSE                   # wholly above
    assert uniform_mark((150.0, 105.0, 200.0), u) == NO_BETTER               # overlapping from above: not "worse"
    assert uniform_mark((150.0, math.nan, math.nan), u) == NO_BETTER         # one seed: never "worse"
    assert uniform_mark((89.0, math.nan, math.nan), u) == ""
    assert uniform_mark((99.5, 90.0, 99.5), (100.0, math.nan, math.nan)) == NO_BETTER  # 1% below one-seed uniform
    assert uniform_mark((98.0, 90.0, 98.0), (100.0, math.nan, math.nan)) == ""
    assert uniform_mark(u, None) == ""                                       # no uniform play on the board
    with pytest.raises(ValueError, match="rel must be in"):
        uniform_mark(u, u, rel=1.0)


def test_the_report_marks_agents_at_and_above_uniform_and_its_best_private_says_so(tmp_path):
    from privbandit.report.tables import NO_BETTER, WORSE, final_regret, headline_table, summary_table

    df = _marked_table()
    final = final_regret(df)
    marks = dict(zip(headline_table(final)["agent"], headline_table(final)["mark"]))
    assert marks == {"uniform": "", "learns": "", "flat": NO_BETTER, "bad": WORSE, "good": ""}
    # without the agent that learns, the best private agent is the one at uniform play: the Summary marks it
    only_flat = final[final["agent"].isin(["uniform", "learns", "flat", "bad"])]
    (row,) = summary_table(only_flat).itertuples(index=False)
    assert row[4] == "flat" and row.mark == NO_BETTER and row[6].startswith("29515 [")
    text = write_report(df[df["agent"] != "good"], tmp_path).read_text()
    summary = text.split("## Summary", 1)[1].split("## Final regret")[0]
    assert "| flat | 29515 [" in summary and summary.rstrip().endswith(f"| {NO_BETTER} |")
    final_section = text.split("## Final regret", 1)[1].split("## Log-log")[0]
    assert f"| {WORSE} |" in final_section and final_section.count(f"| {NO_BETTER} |") == 1
    price = text.split("## Price of privacy", 1)[1].split("## Privacy ledgers")[0]
    line = {r.split("|")[2].strip(): r for r in price.splitlines() if r.startswith("| digits |")}
    assert "no better than uniform play" in line["flat"] and "worse than uniform play" in line["bad"]


def test_a_shrunk_report_says_its_seeds_and_horizon_from_the_table(tmp_path):
    from privbandit.report.tables import what_ran

    df = _marked_table().query("seed < 2").assign(horizon=4096, t=4096)
    line = what_ran(df)
    assert line == "ran: 10 runs of 5 agents on 1 env; T = 4096 (2^12); 2 seeds per agent, env and level (seeds 0, 1)"
    header = write_report(df, tmp_path, notes=["command: `x`"]).read_text().split("## Summary")[0]
    assert header.splitlines()[2] == f"- {line}" and "- command: `x`" in header


@pytest.mark.slow
def test_the_suite_note_names_what_a_shrunk_run_left_out():
    from dataclasses import replace

    from privbandit.bench.suites import QUICK

    grids = QUICK.available_grids()
    assert QUICK.shrunk_from(QUICK) is None
    assert QUICK.header_notes(QUICK) == [f"suite `quick`: {QUICK.description}"]
    small = replace(QUICK, grids=tuple(replace(g, seeds=2, horizon=4096) for g in grids))
    change, described = small.header_notes(QUICK)
    designed = len(QUICK.cells())
    run = {(c.agent.label, c.env.label, c.epsilon, c.seed) for c in small.cells()}
    assert change.startswith("this command ran suite `quick` with 2 seeds (0, 1) per cell")
    assert "T = 4096 (the suite: 2^16 or 2^14)" in change
    assert f"{designed - len(run)} of the suite's {designed} cells left out (seeds 2, 3)" in change
    assert described == f"suite `quick` as designed (not what ran): {QUICK.description}"
    fewer = replace(QUICK, grids=tuple(replace(g, agents=tuple(a for a in g.agents if a.label != "elim-jdp"),
                                               epsilons=(1.0,)) for g in grids))
    said = fewer.shrunk_from(QUICK)
    assert "epsilon = 1 (the suite: 0.3 or 1)" in said and "agents elim-jdp;" in said and "epsilon 0.3" in said
    assert "seeds" not in said and "T =" not in said


@pytest.mark.slow
def test_bench_shrunk_says_what_ran_in_its_report_and_board(tmp_path):
    import json
    import re

    from privbandit import cli

    out = tmp_path / "small"
    assert cli.main(["bench", "--suite", "quick", "--seeds", "2", "--horizon", "64", "--agents",
                     "uniform,elim-jdp,elim-nonprivate", "--envs", "heavy-tailed-d5k5", "--jobs", "1", "--no-progress",
                     "--out", str(out)]) == 0
    header = (out / "report.md").read_text().split("## Summary")[0]
    assert "- ran: 8 runs of 3 agents on 1 env; T = 64 (2^6); 2 seeds per agent, env and level (seeds 0, 1)" in header
    assert "this command ran suite `quick` with 2 seeds (0, 1) per cell" in header and "T = 64 (the suite:" in header
    assert "cells left out (agents " in header and "envs cbify-digits-pca4, rare-direction-d5k5" in header
    assert "suite `quick` as designed (not what ran)" in header
    page = (out / "board.html").read_text()
    data = json.loads(re.search(r'<script id="board-data" type="application/json">(.*?)</script>', page,
                                re.S).group(1))
    (src,) = data["sources"]
    assert "T = 64 (2^6); 2 seeds" in src["ran"] and any(n.startswith("this command ran suite") for n in src["notes"])


def test_a_challengers_leaderboard_marks_agents_against_uniform():
    from privbandit.report.compare import comparison_markdown
    from privbandit.report.tables import NO_BETTER, WORSE

    text = comparison_markdown(_marked_table(), "good")
    board = text.split("## Leaderboard", 1)[1]
    rows = {r.split("|")[6].strip(): r for r in board.splitlines() if r.startswith("| digits |")}
    assert rows["flat"].rstrip().endswith(f"| {NO_BETTER} |") and rows["bad"].rstrip().endswith(f"| {WORSE} |")
    assert rows["good"].rstrip().endswith("|  |") and rows["uniform"].rstrip().endswith("|  |")
