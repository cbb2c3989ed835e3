"""Challenger runs, paired comparisons and the leaderboard (privbandit.report.compare, bench --agent)."""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from privbandit import cli
from privbandit.agents import AGENT_REGISTRY
from privbandit.bench import AgentEntry, EnvEntry, Grid
from privbandit.bench.challenger import challenge, challenger_entry
from privbandit.bench.suites import Suite
from privbandit.report.compare import BETTER, NOT_SEPARABLE, WORSE, challenger_summary, paired_comparison
from privbandit.report.leaderboard import leaderboard

NONE = ("none", math.inf, 0.0)


def _table(runs: dict) -> pd.DataFrame:
    """A results table with only the final rows: {(agent, (model, eps, delta)): [regret of seed 0, 1, ...]}."""
    rows = []
    for (agent, (model, eps, delta)), regrets in runs.items():
        for seed, r in enumerate(regrets):
            if r is None:
                continue
            rows.append(dict(env="e", agent=agent, privacy_model=model, epsilon=eps, delta=delta, horizon=64,
                             seed=seed, t=64, cum_regret=float(r), epsilon_spent=0.0))
    return pd.DataFrame(rows)


def test_paired_intervals_are_correct_on_a_known_table():
    base = np.array([100.0, 250.0, 400.0, 180.0])   # large seed-to-seed spread, shared by both agents
    jdp = ("jdp", 1.0, 1e-5)
    table = _table({("new", jdp): base - [2, 4, 3, 3],          # d = -2, -4, -3, -3: better on every seed
                    ("base", jdp): base,
                    ("worse-than", jdp): base - [12, 14, 13, 13],  # d = +10 on every seed: worse
                    ("near", jdp): base - [3, -1, 6, 0],          # d = +1, -5, +3, -3: not separable
                    ("ref", NONE): [*(base[:3] - 4), None],       # non-private: joins, paired on 3 seeds only
                    ("other-eps", ("jdp", 0.3, 1e-5)): base,      # another level: not compared
                    ("local", ("ldp", 1.0, 1e-5)): base})         # another model: not compared
    cmp = paired_comparison(table, "new", reference="ref").set_index("baseline")
    assert set(cmp.index) == {"base", "worse-than", "near", "ref"}
    half = stats.t.ppf(0.975, 3) * math.sqrt(2 / 3) / 2             # sd of (-2, -4, -3, -3) is sqrt(2/3)
    row = cmp.loc["base"]
    assert row["mean_diff"] == pytest.approx(-3.0) and row["n_seeds"] == 4 and row["wins"] == 4
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((-3 - half, -3 + half))
    assert row["ratio"] == pytest.approx((base.mean() - 3) / base.mean()) and row["verdict"] == BETTER
    assert cmp.loc["worse-than", "verdict"] == WORSE and cmp.loc["worse-than", "wins"] == 0
    assert cmp.loc["near", "verdict"] == NOT_SEPARABLE and cmp.loc["near", "wins"] == 2
    ref = cmp.loc["ref"]  # d = +2, 0, +1 on the three shared seeds
    assert ref["n_seeds"] == 3 and ref["mean_diff"] == pytest.approx(1.0) and bool(ref["reference"])
    assert paired_comparison(table, "new", reference="ref")["baseline"].iloc[0] == "ref"  # the reference first
    # an unpaired interval (difference of two independent means) could not separate "base" at these seeds
    unpaired = stats.ttest_ind(table[table.agent == "new"].cum_regret, table[table.agent == "base"].cum_regret)
    assert unpaired.pvalue > 0.5


def test_one_seed_is_never_separable():
    table = _table({("new", NONE): [1.0], ("base", NONE): [100.0]})
    row = paired_comparison(table, "new").iloc[0]
    assert math.isnan(row["ci_low"]) and row["verdict"] == NOT_SEPARABLE and row["wins"] == 1
    with pytest.raises(ValueError, match="no run of the challenger 'absent'"):
        paired_comparison(table, "absent")


def test_the_summary_compares_with_the_reference_or_the_strongest_private_baseline():
    jdp = ("jdp", 1.0, 1e-5)
    table = _table({("new", jdp): [20, 22, 24], ("weak", jdp): [50, 55, 60], ("strong", jdp): [10, 12, 11],
                    ("ref", jdp): [30, 30, 30], ("oracle", NONE): [1, 1, 1]})
    row = challenger_summary(table, "new").iloc[0]   # the best private baseline, not the non-private one
    assert (row["baseline"], row["rank"], row["regret"]) == ("strong", "3/5", pytest.approx(22.0))
    assert row["verdict"] == WORSE and row["wins"] == 0
    row = challenger_summary(table, "new", reference="ref").iloc[0]
    assert row["baseline"] == "ref" and row["verdict"] == BETTER and row["mean_diff"] == pytest.approx(-8.0)
    alone = _table({("new", jdp): [20, 22, 24], ("oracle", NONE): [1, 1, 1]})
    assert challenger_summary(alone, "new")["baseline"].tolist() == ["oracle"]  # none private: any baseline


