"""The privbandit command: list, run, plot, bench, and exit code 2 with a clear message on bad arguments."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from privbandit import cli
from privbandit.sim.sweep import read_cell


def _main(args, capsys):
    code = cli.main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("what, expected", [("envs", {"PrivLinCB-v0", "PrivGLMCB-v0"}),
                                            ("agents", {"uniform", "elim-jdp", "linucb"}),
                                            ("oracles", {"ridge", "iw-regression-dp"}),
                                            ("families", {"heavy-tailed", "spiky", "rare-direction"})])
def test_list(what, expected, capsys):
    code, out, _ = _main(["list", what], capsys)
    names = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert code == 0 and expected <= names


def test_run_writes_results_figures_and_report_then_plot_redraws(tmp_path, capsys):
    out = tmp_path / "run"
    code, text, _ = _main(["run", "--env", "PrivLinCB-v0", "--agent", "elim-jdp", "--epsilon", "0.5", "--horizon",
                           "64", "--seeds", "2", "--family", "rare-direction", "--dim", "3", "--arms", "3",
                           "--no-progress", "--out", out], capsys)
    assert code == 0 and "elim-jdp" in text
    table = read_cell(out / "results.csv")
    assert sorted(table["seed"].unique()) == [0, 1] and set(table["epsilon"]) == {0.5}
    assert set(table["family"]) == {"rare-direction"} and (table["epsilon_spent"] <= 0.5 + 1e-9).all()
    assert (out / "report.md").read_text().count("## ") >= 4
    pngs = sorted(p.name for p in (out / "figures").glob("*.png"))
    assert len(pngs) == 2
    shutil.rmtree(out / "figures")
    (out / "report.md").unlink()
    code, text, _ = _main(["plot", out], capsys)
    assert code == 0 and (out / "report.md").is_file() and len(list((out / "figures").glob("*.png"))) == 2


def test_run_without_out_prints_the_table(capsys):
    code, text, _ = _main(["run", "--env", "PrivLinCB-v0", "--agent", "uniform", "--horizon", "32", "--seeds", "1",
                           "--dim", "2", "--arms", "2", "--no-progress"], capsys)
    assert code == 0 and "| uniform |" in text.replace("  ", " ")


def test_bench_quick_with_small_overrides(tmp_path, capsys):
    out = tmp_path / "bench"
    code, text, _ = _main(["bench", "--suite", "quick", "--seeds", "1", "--horizon", "32", "--jobs", "1",
                           "--no-progress", "--out", out], capsys)
    assert code == 0
    report = (out / "report.md").read_text()
    for section in ("## Final regret", "## Log-log slopes", "## Price of privacy", "## Privacy ledgers", "## Figures"):
        assert section in report
    table = read_cell(out / "results.csv")
    assert "elim-jdp" in set(table["agent"]) and set(table["horizon"]) == {32}
    assert len(list((out / "figures").glob("*.png"))) >= 2
    # a rerun finds every cell finished
    code, text, _ = _main(["bench", "--suite", "quick", "--seeds", "1", "--horizon", "32", "--jobs", "1",
                           "--no-progress", "--out", out], capsys)
    assert code == 0 and "(0 run, " in text


BAD = [
    (["frobnicate"], "invalid choice"),
    (["bench", "--suite", "huge"], "invalid choice"),
    (["bench", "--jobs", "0"], "--jobs"),
    (["bench", "--backend", "spark"], "invalid choice"),
    (["run", "--env", "PrivLinCB-v0", "--agent", "uniform", "--horizon", "0"], "--horizon"),
    (["run", "--env", "PrivLinCB-v0", "--agent", "elim-jdp", "--horizon", "8", "--epsilon", "-1"], "--epsilon"),
    (["run", "--env", "PrivLinCB-v0", "--agent", "elim-jdp", "--horizon", "8", "--epsilon", "nan"], "--epsilon"),
    (["run", "--env", "PrivLinCB-v0", "--agent", "elim-jdp", "--horizon", "8", "--delta", "1.5"], "--delta"),
    (["run", "--env", "Nope-v0", "--agent", "uniform", "--horizon", "8"], "--env must be one of"),
    (["run", "--env", "PrivLinCB-v0", "--agent", "nope", "--horizon", "8"], "--agent must be one of"),
    (["run", "--env", "PrivLinCB-v0", "--agent", "uniform", "--horizon", "8", "--epsilon", "1"], "non-private"),
    (["run", "--env", "PrivLinCB-v0", "--agent", "uniform", "--horizon", "8", "--family", "wobbly"], "family"),
    (["run", "--env", "PrivLinCB-v0", "--horizon", "8"], "--agent"),
    (["list", "planets"], "invalid choice"),
]


@pytest.mark.parametrize("args, message", BAD)
def test_bad_arguments_exit_2_with_a_clear_message(args, message, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "error:" in err


def test_plot_on_a_folder_without_results_exits_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["plot", str(tmp_path)])
    assert exc.value.code == 2 and "results.csv" in capsys.readouterr().err


def test_missing_backend_exits_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "--seeds", "1", "--horizon", "8", "--jobs", "2", "--backend", "ray", "--no-progress",
                  "--out", str(tmp_path)])
    assert exc.value.code == 2 and "privbandit[dist]" in capsys.readouterr().err


def test_console_script_and_module_exit_codes():
    ok = subprocess.run([sys.executable, "-m", "privbandit.cli", "list", "agents"], capture_output=True, text=True)
    assert ok.returncode == 0 and "uniform" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "privbandit.cli", "run", "--env", "PrivLinCB-v0", "--agent",
                          "uniform", "--horizon", "-3"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--horizon" in bad.stderr
