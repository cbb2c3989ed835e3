"""scripts/rerun_stored.py: stored cells run again beside their stored tables, the summary of a saved run, the
committed run the benchmarking guide shows, and the command line's errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from conftest import load_script

from privbandit.bench.stored import STREAM_TOLERANCE
from privbandit.bench.suites import get_suite

ROOT = Path(__file__).resolve().parents[2]
rerun = load_script("rerun_stored")


def test_sampled_keeps_the_named_streams_spread_over_the_list():
    cells = get_suite("quick").cells()
    rare = rerun.sampled(cells, "rare-direction-d5k5|T=16384|seed=0", None)
    assert rare and all(c.env.label == "rare-direction-d5k5" and c.horizon == 16384 and c.seed == 0 for c in rare)
    three = rerun.sampled(cells, None, 3)
    assert [c.key for c in three] == [cells[0].key, cells[(len(cells) - 1) // 2].key, cells[-1].key]


@pytest.mark.slow
def test_two_stored_cells_run_again_to_their_stored_final_regret(tmp_path, capsys):
    out = tmp_path / "rerun.csv"
    assert rerun.main(["--suite", "quick", "--streams", "rare-direction-d5k5|T=16384|seed=0", "--sample", "2",
                       "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert len(table) == 2 and set(table["suite"]) == {"quick"}
    assert (table["rel_diff"] <= STREAM_TOLERANCE).all() and (table["stream_difference"] <= STREAM_TOLERANCE).all()
    assert rerun.main(["--from", str(out), "--markdown"]) == 0
    row = capsys.readouterr().out.strip().splitlines()[-1]
    assert row.startswith("| quick | ") and " | 2 | " in row


def test_the_summary_counts_inexact_streams_identical_tables_and_the_largest_difference():
    table = pd.DataFrame(dict(suite="quick", setting="X", numpy_simd="X86_V2", blas="openblas",
                              stream=["a", "a", "b"], rel_diff=[0.0, 3e-16, 1e-16],
                              table_identical=[True, False, False], stream_difference=[0.0, 0.0, 2e-16]))
    row = rerun.markdown(table).strip().splitlines()[-1]
    assert row == "| quick | X | X86_V2 | openblas | 3 | 1 of 2 | 1 | 3e-16 | 1e-16 |"


def test_the_committed_run_holds_the_suite_as_stored_and_as_another_machine():
    """The guide's table comes from a full run of the quick suite here and as another machine, and a sample of the
    paper suite's heavy-tailed cells, every final regret within the stream tolerance of the stored one."""
    table = pd.read_csv(ROOT / "docs" / "data" / "rerun_stored.csv")
    quick = table[table["suite"] == "quick"]
    assert quick.groupby("setting").size().to_dict() == {"as stored": 214, **{
        s: 214 for s in set(quick["setting"]) - {"as stored"}}} and quick["setting"].nunique() == 2
    other = table[table["setting"] != "as stored"]
    assert (other["stream_difference"] > 0).any() and set(other["suite"]) == {"quick", "paper"}
    assert (table["rel_diff"] <= STREAM_TOLERANCE).all()


@pytest.mark.parametrize("argv, words", [
    (["--suite", "quick", "--from", "x.csv"], "give --suite (run) or --from"),
    ([], "give --suite (run) or --from"),
    (["--suite", "quick", "--sample", "0"], "--sample must be a positive count, got 0"),
    (["--from", "NOFILE.csv"], "--from NOFILE.csv"),
])
def test_bad_arguments_exit_2_with_one_line(argv, words, capsys):
    with pytest.raises(SystemExit) as exc:
        rerun.main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and words in err[-1]


def test_a_file_that_is_not_a_saved_run_is_refused(tmp_path, capsys):
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(SystemExit) as exc:
        rerun.main(["--from", str(other)])
    assert exc.value.code == 2 and "not a saved run of this script" in capsys.readouterr().err
