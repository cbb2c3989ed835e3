"""The agent benchmark's grid runner (scripts/bench_agents.py): --jobs, longest cells first, grid order, resume.

Every cell is seeded on its own, so the tables do not depend on ``--jobs`` or on how often the grid was
interrupted; the grids here are tiny (T = 2^11, a few agents, 2 seeds).
"""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import load_script

from privbandit.sim.backends import limit_blas

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_agents.py"
GRID = ["--log2-horizon", "11", "--seeds", "2", "--families", "heavy-tailed", "--blocks", "jdp", "--agents",
        "uniform,linucb,elim-jdp", "--epsilons", "0.3,1", "--slope-window", "8,11"]
N_CELLS = 2 + 2 + 2 * 2  # uniform and linucb: one cell per seed; elim-jdp: one per seed and epsilon
LINE = re.compile(r"\[\d+/\d+\] (\S+) (\S+) (\S+) eps=(\S+) seed=(\d+):")


bench = load_script("bench_agents")


def _bench(*args, out: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, str(SCRIPT), *GRID, *map(str, args), "--out", str(out)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=_env())


def _default_sigint() -> None:
    """Ctrl-C's default action in the child: a test run started in the background of a non-interactive shell
    inherits SIGINT ignored, and Python then never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _env() -> dict:
    root = str(SCRIPT.parents[1])  # this tree's privbandit, whatever is installed
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}


def _runs(out: Path) -> list[str]:
    """runs.csv without its last column (seconds, the only one that depends on the machine)."""
    lines = (out / "runs.csv").read_text().splitlines()
    assert lines[0].endswith(",seconds")
    return [line.rsplit(",", 1)[0] for line in lines]


def _keys_in_file(out: Path) -> list[tuple]:
    """The cells of runs.csv in their order in the file."""
    data = bench.read_runs(out / "runs.csv")
    keys = zip(data["block"], data["family_label"], data["agent"], data["eps_label"], data["seed"])
    return list(dict.fromkeys(keys))


def _finished_in_file(out: Path) -> int:
    """How many cells ``runs.csv`` holds whole now, while a run may be appending to it (0 for a file not
    written yet or caught mid-write)."""
    try:
        return len(bench.finished_cells(out / "runs.csv", 2 ** 11))
    except (ValueError, KeyError, OSError):  # pandas' parser errors are ValueErrors
        return 0


def _grid_keys() -> list[tuple]:
    return [bench.cell_key(c) for c in bench.cells(bench.parse_args(GRID))]


def _ran(stdout: str) -> list[tuple]:
    """The cells in the order they finished (the progress lines)."""
    return [(b, f, a, bench.eps_label(float(e)), int(s)) for b, f, a, e, s in LINE.findall(stdout)]


def _bench_here(*args, out: Path, capsys) -> str:
    """Run the script's ``main`` in this process (one job, one BLAS thread as in the workers); its output."""
    with limit_blas():
        assert bench.main([*GRID, *map(str, args), "--out", str(out)]) == 0
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, str]:
    """The tiny grid run in this process (``--jobs 1``): its folder and its output."""
    out = tmp_path_factory.mktemp("bench") / "jobs1"
    with pytest.MonkeyPatch.context() as mp, limit_blas():
        mp.setattr(sys, "stdout", io.StringIO())
        assert bench.main([*GRID, "--jobs", "1", "--out", str(out)]) == 0
        return out, sys.stdout.getvalue()


def test_one_job_runs_longest_first_and_writes_the_grid_order(reference):
    out, stdout = reference
    grid = _grid_keys()
    assert len(grid) == N_CELLS
    groups = bench.schedule(bench.cells(bench.parse_args(GRID)))
    assert _ran(stdout) == [bench.cell_key(c) for g in groups for c in g] != grid
    assert _keys_in_file(out) == grid


def test_cells_run_longest_first_and_results_do_not_depend_on_jobs(reference, tmp_path):
    res = _bench("--jobs", 2, out=tmp_path)
    assert res.returncode == 0, res.stderr
    ran = _ran(res.stdout)
    assert sorted(ran) == sorted(_grid_keys()) and ran != _grid_keys()  # run in another order ...
    assert _runs(tmp_path) == _runs(reference[0])  # ... written in the grid's, row for row
    for name in ("final.csv", "slopes.csv"):
        assert (tmp_path / name).read_bytes() == (reference[0] / name).read_bytes()


