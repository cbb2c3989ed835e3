"""Sweeps that survive faults: damaged or foreign cell files, a full disk, dead workers, two
commands on one folder, torn results or reports, and reports that never hide a missing seed."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from privbandit import cli
from privbandit.agents import AGENT_REGISTRY, make_agent, register_agent
from privbandit.bench.cells import CellFileError, FolderLocked, cell_path, load_cell
from privbandit.bench.grid import AgentEntry, Cell, EnvEntry, Grid
from privbandit.bench.sweep import CellFilesRejected, sweep
from privbandit.report import tables as report_mod
from privbandit.report.files import FOOTER, read_cell

ENVS = (EnvEntry("ht", "PrivLinCB-v0", dict(family="heavy-tailed", dim=3, n_arms=3)),
        EnvEntry("rare", "PrivLinCB-v0", dict(family="rare-direction", dim=3, n_arms=3)))
RUN = ["run", "--env", "PrivLinCB-v0", "--agent", "uniform", "--horizon", "32", "--seeds", "3", "--dim", "2",
       "--arms", "2", "--no-progress", "--out"]


def cells_of(seeds: int = 2, **kw):
    return Grid((AgentEntry("uniform", private=False),), ENVS, seeds=seeds, horizon=64, **kw).cells()


def one_line(err: str, command: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"privbandit {command}: error: "), err
    return lines[0]


def test_truncated_and_garbage_cells_are_moved_aside_rerun_alone_and_the_results_are_reproduced(tmp_path):
    """The issue's experiment: a cell cut to its first 100 bytes and one overwritten with "garbage"."""
    cells = cells_of()
    sweep(cells, tmp_path)
    before = (tmp_path / "results.csv").read_bytes()
    cut, junk = cell_path(tmp_path / "cells", cells[1]), cell_path(tmp_path / "cells", cells[2])
    cut.write_bytes(cut.read_bytes()[:100])
    junk.write_text("garbage")
    with pytest.warns(CellFilesRejected, match=rf"2 cell files .* {cut.name} \(no footer.*; {junk.name} \(no footer"):
        res = sweep(cells, tmp_path)
    assert sorted(res.ran) == sorted([cells[1].key, cells[2].key]) and len(res.skipped) == 2
    assert sorted(name for name, _ in res.rejected) == sorted([cut.name, junk.name])
    assert (tmp_path / "results.csv").read_bytes() == before  # the undamaged numbers, exactly
    assert sorted(p.name for p in (tmp_path / "cells" / "rejected").iterdir()) == sorted([cut.name, junk.name])
    with pytest.raises(CellFileError, match="no footer"):
        load_cell(tmp_path / "cells" / "rejected" / cut.name)


def _rewrite_footer(path: Path, **changes) -> None:
    """Change footer fields and recompute its checksum, as a file from another privbandit would have."""
    head, _, last = path.read_bytes().rstrip(b"\n").rpartition(b"\n")
    footer = {**json.loads(last[len(FOOTER):]), **changes}
    footer["sha256"] = hashlib.sha256(head + b"\n").hexdigest()
    path.write_bytes(head + b"\n" + (FOOTER + json.dumps(footer)).encode() + b"\n")


def test_cells_of_another_version_another_entropy_or_another_cell_are_not_mixed_in(tmp_path):
    cells = cells_of(seeds=1)
    sweep(cells, tmp_path)
    before = (tmp_path / "results.csv").read_bytes()
    old = cell_path(tmp_path / "cells", cells[0])
    swapped = cell_path(tmp_path / "cells", cells[1])
    swapped.write_bytes(old.read_bytes())  # one cell's file under another's name
    _rewrite_footer(old, version="0.0.1")
    foreign = Cell(cells[0].agent, cells[0].env, None, 0, 64, entropy=7)
    sweep([foreign], tmp_path / "other")
    os.replace(cell_path(tmp_path / "other" / "cells", foreign), cell_path(tmp_path / "cells", foreign))
    with pytest.warns(CellFilesRejected) as caught:
        res = sweep(cells, tmp_path)
    reasons = dict(res.rejected)
    assert reasons[old.name] == f"written by privbandit 0.0.1, this is {__import__('privbandit').__version__}"
    assert "names another cell" in reasons[swapped.name]
    assert reasons[cell_path(tmp_path / "cells", foreign).name] == "entropy 7, this sweep uses [20251125]"
    assert len(caught) == 1 and sorted(res.ran) == sorted(c.key for c in cells) and res.others == []
    assert (tmp_path / "results.csv").read_bytes() == before