def test_leaderboard_ranks_per_model_and_level_with_the_non_private_agents():
    jdp = ("jdp", 1.0, 1e-5)
    table = _table({("a", jdp): [30, 30, 30], ("b", jdp): [10, 10, 10], ("c", NONE): [20, 20, 20],
                    ("d", ("ldp", 1.0, 1e-5)): [5, 5, 5]})
    board = leaderboard(table)
    jdp_board = board[board["model"] == "jdp"]
    assert list(jdp_board["agent"]) == ["b", "c", "a"] and list(jdp_board["rank"]) == [1, 2, 3]
    assert list(board[board["model"] == "ldp"]["agent"]) == ["d", "c"]


ENV = EnvEntry("rd", "PrivLinCB-v0", dict(family="rare-direction", dim=3, n_arms=3))
TINY = Suite("tiny", "a joint-DP and a local-DP block", (
    Grid((AgentEntry("uniform", private=False), AgentEntry("elim-jdp", private=True)), (ENV,), epsilons=(1.0,),
         seeds=2, horizon=32),
    Grid((AgentEntry("elim-ldp", private=True),), (ENV,), epsilons=(1.0,), seeds=2, horizon=32)))


@pytest.fixture
def jdp_copy():
    """A user's joint-DP agent, registered like a plugin (removed afterwards)."""
    from privbandit.agents import make_agent, register_agent

    def make(*, epsilon, delta=1e-5):
        return make_agent("elim-jdp", epsilon=epsilon, delta=delta)

    register_agent("jdp-copy", make, privacy="jdp")
    yield "jdp-copy"
    AGENT_REGISTRY.unregister("jdp-copy")


@pytest.mark.slow
def test_challenge_joins_the_blocks_its_model_fits_and_resumes(tmp_path, jdp_copy):
    first = challenge(TINY, jdp_copy, tmp_path, reference="elim-jdp", seeds=(4, 7))
    runs = first.table.drop_duplicates(["agent", "seed"])
    assert set(runs["agent"]) == {"uniform", "elim-jdp", "jdp-copy"}  # not the local-DP block
    assert set(runs["seed"]) == {4, 7} and len(first.result.ran) == 6
    cmp = first.comparison().set_index("baseline")
    assert cmp.loc["elim-jdp", "mean_diff"] == 0.0  # the same agent on the same seeds: common random numbers
    assert first.leaderboard()["agent"].tolist().count("jdp-copy") == 1
    again = challenge(TINY, jdp_copy, tmp_path, reference="elim-jdp", seeds=(4, 7))
    assert again.result.ran == [] and len(again.result.skipped) == 6


def test_challenge_refuses_a_wrong_claim_or_reference(tmp_path, jdp_copy):
    with pytest.raises(ValueError, match="claims 'ldp' privacy but its registration says 'jdp'"):
        challenger_entry(jdp_copy, private="ldp")
    with pytest.raises(ValueError, match="reference must be a baseline .* got 'elim-ldp'"):
        challenge(TINY, jdp_copy, tmp_path, reference="elim-ldp")
    with pytest.raises(ValueError, match="label 'uniform' is a baseline's"):
        challenge(TINY, "uniform", tmp_path)


@pytest.mark.slow
def test_bench_agent_adds_the_comparison_and_leaderboard(tmp_path, capsys, jdp_copy):
    out = tmp_path / "bench"
    code = cli.main(["bench", "--suite", "quick", "--agent", jdp_copy, "--private", "jdp", "--reference", "elim-jdp",
                     "--seeds", "2", "--horizon", "16", "--jobs", "1", "--no-progress", "--out", str(out)])
    assert code == 0
    report = (out / "report.md").read_text()
    assert "## Challenger: paired comparison" in report and "## Leaderboard" in report
    printed = capsys.readouterr().out  # one line per board: rank and the comparison with the reference
    lines = [line for line in printed.splitlines() if line.startswith("| ") and "elim-jdp |" in line]
    assert "| rank | regret | baseline |" in printed and len(lines) == len(set(lines)) > 0
    assert "challenger.png" in report and (out / "figures" / "challenger.png").is_file()
    capsys.readouterr()
    for args, message in ((["--reference", "elim-jdp"], "give it with --agent"),
                          (["--agent", "nope"], "--agent nope: unknown agent 'nope'"),
                          (["--agent", "no_such_mod_q:make"], "cannot import 'no_such_mod_q'"),
                          (["--agent", jdp_copy, "--private", "ldp"], "claims 'ldp' privacy"),
                          (["--agent", jdp_copy, "--reference", "squarecb-ldp-sgd"], "--reference must be a baseline")):
        with pytest.raises(SystemExit) as exc:
            cli.main(["bench", "--seeds", "1", "--horizon", "8", "--no-progress", "--out", str(out), *args])
        err = capsys.readouterr().err.strip().splitlines()
        assert exc.value.code == 2 and len(err) == 1 and message in err[0], err