def test_schedule_groups_the_cells_of_one_env_seed_and_epsilon_costliest_first_in_grid_order():
    grid = bench.cells(bench.parse_args(["--blocks", "jdp,ldp,real-jdp", "--families", "heavy-tailed,glm,digits"]))
    groups = bench.schedule(grid)
    order = [c for g in groups for c in g]
    assert sorted(map(bench.cell_key, order)) == sorted(map(bench.cell_key, grid))      # every cell once
    assert len({bench.group_key(g[0]) for g in groups}) == len(groups)
    position = {bench.cell_key(c): i for i, c in enumerate(grid)}
    for g in groups:
        assert {bench.group_key(c) for c in g} == {bench.group_key(g[0])}
        assert [position[bench.cell_key(c)] for c in g] == sorted(position[bench.cell_key(c)] for c in g)
        assert len({c["agent"] for c in g}) == len(g)             # one env, seed, epsilon: one cell per agent
    costs = [sum(map(bench.cell_cost, g)) for g in groups]
    assert costs == sorted(costs, reverse=True) and costs[0] > costs[-1]
    for a, b in zip(groups, groups[1:]):
        if sum(map(bench.cell_cost, a)) == sum(map(bench.cell_cost, b)):
            assert position[bench.cell_key(a[0])] < position[bench.cell_key(b[0])]
    real = [c for c in grid if c["block"] == "real-jdp"]  # not in the cost table: counted as the costliest
    top = max(bench.CELL_COST.values())
    assert real and all(bench.cell_cost(c) == top for c in real)
    assert all((c["block"], c["agent"]) in bench.CELL_COST for c in grid if c["block"] in ("jdp", "ldp"))
    # the default grid: 1760 runs in 310 groups (2 blocks x 4 families x 10 seeds x 4 epsilon labels, but the
    # local-DP GLM instance has no non-private agent)
    assert len(bench.schedule(bench.cells(bench.parse_args([])))) == 310


def test_a_group_gives_each_cell_its_own_run():
    grid = bench.cells(bench.parse_args(GRID + ["--seeds", "1", "--log2-horizon", "9"]))
    group = next(g for g in bench.schedule(grid) if len(g) > 1)
    with limit_blas():
        together = bench.run_group(group, 2 ** 9, 1e-5, 64)
        for c, df in together:
            alone = bench.run_cell(c, 2 ** 9, 1e-5, 64)[1]
            assert df["seconds"].iloc[0] > 0
            assert df.drop(columns="seconds").equals(alone.drop(columns="seconds"))
    other = [c for c in grid if bench.group_key(c) != bench.group_key(group[0])][0]
    with pytest.raises(ValueError, match="one group_key"):
        bench.run_group([group[0], other], 2 ** 9, 1e-5, 64)


def test_a_rerun_after_a_partial_run_does_only_the_rest(reference, tmp_path, capsys):
    _bench_here("--jobs", 1, "--agents", "elim-jdp", out=tmp_path, capsys=capsys)
    stdout = _bench_here("--jobs", 1, out=tmp_path, capsys=capsys)
    assert f"{N_CELLS - 4} runs to do (4 already in" in stdout
    assert {a for _, _, a, _, _ in _ran(stdout)} == {"uniform", "linucb"}
    assert _runs(tmp_path) == _runs(reference[0])