@pytest.mark.slow
def test_cli_names_each_rejected_file_and_plot_refuses_a_damaged_folder(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(RUN + [str(out)]) == 0
    report = (out / "report.md").read_text()
    files = sorted((out / "cells").glob("*.csv"))
    files[0].write_bytes(files[0].read_bytes()[:-40])  # torn at the end: the footer is gone
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        cli.main(["plot", str(out)])
    line = one_line(capsys.readouterr().err, "plot")
    assert exc.value.code == 2 and f"1 cell files in {out / 'cells'} fail the check" in line and files[0].name in line
    assert cli.main(RUN + [str(out)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"privbandit run: warning: cell file {files[0].name} failed the check")
    strip = [ln for ln in report.splitlines() if "wall time" not in ln]
    assert [ln for ln in (out / "report.md").read_text().splitlines() if "wall time" not in ln] == strip
    assert "(1 run now, 2 found finished)" in (out / "report.md").read_text()


def _write_fails_once(monkeypatch, starts: bytes, code: int = errno.ENOSPC):
    """os.write writes half of the first chunk that starts with ``starts`` and then fails (a full disk)."""
    real, state = os.write, {"armed": True}

    def write(fd, data):
        if state["armed"] and bytes(data[: len(starts)]) == starts:
            state["armed"] = False
            real(fd, bytes(data[: len(data) // 2]))
            raise OSError(code, os.strerror(code))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    return state


def _replace_fails(monkeypatch, nth: int):
    """os.replace fails with ENOSPC on its ``nth`` call (1-based) into a ``cells`` folder."""
    real, state = os.replace, {"n": 0}

    def replace(src, dst, *a, **kw):
        if Path(dst).parent.name == "cells":
            state["n"] += 1
            if state["n"] == nth:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(src, dst, *a, **kw)

    monkeypatch.setattr(os, "replace", replace)
    return state


@pytest.mark.slow
@pytest.mark.parametrize("where", ["write", "rename"])
def test_a_full_disk_is_one_line_exit_2_leaves_no_partial_cell_and_the_rerun_completes(where, tmp_path, monkeypatch,
                                                                                       capsys):
    out = tmp_path / "full"
    with monkeypatch.context() as m:
        if where == "write":
            state = _write_fails_once(m, b"agent,")
        else:
            _replace_fails(m, nth=2)
        with pytest.raises(SystemExit) as exc:
            cli.main(RUN + [str(out)])
        if where == "write":
            assert not state["armed"]
    line = one_line(capsys.readouterr().err, "run")
    assert exc.value.code == 2 and "No space left on device" in line and "run the same command again" in line
    cells = out / "cells"
    assert not list(cells.glob(".*")) and not (out / "results.csv").exists()
    finished = sorted(cells.glob("*.csv"))
    assert len(finished) == (0 if where == "write" else 1)
    for p in finished:
        load_cell(p)
    assert cli.main(RUN + [str(out)]) == 0
    assert f"({3 - len(finished)} run now, {len(finished)} found finished)" in (out / "report.md").read_text()
    assert read_cell(out / "results.csv")["seed"].nunique() == 3


def test_results_csv_and_report_md_survive_a_crash_while_written(tmp_path, monkeypatch):
    cells = cells_of(seeds=1)
    res = sweep(cells, tmp_path)
    report = report_mod.write_report(res.table, tmp_path)
    old_results, old_report = (tmp_path / "results.csv").read_bytes(), report.read_bytes()
    with monkeypatch.context() as m:
        _write_fails_once(m, b"agent,", errno.EIO)  # every cell is finished: the only such write is results.csv
        with pytest.raises(OSError, match="Input/output error"):
            sweep(cells, tmp_path)
        _write_fails_once(m, b"# privbandit", errno.EIO)
        with pytest.raises(OSError, match="Input/output error"):
            report_mod.write_report(res.table.iloc[:3], tmp_path)
    assert (tmp_path / "results.csv").read_bytes() == old_results and report.read_bytes() == old_report
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


_HOLD = """
import fcntl, os, sys, time
fh = open(os.path.join(sys.argv[1], ".lock"), "a+")
fcntl.flock(fh, fcntl.LOCK_EX)
fh.write(str(os.getpid())); fh.flush()
print("locked", flush=True)
time.sleep(60)
"""


@pytest.mark.slow
def test_a_second_command_on_a_folder_in_use_is_refused_in_one_line(tmp_path, capsys):
    pytest.importorskip("fcntl")
    out = tmp_path / "busy"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(SystemExit) as exc:
            cli.main(RUN + [str(out)])
        line = one_line(capsys.readouterr().err, "run")
        assert exc.value.code == 2 and f"in use by another privbandit sweep (pid {holder.pid})" in line
        with pytest.raises(FolderLocked):
            sweep(cells_of(seeds=1), out)
        assert not list((out / "cells").glob("*.csv"))
    finally:
        holder.kill()
        holder.communicate()
    assert cli.main(RUN + [str(out)]) == 0  # the lock dies with its process
    assert cli.main(RUN + [str(out)]) == 0  # and a finished command releases it


@pytest.fixture
def killer(tmp_path):
    """An agent whose first update in a worker process (never this one) SIGKILLs that worker, once."""
    marker, parent = str(tmp_path / "killed-once"), os.getpid()

    def make_killer(**kwargs):  # defined here: sent to the workers by value
        agent = make_agent("uniform", **kwargs)
        update = agent.update

        def dying_update(*args, **kw):
            if os.getpid() != parent:
                try:
                    os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                except FileExistsError:
                    pass
                else:
                    os.kill(os.getpid(), signal.SIGKILL)
            return update(*args, **kw)

        agent.update = dying_update
        return agent

    register_agent("killer", make_killer, private=False)
    yield Path(marker)
    AGENT_REGISTRY.unregister("killer")


@pytest.mark.slow
def test_a_worker_killed_in_a_loky_sweep_names_the_lost_cells_exits_3_and_the_rerun_completes(killer, tmp_path,
                                                                                              capsys):
    out = tmp_path / "loky"
    args = ["run", "--env", "PrivLinCB-v0", "--agent", "killer", "--horizon", "64", "--seeds", "4", "--dim", "2",
            "--arms", "2", "--jobs", "2", "--no-progress", "--out", str(out)]
    code = cli.main(args)
    text, err = capsys.readouterr()
    assert killer.exists() and code == 3
    assert text.strip().splitlines()[-1] == "1 groups incomplete: rerun to finish"
    lost = err.strip().splitlines()
    assert len(lost) == 1 and "a worker died" in lost[0]
    n_lost = int(lost[0].split("; ")[1].split(" cells")[0])
    saved = len(list((out / "cells").glob("*.csv")))
    assert 1 <= n_lost == 4 - saved
    if saved:  # a row to flag (when the kill came before any cell finished, the report has no row: exit 3 says it)
        assert f"incomplete: {saved} of 4 seeds" in (out / "report.md").read_text()
    assert cli.main(args) == 0
    assert f"({n_lost} run now, {saved} found finished)" in (out / "report.md").read_text()
    assert "incomplete" not in capsys.readouterr().out


@pytest.mark.slow
def test_a_worker_killed_in_a_dask_sweep_loses_no_cell_for_good(killer, tmp_path):
    pytest.importorskip("dask.distributed", reason="the dask backend needs the dist extra: pip install '.[dist]'")
    cells = Grid((AgentEntry("killer", private=False),), ENVS[:1], seeds=4, horizon=64).cells()
    res = sweep(cells, tmp_path, jobs=2, backend="dask")  # a local cluster of worker processes
    assert killer.exists()
    finished = {p.stem for p in (tmp_path / "cells").glob("*.csv")}
    assert set(res.lost) == {c.key for c in cells} - finished and set(res.ran) == finished
    again = sweep(cells, tmp_path)
    assert sorted(again.ran) == sorted(res.lost) and again.lost == []
    assert read_cell(tmp_path / "results.csv")["seed"].nunique() == 4


def test_summary_rows_carry_seeds_found_and_planned():
    from privbandit.report.tables import final_regret, headline_table, incomplete_groups, loglog_slopes

    rows = [dict(env="e", agent="a", privacy_model="none", epsilon=float("inf"), delta=0.0, horizon=8, seed=s, t=t,
                 cum_regret=float(t * (s + 1)), epsilon_spent=0.0) for s in range(3) for t in (1, 2, 4, 8)]
    df = pd.DataFrame(rows)
    planned = pd.DataFrame([dict(env="e", agent="a", epsilon=float("inf"), horizon=8, n_planned=5)])
    final = final_regret(df, planned=planned)
    assert final[["n_seeds", "n_planned", "incomplete"]].values.tolist() == [[3, 5, True]]
    assert incomplete_groups(final) == 1 and loglog_slopes(df, planned=planned)["n_planned"].tolist() == [5]
    assert headline_table(final)["flag"].tolist() == ["incomplete: 3 of 5 seeds"]
    assert final_regret(df)[["n_seeds", "n_planned", "incomplete"]].values.tolist() == [[3, 3, False]]


def test_help_documents_the_incomplete_exit_code(capsys):
    with pytest.raises(SystemExit):
        cli.main(["bench", "--help"])
    assert "3 incomplete" in " ".join(capsys.readouterr().out.split())