README_FACTORY = '''
from privbandit.agents import make_agent

def make(*, epsilon, delta=1e-5):  # the README's challenger: a factory around a registered agent
    return make_agent("elim-jdp-ucb", epsilon=epsilon, delta=delta, first_epoch=1)
'''


@pytest.fixture
def plugin_site(tmp_path, monkeypatch):
    """The example plugin installed as pip would leave it (entry point ``my-agent``), and a module
    ``readme_agent`` holding the README's factory, on the import path (their registrations undone afterwards)."""
    pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11")
    from conftest import install_example_plugin

    folders = install_example_plugin(tmp_path / "site")
    (tmp_path / "site" / "readme_agent.py").write_text(README_FACTORY)
    for folder in reversed(folders):
        monkeypatch.syspath_prepend(folder)
    yield folders
    for name in ("my-agent", "my_agent:make_agent", "readme_agent:make"):
        AGENT_REGISTRY.unregister(name)


def _challenger_block(page) -> str:
    """The Python block of ``page`` that registers the challenger ``my-agent`` and runs :func:`challenge`."""
    from conftest import fenced_blocks

    blocks = [body for _, tag, body in fenced_blocks(page.read_text(encoding="utf-8"))
              if tag == "python" and 'register_agent("my-agent"' in body and "challenge(" in body]
    assert len(blocks) == 1, f"{page.name}: the challenger example went missing"
    return blocks[0]


@pytest.mark.slow
@pytest.mark.parametrize("page", ["README.md", "docs/guide/cli.md"])
def test_the_challenger_examples_keep_their_registered_label_beside_an_installed_plugin(page, plugin_site,
                                                                                         monkeypatch, tmp_path):
    """The README's and the CLI guide's examples register ``my-agent`` (a factory around ``elim-jdp-ucb``) and
    run it beside the baselines, which all run again (``challenge`` stores none): on a machine where the
    example plugin's entry point ``my-agent`` is installed too, the label is still the registered one. The
    README's prints a different difference at each epsilon of an env (at 64 rounds heavy-tailed's were equal)."""
    from conftest import ROOT, run_block

    code = _challenger_block(ROOT / page) + ('\nagents = set(result.table["agent"])\n'
                                             'assert {"my-agent", "elim-jdp-ucb"} <= agents, agents\n')
    if page == "README.md":  # its sizes show epsilon: each env run at two epsilons prints two differences
        code += ('rows = table[table["reference"]]\n'
                 'many = rows.groupby("env")["epsilon"].nunique() > 1\n'
                 'assert many.any() and (rows.groupby("env")["mean_diff"].nunique()[many] > 1).all(), rows\n')
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(plugin_site))
    proc = run_block(code, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_a_factory_around_a_registered_agent_is_not_labelled_with_its_name(plugin_site):
    """The README's factory by import path takes the path's attribute, not ``elim-jdp-ucb``; the example
    plugin is ``my-agent`` by import path (its agent's name) and by entry point; a registered name is itself."""
    from privbandit.bench.labels import agent_name

    names = {a: agent_name(a) for a in ("readme_agent:make", "my_agent:make_agent", "my-agent", "elim-jdp-ucb")}
    assert names == {"readme_agent:make": "make", "my_agent:make_agent": "my-agent", "my-agent": "my-agent",
                     "elim-jdp-ucb": "elim-jdp-ucb"}
    assert agent_name("readme_agent:make", {"first_epoch": 2}) == "make"
    assert challenger_entry("readme_agent:make", private="jdp", label="mine").label == "mine"


@pytest.mark.slow
def test_bench_labels_a_challenger_with_the_name_it_is_given_when_the_baselines_run_again(plugin_site, tmp_path):
    """A factory around a registered agent (the README's, by import path) is not labelled with that agent's
    name, whether the baselines run again or the stored ones are tried: by default the import path's
    attribute, else ``--label``."""
    import pandas as pd

    out = tmp_path / "bench"
    for extra, label in ((["--baselines", "rerun"], "make"), (["--label", "mine"], "mine")):
        code = cli.main(["bench", "--suite", "quick", "--agent", "readme_agent:make", "--private", "jdp", "--reference",
                         "elim-jdp-ucb", "--seeds", "2", "--horizon", "16", "--no-progress", "--out", str(out), *extra])
        assert code == 0
        agents = pd.read_csv(out / "results.csv", usecols=["agent"])["agent"]
        assert (agents == label).any() and (agents == "elim-jdp-ucb").any()
        assert f"challenger {label}" in (out / "report.md").read_text()
