"""The results board's data and page (privbandit.report.board), without a browser: every number from the results."""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest

from privbandit import cli
from privbandit.bench.stored import stored_source
from privbandit.report.board import NO_BETTER, WORSE, BoardSource, board_data, board_html, thin_times
from privbandit.report.leaderboard import leaderboard
from privbandit.report.tables import final_regret, nonnegative_mean_ci

LOGGED = [1, 2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 64]
# agent -> (privacy model, epsilons, slope of its cumulative regret): "bad" is above uniform, "flat" at it
AGENTS = {"uniform": ("none", [math.inf], 1.0), "good": ("none", [math.inf], 0.2),
          "priv": ("jdp", [0.3, 1.0], None), "flat": ("jdp", [0.3, 1.0], 1.0), "bad": ("jdp", [0.3, 1.0], 2.0)}


def synthetic_table(seeds: int = 3, env: str = "toy") -> pd.DataFrame:
    """A results table with the runner's columns: regret growing linearly with t, per-seed offsets."""
    rows = []
    for agent, (model, epsilons, slope) in AGENTS.items():
        for eps in epsilons:
            s = slope if slope is not None else 0.3 + 0.1 / eps  # priv: its price falls with epsilon
            for seed in range(seeds):
                for t in LOGGED:
                    rows.append(dict(env=env, agent=agent, privacy_model=model, epsilon=eps,
                                     delta=0.0 if model == "none" else 1e-5, horizon=64, seed=seed, t=t,
                                     cum_regret=s * t * (1 + 0.05 * seed), epsilon_spent=0.0 if model == "none"
                                     else eps * (1 - 0.01 * seed)))
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def data():
    source = BoardSource(name="toy", table=synthetic_table(), command="privbandit bench --the-test",
                         notes=("2 of the suite's 9 cells left out: a test",), references={"priv": "good"})
    return board_data([source])


def test_thin_times_keeps_the_ends_and_at_most_per_octave_points_per_doubling():
    logged = sorted({int(round(2 ** (k / 8))) for k in range(161)})  # the runner's ~8 per doubling up to 2^20
    kept = thin_times(logged, per_octave=4)
    assert kept[0] == 1 and kept[-1] == 2 ** 20 and set(kept) <= set(logged)
    for k in range(20):
        assert sum(2 ** k <= t < 2 ** (k + 1) for t in kept) <= 4
    assert len(kept) < len(logged) * 0.6
    with pytest.raises(ValueError, match="per_octave"):
        thin_times(logged, per_octave=0)


def test_every_board_row_is_the_leaderboards_number(data):
    table = synthetic_table()
    board = leaderboard(table)
    assert len(data["boards"]) == board.groupby(["model", "epsilon"]).ngroups == 2
    for b in data["boards"]:
        mine = board[(board["epsilon"] == b["epsilon"])]
        assert [r["agent"] for r in b["rows"]] == list(mine["agent"])
        for r, (_, want) in zip(b["rows"], mine.iterrows()):
            assert r["rank"] == want["rank"] and r["mean"] == pytest.approx(want["mean"], rel=1e-5)
            assert r["low"] == pytest.approx(want["ci_low"], rel=1e-5)
        assert b["best_private"] == "priv" and b["best_public"] == "good" and b["seeds"] == [0, 1, 2]


def test_paired_differences_to_the_best_private_and_non_private_agent(data):
    b = data["boards"][0]
    rows = {r["agent"]: r for r in b["rows"]}
    eps = b["epsilon"]
    t = synthetic_table()
    end = t[t["t"] == 64]
    def seeds(agent):
        return end[(end["agent"] == agent) & (end["epsilon"].isin([eps, math.inf]))].set_index("seed")["cum_regret"]
    want = float((seeds("bad") - seeds("priv")).mean())
    assert rows["bad"]["vs_private"][0] == pytest.approx(want, rel=1e-5) and rows["bad"]["vs_private"][3] == 3
    assert rows["priv"]["vs_private"] is None and rows["good"]["vs_public"] is None
    assert rows["priv"]["vs_public"][0] == pytest.approx(float((seeds("priv") - seeds("good")).mean()), rel=1e-5)


def test_agents_at_or_above_uniform_are_marked(data):
    for b in data["boards"]:
        marks = {r["agent"]: r["flag"] for r in b["rows"]}
        assert marks == {"uniform": "", "good": "", "priv": "", "flat": NO_BETTER, "bad": WORSE}


def test_the_ledger_guarantee_is_the_worst_users_epsilon(data):
    for b in data["boards"]:
        rows = {r["agent"]: r for r in b["rows"]}
        assert rows["priv"]["ledger"] == pytest.approx(b["epsilon"]) and rows["good"]["ledger"] is None


