"""A suite run (``privbandit bench --suite S``, no ``--agent``) takes the stored cells whose round streams match
this install and says so in one line; ``--baselines rerun`` computes every cell; the results, figures and reports
written from stored cells are the ones a full run writes.

A tiny suite stands for ``quick`` (the mechanics are the same); the last test is the shipped quick suite itself.
"""

from __future__ import annotations

import json
import re

import pytest
from bench_helpers import TINY, shifted, stored_suite

from privbandit import cli
from privbandit.report.files import read_cell


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return stored_suite(TINY, tmp_path_factory)[1]


@pytest.fixture
def tiny(reference, monkeypatch):
    """The tiny suite registered, its stored results the package's."""
    import privbandit.bench.stored as ref
    from privbandit.bench import suites

    monkeypatch.setitem(suites.SUITES, "tiny", TINY)
    monkeypatch.setattr(ref, "STORED_DIR", reference)
    return reference


def bench(out, capsys, *extra):
    code = cli.main(["bench", "--suite", "tiny", "--out", str(out), "--jobs", "1", "--no-progress", *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.slow
def test_a_suite_run_takes_the_stored_cells_says_so_in_one_line_and_writes_what_a_full_run_writes(tiny, tmp_path,
                                                                                                 capsys):
    code, out, err = bench(tmp_path / "stored", capsys)
    assert code == 0 and "6 cells (0 run, 6 already finished)" in out and err == ""
    said = [line for line in out.splitlines() if "stored reference results" in line]
    assert said == ["privbandit bench: 6 cells from the stored reference results of suite `tiny` (results version, "
                    "cell identities and every round of their round streams checked against this install; "
                    "--baselines rerun runs them)"]
    assert said[0].removeprefix("privbandit bench: ") in (tmp_path / "stored" / "report.md").read_text()
    code, out, err = bench(tmp_path / "rerun", capsys, "--baselines", "rerun")
    assert code == 0 and "6 cells (6 run, 0 already finished)" in out
    assert "privbandit bench: cells run again (--baselines rerun)" in out
    a, b = tmp_path / "stored", tmp_path / "rerun"
    assert (a / "results.csv").read_bytes() == (b / "results.csv").read_bytes()
    assert sorted(f.name for f in (a / "figures").glob("*.png")) == sorted(f.name for f in b.glob("figures/*.png"))
    meta = [json.loads((f / "report.json").read_text()) for f in (a, b)]
    for key in ("title", "references", "slope_window", "planned"):
        assert meta[0][key] == meta[1][key]
    tables = [f.read_text().split("## Final regret", 1)[1] for f in (a / "report.md", b / "report.md")]
    assert tables[0] == tables[1]                  # every table of the report; only the notes above say how
    # a second run into the same folder finds every cell there: nothing taken, nothing said about the store
    code, out, _ = bench(tmp_path / "stored", capsys)
    assert code == 0 and "(0 run, 6 already finished)" in out and "stored reference results" not in out
    # rerun into a folder that holds cells keeps them and says so
    code, out, _ = bench(tmp_path / "stored", capsys, "--baselines", "rerun")
    assert "cells run again (--baselines rerun); the 6 that" in out and "are kept (a new --out runs every one)" in out


@pytest.mark.slow
def test_a_shrunk_suite_run_takes_no_stored_cell_it_cannot_match(tiny, tmp_path, capsys):
    """``--seeds`` and ``--horizon`` change the cells (their planned seeds, their streams): nothing is taken and the
    one line on stdout says why (what was asked for, not a problem); ``--agents`` keeps the cells as they are stored
    and takes them."""
    for extra, ran in ((["--seeds", "1"], "3 cells (3 run, 0 already finished)"),
                       (["--horizon", "32"], "6 cells (6 run, 0 already finished)")):
        code, out, err = bench(tmp_path / extra[0].strip("-"), capsys, *extra)
        assert code == 0 and ran in out and not err.strip()
        assert ("privbandit bench: stored cells not used (--seeds, --horizon and --delta change the cells: the stored "
                "ones are the suite's own): the cells run") in out.splitlines()
    code, out, _ = bench(tmp_path / "agents", capsys, "--agents", "uniform")
    assert code == 0 and "2 cells (0 run, 2 already finished)" in out and "2 cells from the stored" in out


@pytest.mark.slow
def test_a_stream_that_differs_runs_its_cells_and_the_others_are_taken(tiny, tmp_path, capsys, monkeypatch):
    meta = json.loads((tiny / "tiny.json").read_text())
    moved = tmp_path / "moved"
    moved.mkdir()
    (moved / "tiny.tar.xz").write_bytes((tiny / "tiny.tar.xz").read_bytes())
    one = sorted(meta["streams"])[0]
    (moved / "tiny.json").write_text(json.dumps(shifted(meta, one, 1e-3, block=15)))   # the last 4 rounds
    import privbandit.bench.stored as ref

    monkeypatch.setattr(ref, "STORED_DIR", moved)
    code, out, err = bench(tmp_path / "out", capsys)
    assert code == 0 and "6 cells (3 run, 3 already finished)" in out
    (line,) = err.strip().splitlines()
    assert line.startswith("privbandit bench: stored cells used for 3 of 6 cells; the others run again: round "
                           f"stream {one} differs from the stored one by 0.001 of its scale")
    table = read_cell(tmp_path / "out" / "results.csv")
    assert len(table.groupby(["agent", "seed"])) == 6


@pytest.mark.slow
def test_the_quick_start_takes_every_stored_cell_of_the_quick_suite(tmp_path, capsys):
    """The README's quick start: ``privbandit bench --suite quick --out DIR`` on this install takes every cell from
    the shipped stored results (each of its round streams checked, every round) and runs none."""
    code = cli.main(["bench", "--suite", "quick", "--out", str(tmp_path / "quick"), "--jobs", "1", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and re.search(r"\n(\d{3}) cells \(0 run, \1 already finished\)", out)
    assert sum("cells from the stored reference results of suite `quick`" in line for line in out.splitlines()) == 1
    assert (tmp_path / "quick" / "report.md").is_file() and len(list((tmp_path / "quick" / "figures").glob("*.png")))
