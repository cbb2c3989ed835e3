"""The privbandit command: list, run, plot, bench, and exit code 2 with a clear message on bad arguments."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from privbandit import cli
from privbandit.report.files import read_cell


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


@pytest.mark.slow
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
    assert len(pngs) == 1 and pngs[0].startswith("regret_")      # one epsilon: no regret-vs-epsilon figure
    shutil.rmtree(out / "figures")
    (out / "report.md").unlink()
    code, text, _ = _main(["plot", out], capsys)
    assert code == 0 and (out / "report.md").is_file()
    assert sorted(p.name for p in (out / "figures").glob("*.png")) == pngs


def test_run_without_out_prints_the_table(capsys):
    code, text, _ = _main(["run", "--env", "PrivLinCB-v0", "--agent", "uniform", "--horizon", "32", "--seeds", "1",
                           "--dim", "2", "--arms", "2", "--no-progress"], capsys)
    assert code == 0 and "| uniform |" in text.replace("  ", " ")


@pytest.mark.slow
def test_bench_quick_with_small_overrides(tmp_path, capsys):
    out = tmp_path / "bench"
    code, text, err = _main(["bench", "--suite", "quick", "--seeds", "1", "--horizon", "32", "--jobs", "1",
                             "--no-progress", "--out", out], capsys)
    assert code == 0 and "stored cells not used (--seeds, --horizon and --delta change the cells" in text
    assert "stored" not in err
    assert re.search(r"\n(\d+) cells \(\1 run, 0 already finished\)", text)   # none taken from the stored quick suite
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


@pytest.mark.slow
def test_bench_agents_suite_runs_only_the_chosen_agents_envs_and_epsilons(tmp_path, capsys):
    out = tmp_path / "agents"
    agents = "uniform,elim-glm-jdp-ucb,linucb-practical-batch64"
    code, text, _ = _main(["bench", "--suite", "agents", "--agents", agents,
                           "--envs", "glm-heavy-tailed-d10k10,heavy-tailed-d10k10", "--epsilons", "0.5",
                           "--seeds", "1", "--horizon", "64", "--jobs", "1", "--no-progress", "--out", out], capsys)
    assert code == 0 and "3 cells (3 run, 0 already finished)" in text  # the GLM block has no uniform
    table = read_cell(out / "results.csv")
    cells = set(zip(table["env"], table["agent"]))
    assert cells == {("heavy-tailed-d10k10", "uniform"), ("heavy-tailed-d10k10", "linucb-practical-batch64"),
                     ("glm-heavy-tailed-d10k10", "elim-glm-jdp-ucb")}
    assert set(table.loc[table["agent"] == "elim-glm-jdp-ucb", "epsilon"]) == {0.5}
    code, text, _ = _main(["bench", "--suite", "agents", "--agents", agents, "--seeds", "2", "--horizon", "64",
                           "--estimate", "--jobs", "2", "--out", tmp_path / "none"], capsys)
    assert code == 0 and re.search(r"estimate: \d+ cells, \d+ combinations timed once .* on 2 idle workers", text)
    assert not (tmp_path / "none").exists()


@pytest.mark.slow
def test_bench_env_kwargs_reach_the_envs_and_name_them(tmp_path, capsys):
    out = tmp_path / "fit"
    code, text, _ = _main(["bench", "--suite", "agents", "--agents", "uniform", "--envs", "cbify-wine",
                           "--env-kwargs", '{"reward": "linear-fit"}', "--seeds", "1", "--horizon", "16",
                           "--jobs", "1", "--no-progress", "--out", out], capsys)
    if code == 2 and "scikit-learn" in text:                # the data extra is not installed
        pytest.skip(text)
    assert code == 0
    table = read_cell(out / "results.csv")
    assert set(table["env"]) == {"cbify-wine[reward=linear-fit]"}


BAD = [
    (["frobnicate"], "invalid choice"),
    (["bench", "--suite", "huge"], "invalid choice"),
    (["bench", "--jobs", "0"], "--jobs"),
    (["bench", "--backend", "spark"], "invalid choice"),
    (["bench", "--delta", "0"], "--delta"),
    (["bench", "--delta", "1"], "--delta"),
    (["bench", "--suite", "agents", "--agents", "nope"], "--agents: nope not in suite 'agents'"),
    (["bench", "--suite", "agents", "--envs", "mars-d1k1"], "--envs: mars-d1k1 not in suite 'agents'"),
    (["bench", "--epsilons", "0.3,0"], "--epsilons"),
    (["bench", "--env-kwargs", "[1]"], "--env-kwargs must be a JSON object"),
    (["bench", "--envs", "heavy-tailed-d5k5", "--env-kwargs", '{"reward": "linear-fit"}'],
     "--env-kwargs: env heavy-tailed-d5k5 (PrivLinCB-v0) refuses them"),
    (["bench", "--agent", "uniform", "--env-kwargs", "{}"], "a challenger (--agent) runs beside the whole suite"),
    (["bench", "--agent", "uniform", "--agents", "uniform"], "a challenger (--agent) runs beside the whole suite"),
    (["store-reference", "--suite", "quick"], "--out"),
    (["run", "--env", "PrivLinCB-v0", "--agent", "uniform", "--horizon", "0"], "--horizon"),
    (["run", "--env", "PrivLinCB-v0", "--agent", "elim-jdp", "--horizon", "8", "--epsilon", "-1"], "--epsilon"),
    (["run", "--env", "PrivLinCB-v0", "--agent", "elim-jdp", "--horizon", "8", "--epsilon", "nan"], "--epsilon"),
    (["run", "--env", "PrivLinCB-v0", "--agent", "elim-jdp", "--horizon", "8", "--delta", "1.5"], "--delta"),
    (["run", "--env", "Nope-v0", "--agent", "uniform", "--horizon", "8"], "--env must be one of"),
    (["run", "--env", "PrivLinCB-v0", "--agent", "nope", "--horizon", "8"], "--agent must be one of"),
    (["run", "--env", "PrivLinCB-v0", "--agent", "uniform", "--horizon", "8", "--epsilon", "1"], "non-private"),
    (["run", "--env", "PrivLinCB-v0", "--agent", "elim-jdp", "--horizon", "8"], "choose a budget with --epsilon"),
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
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "privbandit[dist]" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_console_script_and_module_exit_codes():
    ok = subprocess.run([sys.executable, "-m", "privbandit.cli", "list", "agents"], capture_output=True, text=True)
    assert ok.returncode == 0 and "uniform" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "privbandit.cli", "run", "--env", "PrivLinCB-v0", "--agent",
                          "uniform", "--horizon", "-3"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--horizon" in bad.stderr


RUN = ["run", "--env", "PrivLinCB-v0", "--horizon", "32", "--seeds", "2", "--dim", "2", "--arms", "2", "--no-progress"]


def _one_error_line(err: str, command: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"privbandit {command}: error: "), err
    return lines[0]


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0 and re.fullmatch(r"privbandit \d+\.\d+\S*", capsys.readouterr().out.strip())


def test_errors_after_parsing_name_the_subcommand_in_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", "--env", "PrivLinCB-v0", "--agent", "nope", "--horizon", "8"])
    assert exc.value.code == 2
    assert "--agent must be one of" in _one_error_line(capsys.readouterr().err, "run")


@pytest.mark.parametrize("make", ["file", "under-a-file"])
def test_out_that_is_not_a_folder_exits_2(make, tmp_path, capsys):
    target = tmp_path / "taken"
    target.write_text("not a folder")
    out = target if make == "file" else target / "sub"
    with pytest.raises(SystemExit) as exc:
        cli.main(RUN + ["--agent", "uniform", "--out", str(out)])
    assert exc.value.code == 2 and "--out" in _one_error_line(capsys.readouterr().err, "run")
    assert target.read_text() == "not a folder"


@pytest.fixture
def read_only(monkeypatch):
    """Make folders read-only (mode 0o555). Root writes anywhere whatever the mode, so under root
    ``os.access`` answers as it does for everyone else: no writing there."""
    made = []

    def make(folder: Path) -> Path:
        folder.chmod(0o555)
        made.append(folder)
        return folder

    if os.geteuid() == 0:
        real = os.access
        monkeypatch.setattr(os, "access", lambda path, mode, *a, **kw: (
            False if Path(path) in made and mode & os.W_OK else real(path, mode, *a, **kw)))
    yield make
    for folder in made:
        folder.chmod(0o755)


def test_out_in_a_read_only_folder_exits_2(tmp_path, read_only, capsys):
    (tmp_path / "ro").mkdir()
    out = read_only(tmp_path / "ro")
    with pytest.raises(SystemExit) as exc:
        cli.main(RUN + ["--agent", "uniform", "--out", str(out)])
    assert exc.value.code == 2 and "not writable" in _one_error_line(capsys.readouterr().err, "run")
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "--seeds", "1", "--horizon", "8", "--no-progress", "--out", str(out)])
    assert exc.value.code == 2 and "not writable" in _one_error_line(capsys.readouterr().err, "bench")


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("results") / "run"
    assert cli.main(RUN + ["--agent", "uniform", "--out", str(out)]) == 0
    return out


@pytest.mark.slow
def test_plot_on_a_read_only_folder_exits_2(results_dir, tmp_path, read_only, capsys):
    folder = shutil.copytree(results_dir, tmp_path / "ro")
    read_only(folder)
    with pytest.raises(SystemExit) as exc:
        cli.main(["plot", str(folder)])
    assert exc.value.code == 2 and "not writable" in _one_error_line(capsys.readouterr().err, "plot")


@pytest.mark.parametrize("content", ["a,b\n1,2\n", "", "\x00\xff\xfe garbage"])
def test_plot_on_a_foreign_folder_exits_2(content, tmp_path, capsys):
    (tmp_path / "results.csv").write_bytes(content.encode("latin-1"))
    with pytest.raises(SystemExit) as exc:
        cli.main(["plot", str(tmp_path)])
    line = _one_error_line(capsys.readouterr().err, "plot")
    assert exc.value.code == 2 and "is not a privbandit results table" in line


@pytest.mark.slow
def test_plot_keeps_the_report_provenance(results_dir, tmp_path, capsys):
    folder = shutil.copytree(results_dir, tmp_path / "copy")
    before = (folder / "report.md").read_text().splitlines()
    header = [line for line in before[: before.index("## Final regret")] if line.startswith(("# ", "- "))]
    assert any(line.startswith("- command: `privbandit run") for line in header)
    assert any("wall time" in line for line in header)
    for _ in range(2):  # redrawing twice keeps one "redrawn by" line
        assert cli.main(["plot", str(folder)]) == 0
    after = (folder / "report.md").read_text().splitlines()
    assert [line for line in after if line.startswith(("# ", "- "))][: len(header)] == header
    assert sum(line.startswith("- redrawn by `privbandit plot") for line in after) == 1


@pytest.mark.slow
def test_run_into_a_folder_with_another_agent_keeps_both(tmp_path, capsys):
    out = tmp_path / "both"
    assert cli.main(RUN + ["--agent", "uniform", "--out", str(out)]) == 0
    capsys.readouterr()
    assert cli.main(RUN + ["--agent", "epsilon-greedy", "--out", str(out)]) == 0
    assert "also holds 2 cells of earlier commands" in capsys.readouterr().out
    table = read_cell(out / "results.csv")
    assert set(table["agent"]) == {"uniform", "epsilon-greedy"} and table.groupby("agent")["seed"].nunique().eq(2).all()
    report = (out / "report.md").read_text()
    assert "| uniform |" in report and "| epsilon-greedy |" in report
    assert "- earlier command: `privbandit run" in report and "--agent uniform" in report


@pytest.mark.slow
def test_ctrl_c_saves_finished_cells_says_so_and_the_rerun_resumes(tmp_path):
    out = tmp_path / "interrupted"
    cmd = [sys.executable, "-m", "privbandit.cli", "run", "--env", "PrivLinCB-v0", "--agent", "linucb", "--horizon",
           "2048", "--seeds", "8", "--dim", "3", "--arms", "3", "--no-progress", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # not inherited ignored
    deadline = time.monotonic() + 60
    while not list((out / "cells").glob("*.csv")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: SIGINT to the whole process group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err
    match = re.fullmatch(rf"interrupted: (\d+) of 8 cells saved in {re.escape(str(out))}; "
                         r"run the same command again to resume", err.strip())
    assert match, err
    saved = len(list((out / "cells").glob("*.csv")))
    assert 1 <= int(match.group(1)) == saved < 8
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert read_cell(out / "results.csv")["seed"].nunique() == 8
    assert f"8 cells ({8 - saved} run now, {saved} found finished)" in (out / "report.md").read_text()


def test_a_sweep_that_finished_no_cell_reports_every_planned_group_incomplete(tmp_path, capsys):
    """When every cell is lost (all workers died), the report is written without figures and each planned group
    counts as incomplete (exit code 3), instead of a traceback from plotting an empty table."""
    import pandas as pd

    from privbandit.bench.workflow import completion, write_outputs
    from privbandit.sim.runner import COLUMNS

    empty = pd.DataFrame(columns=list(COLUMNS))
    planned = pd.DataFrame(dict(env=["e", "e"], agent=["a", "b"], epsilon=[1.0, float("inf")], horizon=[64, 64],
                                n_planned=[4, 2]))
    assert completion(empty, planned) == cli.EXIT_INCOMPLETE and completion(empty, None) == 0
    assert capsys.readouterr().out == "2 groups incomplete: rerun to finish\n"
    report = write_outputs(empty, tmp_path, title="t", references={}, notes=["n"], planned=planned)
    assert report.exists() and not list(tmp_path.glob("figures/*.png"))