def test_curves_are_the_mean_and_band_over_seeds_at_the_thinned_rounds(data):
    table = synthetic_table()
    curve = next(c for c in data["curves"] if c["agent"] == "priv" and c["epsilon"] == 0.3)
    assert curve["t"] == thin_times(LOGGED) and curve["n_seeds"] == 3
    at = table[(table["agent"] == "priv") & (table["epsilon"] == 0.3) & (table["t"] == 16)]["cum_regret"]
    m, lo, hi = nonnegative_mean_ci(at.to_numpy())
    i = curve["t"].index(16)
    assert curve["mean"][i] == pytest.approx(m, rel=1e-3) and curve["low"][i] == pytest.approx(lo, rel=1e-3)
    assert curve["high"][i] == pytest.approx(hi, rel=1e-3)
    for b in data["boards"]:  # every row's curve is its own agent's, at the board's level
        for r in b["rows"]:
            c = data["curves"][r["curve"]]
            assert c["agent"] == r["agent"] and c["epsilon"] == (b["epsilon"] if r["model"] != "none" else None)


def test_the_price_of_privacy_has_each_epsilon_and_the_counterpart(data):
    (price,) = data["price"]
    assert price["epsilons"] == [0.3, 1.0] and price["model"] == "jdp"
    agents = {a["agent"]: a for a in price["agents"]}
    assert agents["priv"]["counterpart"]["agent"] == "good" and agents["priv"]["counterpart"]["chosen"] == "reference"
    assert agents["bad"]["counterpart"]["chosen"] == "best non-private"  # no reference given: the best non-private
    final = final_regret(synthetic_table()).set_index(["agent", "epsilon"])
    for p in agents["priv"]["points"]:
        assert p["mean"] == pytest.approx(final.loc[("priv", p["epsilon"]), "mean"], rel=1e-5)
        assert data["curves"][p["curve"]]["epsilon"] == p["epsilon"]
    means = [p["mean"] for p in agents["priv"]["points"]]
    assert means[0] > means[1]  # the synthetic price falls with epsilon: the slider has something to move


def test_the_header_says_what_ran(data):
    (src,) = data["sources"]
    assert src["command"] == "privbandit bench --the-test" and src["seeds"] == [0, 1, 2] and src["horizons"] == [64]
    assert any("left out" in n for n in src["notes"]) and src["runs"] == 3 * 8


def test_colours_are_stable_across_pages(data):
    other = board_data([BoardSource(name="x", table=synthetic_table()[lambda d: d["agent"].isin(["bad", "good"])],
                                    command="c")])
    assert other["agents"]["bad"]["color"] == data["agents"]["bad"]["color"]
    assert all(re.fullmatch("#[0-9a-f]{6}", a["color"]) for a in data["agents"].values())


def test_the_page_is_self_contained_and_its_data_reads_back(data):
    evil = synthetic_table().replace({"agent": {"bad": "</script><script>alert(1)</script>"}})
    page = board_html(board_data([BoardSource(name="x", table=evil, command="c")]))
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=[\"']?(https?:)?//", page)
    assert page.count("</script>") == 3  # plotly, the data, the page's script, all inline: the label is escaped
    payload = re.search(r'<script id="board-data" type="application/json">(.*?)</script>', page, re.S).group(1)
    back = json.loads(payload)
    assert "</script><script>alert(1)</script>" in back["agents"]
    assert "NaN" not in payload and "Infinity" not in payload


def test_one_seed_has_no_band_and_no_interval():
    data = board_data([BoardSource(name="x", table=synthetic_table(seeds=1), command="c")])
    row = data["boards"][0]["rows"][0]
    assert row["low"] is None and all(r["vs_private"] is None or r["vs_private"][1:] == [None, None, 1]
                                      for r in data["boards"][0]["rows"])
    assert all(v is None for c in data["curves"] for v in c["low"])


def test_no_results_is_an_error():
    with pytest.raises(ValueError, match="no results"):
        board_data([BoardSource(name="x", table=synthetic_table().iloc[:0], command="c")])


def test_the_stored_quick_suite_names_every_agent():
    source = stored_source("quick")
    data = board_data([source])
    named = {r["agent"] for b in data["boards"] for r in b["rows"]}
    assert named == set(source.table["agent"]) == set(data["agents"])
    assert source.command.startswith("python scripts/store_reference.py") or "store-reference" in source.command
    assert {b["horizon"] for b in data["boards"]} == set(source.table["horizon"])