def test_ctrl_c_keeps_the_finished_cells_in_one_line_and_the_rerun_finishes(reference, tmp_path, capsys):
    cmd = [sys.executable, str(SCRIPT), *GRID, "--jobs", "2", "--out", str(tmp_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
                            start_new_session=True, preexec_fn=_default_sigint)
    deadline = time.monotonic() + 300  # generous: a loaded machine runs the first group slowly
    while not _finished_in_file(tmp_path) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "the grid ended before a Ctrl-C could interrupt it"
    assert _finished_in_file(tmp_path), "no cell finished before the deadline"
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: SIGINT to the whole process group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    match = re.fullmatch(rf"interrupted: (\d+) of {N_CELLS} cells saved in {re.escape(str(tmp_path / 'runs.csv'))}; "
                         r"run the same command again to resume\n", err)
    assert match, err
    saved = len(_keys_in_file(tmp_path))
    assert 1 <= int(match.group(1)) == saved < N_CELLS
    assert f"{N_CELLS - saved} runs to do ({saved} already in" in _bench_here("--jobs", 1, out=tmp_path, capsys=capsys)
    assert _runs(tmp_path) == _runs(reference[0])


def test_a_ctrl_c_during_a_cells_write_lands_after_it_with_other_threads_running(tmp_path, monkeypatch):
    """SIGINT sent while append_cell writes, in a process with another thread (loky's, in a run with --jobs 2),
    which the kernel may hand the signal to: the cell's rows are written whole, then KeyboardInterrupt."""
    import threading

    rows = bench.pd.DataFrame({"block": ["jdp"], "t": [1], "cum_regret": [0.5]})
    path = tmp_path / "runs.csv"

    class InterruptedFile(io.StringIO):
        def write(self, text):
            os.kill(os.getpid(), signal.SIGINT)   # Ctrl-C as the write starts
            time.sleep(0.05)                      # the other thread takes it meanwhile
            with open(path, "a") as fh:           # noqa: SIM117 (the real write, after the signal)
                return fh.write(text)

    monkeypatch.setattr(bench, "open", lambda *a, **k: InterruptedFile(), raising=False)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            bench.append_cell(path, rows)
    finally:
        stop.set()
        other.join()
    assert path.read_text() == rows.to_csv(index=False)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler restored


def test_finished_cells_of_an_empty_file_are_none(tmp_path):
    (tmp_path / "runs.csv").write_text("")  # a run killed between creating the file and writing it
    assert bench.finished_cells(tmp_path / "runs.csv", 2 ** 11) == set()


@pytest.mark.parametrize("jobs", ["0", "-2", "two", "1.5", ""])
def test_bad_jobs_is_one_line_and_exit_code_2(jobs, capsys):
    with pytest.raises(SystemExit) as exc:
        bench.parse_args(["--jobs", jobs])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert re.fullmatch(r"\S+: error: argument --jobs: must be -1 \(all cores\) or an integer >= 1, got .*\n", err), err


def test_bad_jobs_stops_before_any_run(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        bench.main(["--jobs", "0", "--out", str(tmp_path / "never")])
    assert exc.value.code == 2 and capsys.readouterr().out == "" and not (tmp_path / "never").exists()


def test_jobs_defaults_to_every_core_and_takes_minus_one():
    assert bench.parse_args([]).jobs == (os.cpu_count() or 1)
    assert bench.parse_args(["--jobs", "-1"]).jobs == -1


def test_estimate_times_each_combination_once_and_list_schedules_every_group(monkeypatch, tmp_path, capsys):
    cost = {"uniform": 60.0, "linucb": 120.0, "elim-jdp": 180.0}      # CPU seconds of one run, per agent
    clock, timed = [0.0], []

    def fake_group(group, horizon, delta, ucb_batch):
        out = []
        for c in group:
            timed.append(c["agent"])
            clock[0] += cost[c["agent"]]
            out.append((c, bench.pd.DataFrame({"seconds": [cost[c["agent"]] / 7]})))   # wall: in proportion
        return out

    monkeypatch.setattr(bench, "run_group", fake_group)
    monkeypatch.setattr(bench.time, "process_time", lambda: clock[0])
    assert bench.main(GRID + ["--estimate", "--jobs", "2", "--out", str(tmp_path / "never")]) == 0
    out = capsys.readouterr().out
    assert sorted(timed) == ["elim-jdp", "linucb", "uniform"] and not (tmp_path / "never").exists()
    # groups: elim-jdp 3, 3, 3, 3 minutes; uniform + linucb 3, 3: 18 CPU minutes; on 2 workers: 9 minutes
    assert f"{N_CELLS} runs in 6 groups at T = 2^11, 3 combinations timed once" in out
    assert "18.0 CPU minutes in all); on 2 idle workers, costliest first: 9.0 minutes wall" in out
    assert bench.main(GRID + ["--estimate", "--jobs", "1"]) == 0
    assert "on 1 idle workers, costliest first: 18.0 minutes wall" in capsys.readouterr().out