def test_the_board_command_errors_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["board", "--out", str(tmp_path / "b.html")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "--stored SUITE" in err
    with pytest.raises(SystemExit) as exc:
        cli.main(["board", str(tmp_path / "nothing"), "--out", str(tmp_path / "b.html")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "no results.csv" in err
    assert not (tmp_path / "b.html").exists()
    for out, why in ((tmp_path / "no" / "b.html", "no folder"), (tmp_path, "a folder")):
        with pytest.raises(SystemExit) as exc:
            cli.main(["board", "--stored", "quick", "--out", str(out)])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and err.count("\n") == 1 and why in err


def test_the_board_command_reads_a_folder_with_its_command_and_challenger(tmp_path, capsys):
    folder = tmp_path / "run"
    folder.mkdir()
    synthetic_table().to_csv(folder / "results.csv", index=False)
    (folder / "report.json").write_text(json.dumps({"notes": ["command: `privbandit bench --agent priv`", "a note"],
                                                    "references": {"priv": "good"}, "challenger": "priv",
                                                    "reference": "flat"}))
    out = tmp_path / "board.html"
    assert cli.main(["board", str(folder), "--out", str(out)]) == 0
    assert "board:" in capsys.readouterr().out
    page = out.read_text()
    data = json.loads(re.search(r'<script id="board-data" type="application/json">(.*?)</script>', page,
                                re.S).group(1))
    (src,) = data["sources"]
    assert src["command"] == "privbandit bench --agent priv" and src["notes"] == ["a note"]
    (cmp,) = data["comparisons"]
    assert cmp["challenger"] == "priv" and cmp["reference"] == "flat"
    first = cmp["rows"][0]
    assert first["baseline"] == "flat" and first["reference"] and first["verdict"] == "better"
    assert {r["baseline"] for r in cmp["rows"]} == {"flat", "bad", "good", "uniform"}


def test_every_view_marks_with_the_one_rule_and_names_the_best_private_agent(data):
    """The board, the leaderboard and report.md mark the same agents (privbandit.report.tables.uniform_mark)."""
    from privbandit.report.leaderboard import best_private_line, leaderboard_markdown, ranked_boards
    from privbandit.report.tables import headline_table

    table = synthetic_table()
    boards = ranked_boards([table])
    head = headline_table(final_regret(table))
    for b in data["boards"]:
        mine = boards[boards["epsilon"] == b["epsilon"]].set_index("agent")
        assert {r["agent"]: r["flag"] for r in b["rows"]} == mine["mark"].to_dict()
        at = head[head["epsilon"].isin([b["epsilon"], math.inf])].set_index("agent")["mark"].to_dict()
        assert at == mine["mark"].to_dict()
        assert set(mine["best_private"]) == {b["best_private"]} == {"priv"}
        rows = {r["agent"]: r for r in b["rows"]}
        for agent in ("bad", "flat", "good", "uniform"):  # the leaderboard's best-private column is the board's
            assert mine.loc[agent, "private_diff"] == pytest.approx(rows[agent]["vs_private"][0], rel=1e-5)
            assert mine.loc[agent, "private_n_paired"] == rows[agent]["vs_private"][3] == 3
    text = leaderboard_markdown(boards)
    assert text.count("Best private: `priv`, regret ") == 2 and "minus best private priv (paired 95% CI)" in text
    assert "| no better than uniform |" in text and "| worse than uniform |" in text
    # a board whose best private agent plays like uniform: its line says so
    flat = ranked_boards([table[table["agent"].isin(["uniform", "good", "flat", "bad"])]])
    line = best_private_line(flat[flat["epsilon"] == 1.0])
    assert line.startswith("Best private: `flat`, regret ") and f"(**{NO_BETTER}**)" in line
    only_public = ranked_boards([table[table["privacy_model"] == "none"]])
    assert best_private_line(only_public) == "No private agent on this board."
    assert "Best private" not in leaderboard_markdown(only_public)


def test_a_board_whose_best_private_agent_is_at_uniform_marks_it():
    table = synthetic_table()
    data = board_data([BoardSource(name="t", table=table[table["agent"] != "priv"], command="c")])
    for b in data["boards"]:
        best = next(r for r in b["rows"] if r["agent"] == b["best_private"])
        assert b["best_private"] == "flat" and best["flag"] == NO_BETTER


def test_the_board_header_says_what_ran_in_the_reports_words():
    from privbandit.report.tables import what_ran

    table = synthetic_table(seeds=2)
    (src,) = board_data([BoardSource(name="t", table=table, command="c")])["sources"]
    assert src["ran"] == what_ran(table) and "T = 64 (2^6); 2 seeds per agent, env and level (seeds 0, 1)" in src["ran"]
