"""Stored reference results: pack a suite's baseline cells, check them, stand them in for a run, rank boards.

A tiny suite (two agents, one env, two seeds, T = 64) stands for ``quick`` and ``paper``: the mechanics are the
same. Stored cells re-run here must be equal to the stored ones with tolerance 0 (every float of the table): a
cell's seed fixes its round stream and its agent's randomness, the batch path is deterministic, and the fingerprints and
versions checked before use guarantee the same streams and the same code (the footers differ only in the seeds
each sweep planned). Streams are compared up to rounding (another CPU or BLAS moves their last bits): the tests
that run as another machine are at the end.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import replace

import pandas as pd
import pytest
from bench_helpers import TINY, shifted, stored_suite

from privbandit import cli
from privbandit.bench.cells import cell_path
from privbandit.bench.grid import AgentEntry, Grid
from privbandit.bench.stored import (
    MANIFEST_FORMAT,
    STREAM_TOLERANCE,
    check_stored,
    install_stored,
    machine,
    match_stored,
    stream_difference,
    stream_summary,
    suite_version,
)
from privbandit.bench.suites import Suite, lin_env
from privbandit.bench.sweep import sweep
from privbandit.report.files import read_cell
from privbandit.report.leaderboard import leaderboard_markdown, ranked_boards, read_results


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    return stored_suite(TINY, tmp_path_factory)


@pytest.mark.slow
def test_store_reference_command_runs_the_baselines_resumably_and_records_itself(stored, tmp_path, monkeypatch,
                                                                                  capsys):
    from privbandit.bench import suites

    monkeypatch.setitem(suites.SUITES, "tiny", TINY)
    folder, dest = tmp_path / "cells", tmp_path / "ref"
    shutil.copytree(stored[0] / "cells", folder / "cells")   # two of the six cells finished by an earlier run
    for cell in TINY.cells()[2:]:
        cell_path(folder / "cells", cell).unlink()
    argv = ["store-reference", "--suite", "tiny", "--out", str(folder), "--jobs", "1", "--dest", str(dest),
            "--no-progress"]
    assert cli.main(argv) == 0
    assert "4 cells run, 2 found finished" in capsys.readouterr().out
    meta = json.loads((dest / "tiny.json").read_text())
    assert meta["command"] == "privbandit store-reference --suite tiny --out DIR --jobs 1"
    assert meta["suite_version"] == json.loads(stored[3].read_text())["suite_version"]
    assert check_stored(TINY, base=dest) == []
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit) as exit_:
        cli.main([*argv[:4], str(tmp_path / "file")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == f"privbandit store-reference: error: --out must be a folder, got the file {tmp_path / 'file'}"


@pytest.mark.slow
def test_the_manifest_names_version_command_streams_and_machine(stored):
    _, dest, archive, manifest = stored
    meta = json.loads(manifest.read_text())
    assert meta["suite_version"] == suite_version(TINY) and meta["cells"] == len(TINY.cells()) == 6
    assert meta["command"].startswith("privbandit store-reference") and len(meta["streams"]) == 2
    assert meta["made_on"] == machine() and {"numpy", "scipy", "scikit-learn", "blas", "numpy_simd"} <= set(machine())
    assert meta["stream_tolerance"] == STREAM_TOLERANCE and meta["format"] == MANIFEST_FORMAT == 2
    assert meta["streams_made_on"] == machine()
    for summary in meta["streams"].values():   # every round of the stream, in 16 blocks of 4 rounds
        assert summary["blocks"] == [[4 * i, 4 * i + 4] for i in range(16)]
        assert len(summary["sketch"]) == len(summary["scale"]) == 16
    assert check_stored(TINY, base=dest) == []
    assert archive.stat().st_size < 50_000


@pytest.mark.slow
def test_stored_cells_rerun_equal(stored, tmp_path):
    folder, dest, _, _ = stored
    names = install_stored(TINY, tmp_path / "installed", base=dest)
    assert len(names) == 6
    sample = TINY.cells()[::3]
    sweep(sample, tmp_path / "rerun", jobs=1)
    for cell in sample:  # the tables; the footers differ in the seeds each sweep planned
        pd.testing.assert_frame_equal(read_cell(cell_path(tmp_path / "rerun" / "cells", cell)),
                                      read_cell(cell_path(tmp_path / "installed" / "cells", cell)), check_exact=True)


@pytest.mark.slow
def test_a_mismatch_is_named(stored, tmp_path):
    _, dest, archive, manifest = stored
    meta = json.loads(manifest.read_text())
    assert meta["results_version"] == TINY.results_version
    (tmp_path / "tiny.tar.xz").write_bytes(archive.read_bytes())
    unsummarised = {k: v for k, v in meta.items() if k != "streams"}
    other_streams = {k: {**v, "sketch": [[0.0] * len(b) for b in v["sketch"]]} for k, v in meta["streams"].items()}
    format1 = {k: v for k, v in meta.items() if k != "format"}   # summaries of the first 64 rounds only
    for written, words in (({**meta, "results_version": TINY.results_version + 1}, "results_version"),
                           ({**meta, "privbandit": "0.0.0"}, "stored by"),
                           ({**meta, "streams": other_streams}, "round stream"),
                           (unsummarised, "without round-stream summaries"),
                           (format1, "stored with manifest format 1, this install reads format 2")):
        (tmp_path / "tiny.json").write_text(json.dumps(written))
        problems = check_stored(TINY, base=tmp_path)
        assert len(problems) == (2 if words == "round stream" else 1) and words in problems[0]
        assert match_stored(TINY, base=tmp_path).usable == ()
    # a manifest stored before cells were checked one by one is valid only as a whole, by its suite version
    old = {k: v for k, v in meta.items() if k != "results_version"}
    (tmp_path / "tiny.json").write_text(json.dumps(old))
    assert check_stored(TINY, base=tmp_path) == []
    (tmp_path / "tiny.json").write_text(json.dumps({**old, "suite_version": "tiny-0"}))
    assert "suite version tiny-0 stored" in check_stored(TINY, base=tmp_path)[0]
    assert "no stored results" in check_stored(TINY, base=tmp_path / "none")[0]


@pytest.mark.slow
def test_stored_results_are_valid_cell_by_cell(stored, tmp_path):
    """An agent added to the suite after the results were stored runs alone; a stream that differs from the stored
    one beyond rounding runs its cells; every other stored cell stands in."""
    _, dest, _, manifest = stored
    grown = replace(TINY, grids=(replace(TINY.grids[0], agents=TINY.grids[0].agents + (
        AgentEntry("elim-ssp", private=True, reference="elim-nonprivate"),)),))
    assert suite_version(grown) != suite_version(TINY)
    match = match_stored(grown, base=dest)
    new = {c.key for c in grown.cells() if c.agent.label == "elim-ssp"}
    assert set(match.unstored) == new and len(new) == 2 and match.problems == ()
    assert set(match.usable) == {c.key for c in TINY.cells()}
    assert "2 cells of the suite are not in the stored results (agents: elim-ssp)" in check_stored(grown, base=dest)
    meta = json.loads(manifest.read_text())
    (tmp_path / "tiny.tar.xz").write_bytes((dest / "tiny.tar.xz").read_bytes())
    one = sorted(meta["streams"])[0]
    (tmp_path / "tiny.json").write_text(json.dumps(shifted(meta, one, 1e-3)))
    match = match_stored(TINY, base=tmp_path)
    assert len(match.problems) == 1 and one in match.problems[0] and "its 3 cells run" in match.problems[0]
    assert "by 0.001 of its scale" in match.problems[0]
    assert len(match.usable) == 3 and all(f"seed{one[-1]}__" not in k for k in match.usable)


@pytest.mark.slow
def test_a_stream_equal_up_to_rounding_stands_in_and_is_said_inexact(stored, tmp_path):
    """Other bytes within the tolerance (another CPU's last bits) keep the stored cells; just over it they run,
    and the problem names what differs between the stored machine and this one."""
    _, dest, _, manifest = stored
    meta = json.loads(manifest.read_text())
    (tmp_path / "tiny.tar.xz").write_bytes((dest / "tiny.tar.xz").read_bytes())
    one = sorted(meta["streams"])[0]
    (tmp_path / "tiny.json").write_text(json.dumps(shifted(meta, one, 1e-13)))
    match = match_stored(TINY, base=tmp_path)
    assert match.problems == () and match.inexact == (one,) and len(match.usable) == 6
    other = {**meta["streams_made_on"], "numpy_simd": "X86_V2 X86_V3 X86_V4 AVX512_SKX"}   # where they were summarised
    (tmp_path / "tiny.json").write_text(json.dumps({**shifted(meta, one, 3 * STREAM_TOLERANCE),
                                                    "streams_made_on": other}))
    match = match_stored(TINY, base=tmp_path)
    assert len(match.usable) == 3 and match.inexact == ()
    assert f"numpy_simd X86_V2 X86_V3 X86_V4 AVX512_SKX -> {machine()['numpy_simd']}" in match.problems[-1]


@pytest.mark.slow
def test_stream_difference_is_zero_for_the_same_bytes_tiny_for_rounding_and_large_for_another_seed(stored):
    cells = {c.seed: c for c in TINY.cells()}
    a, b = stream_summary(cells[0]), stream_summary(cells[1])
    assert stream_difference(a, a) == 0.0
    assert stream_difference(a, b) > 1e-3                      # another seed: another stream
    assert stream_difference(a, {**a, "sketch": a["sketch"][:-1]}) == float("inf")   # a block missing
    assert stream_difference(a, {**a, "blocks": a["blocks"][::-1]}) == float("inf")
    old = {"sha256": "0" * 64, "sketch": a["sketch"][0], "scale": a["scale"][0]}   # format 1: the first 64 rounds
    assert stream_difference(old, a) == float("inf") and stream_difference(a, old) == float("inf")


def test_stream_blocks_cover_every_round_in_nearly_equal_blocks():
    from privbandit.bench.stored import BLOCK_ROUNDS, STREAM_BLOCKS, stream_blocks

    for horizon in (1, 5, 16, 64, 1000, 2 ** 20, 2 ** 22 + 3):
        blocks = stream_blocks(horizon)
        assert blocks[0][0] == 0 and blocks[-1][1] == horizon
        assert all(b[0] == a[1] for a, b in zip(blocks, blocks[1:]))
        sizes = {stop - start for start, stop in blocks}
        assert max(sizes) - min(sizes) <= 1 and max(sizes) <= BLOCK_ROUNDS and min(sizes) >= 1
        assert len(blocks) == (min(horizon, STREAM_BLOCKS) if horizon <= STREAM_BLOCKS * BLOCK_ROUNDS else 65)


LONG = Suite("long", "one agent, one env, one seed, 256 rounds", (
    Grid((AgentEntry("uniform", private=False),), (lin_env("rare-direction", 2, 2),), seeds=1, horizon=256),))


@pytest.fixture(scope="module")
def long_stored(tmp_path_factory):
    return stored_suite(LONG, tmp_path_factory)[1]


def perturbed_round(monkeypatch, round_: int, by: float) -> None:
    """Every env of ``PrivLinCB-v0``'s class draws its stream as before except the reward of arm 0 in round
    ``round_`` (counted from the last reset), moved by ``by`` (through the public reset and sample_batch)."""
    import gymnasium as gym

    cls = type(gym.make("PrivLinCB-v0").unwrapped)
    reset, sample, seen = cls.reset, cls.sample_batch, {}

    def reset_(self, *, seed=None, options=None):
        seen[id(self)] = 0
        return reset(self, seed=seed, options=options)

    def sample_(self, n):
        batch = sample(self, n)
        start = seen[id(self)]
        seen[id(self)] = start + n
        if start <= round_ < start + n:
            rewards = batch.rewards.copy()
            rewards[round_ - start, 0] += by
            batch = batch._replace(rewards=rewards)
        return batch

    monkeypatch.setattr(cls, "reset", reset_)
    monkeypatch.setattr(cls, "sample_batch", sample_)


@pytest.mark.slow
@pytest.mark.parametrize("round_", [64, 200, 255])
def test_a_stream_changed_only_after_its_first_64_rounds_does_not_match(long_stored, monkeypatch, round_):
    """One reward of one late round moved by 1e-3: its block's sketch moves by 1e-3 of a scale of 64 rounds'
    rewards, far over the tolerance, so the stored cell runs; the first 64 rounds (all format 1 looked at) are
    unchanged. Moved by a rounding-sized 1e-15 the cell still stands in, as equal up to rounding."""
    (cell,) = LONG.cells()
    assert match_stored(LONG, base=long_stored).usable == (cell.key,)
    perturbed_round(monkeypatch, round_, 1e-15)
    match = match_stored(LONG, base=long_stored)
    assert match.usable == (cell.key,) and len(match.inexact) == 1 and match.problems == ()
    monkeypatch.undo()
    perturbed_round(monkeypatch, round_, 1e-3)
    match = match_stored(LONG, base=long_stored)
    assert match.usable == () and len(match.problems) == 1 and "round stream rare-direction-d2k2|T=256|seed=0" \
        in match.problems[0] and "its 1 cells run" in match.problems[0]


@pytest.mark.slow
def test_a_sampled_check_leaves_the_other_streams_unchecked_never_matching(stored):
    """``sample``: the streams not summarised are unchecked; their cells are not usable, and check_stored says
    how many streams it did not check."""
    dest = stored[1]
    match = match_stored(TINY, base=dest, sample=1)
    assert len(match.usable) == 3 and len(match.unchecked) == 3 and not set(match.usable) & set(match.unchecked)
    assert match.problems == () and set(match.usable) | set(match.unchecked) == {c.key for c in TINY.cells()}
    assert check_stored(TINY, base=dest, sample=1) == ["1 round streams unchecked (3 cells): sample=1"]
    assert match_stored(TINY, base=dest, sample=2).unchecked == ()


@pytest.mark.slow
def test_refreshing_the_summaries_of_an_old_manifest_keeps_the_cells_and_every_other_entry(stored, tmp_path,
                                                                                           monkeypatch, capsys):
    """A format-1 manifest (first 64 rounds only) is refused with a message naming the command that refreshes it;
    ``store-reference --streams-only`` rewrites only its summaries: the archive's bytes and the other entries stay."""
    from privbandit.bench import suites

    _, dest, archive, manifest = stored
    meta = json.loads(manifest.read_text())
    old = {**{k: v for k, v in meta.items() if k not in {"format", "stream_blocks", "streams_made_on"}},
           "stream_rounds": 64, "streams": {k: {"sha256": "0" * 64, "sketch": v["sketch"][0], "scale": v["scale"][0]}
                                            for k, v in meta["streams"].items()}}
    (tmp_path / "tiny.tar.xz").write_bytes(archive.read_bytes())
    (tmp_path / "tiny.json").write_text(json.dumps(old))
    (problem,) = check_stored(TINY, base=tmp_path)
    assert problem.endswith("refresh the summaries with privbandit store-reference --suite tiny --streams-only")
    monkeypatch.setitem(suites.SUITES, "tiny", TINY)
    assert cli.main(["store-reference", "--suite", "tiny", "--streams-only", "--dest", str(tmp_path)]) == 0
    assert "round-stream summaries made again" in capsys.readouterr().out
    assert (tmp_path / "tiny.tar.xz").read_bytes() == archive.read_bytes()
    assert json.loads((tmp_path / "tiny.json").read_text()) == meta
    assert check_stored(TINY, base=tmp_path) == []
    for argv, words in ((["--streams-only", "--out", str(tmp_path)], "--streams-only runs no cell: give no --out"),
                        ([], "--out is required"),
                        (["--streams-only", "--dest", str(tmp_path / "none")], "no stored results of suite 'tiny'")):
        with pytest.raises(SystemExit) as exit_:
            cli.main(["store-reference", "--suite", "tiny", *argv])
        assert exit_.value.code == 2 and words in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.slow
def test_the_leaderboard_ranks_each_board_with_paired_intervals(stored, tmp_path, capsys):
    folder = stored[0]
    sweep(TINY.cells(), folder, jobs=1)  # writes results.csv
    boards = ranked_boards([read_results(folder)])
    jdp = boards[boards["model"] == "jdp"]
    assert list(jdp["rank"]) == [1, 2, 3] and jdp["mean"].is_monotonic_increasing
    ref = jdp["reference"].iloc[0]
    assert ref in {"uniform", "elim-nonprivate"} and float(jdp.loc[jdp["agent"] == ref, "diff"].iloc[0]) == 0.0
    assert "minus" in leaderboard_markdown(boards)
    assert cli.main(["leaderboard", str(folder), "--reference", "uniform"]) == 0
    assert "minus uniform (paired 95% CI)" in capsys.readouterr().out


@pytest.mark.slow
def test_the_leaderboard_reads_the_shipped_stored_results(capsys):
    """``leaderboard --stored quick`` reads the cells out of the shipped archive (as bytes, never a path) and
    ranks them: every stored agent of a joint-DP board appears once."""
    from privbandit.bench.stored import stored_results

    table = stored_results("quick")
    assert cli.main(["leaderboard", "--stored", "quick"]) == 0
    out = capsys.readouterr().out
    board = out.split("## heavy-tailed-d5k5, T=65536, jdp eps=1\n", 1)[1].split("\n## ", 1)[0]
    held = set(table.loc[(table["env"] == "heavy-tailed-d5k5") & (table["horizon"] == 65536)
                         & table["privacy_model"].isin(["jdp", "none"]), "agent"])
    assert held and all(board.count(f"| {agent} |") == 1 for agent in held)


@pytest.mark.slow
@pytest.mark.parametrize("suite", ["quick", "paper"])
def test_the_shipped_results_match_this_install(suite):
    """The stored results of both suites: their version (cell definitions and results_version), every cell and a
    sample of three round streams, every round of them, match this install (every stream: the slow tests below)."""
    from privbandit.bench.suites import get_suite

    match = match_stored(get_suite(suite), sample=3)
    assert match.problems == () and match.unstored == () and match.usable and match.unchecked


@pytest.mark.slow
def test_bench_delta_sets_the_private_cells_delta_and_then_runs_the_baselines_again(stored, tmp_path, monkeypatch,
                                                                                   capsys):
    import privbandit.bench.stored as reference
    from privbandit.bench import suites

    monkeypatch.setitem(suites.SUITES, "tiny", TINY)
    monkeypatch.setattr(reference, "STORED_DIR", stored[1])
    assert cli.main(["bench", "--suite", "tiny", "--delta", "0.001", "--out", str(tmp_path / "a"), "--jobs", "1",
                     "--no-progress"]) == 0
    table = read_cell(tmp_path / "a" / "results.csv")
    private = table["privacy_model"] == "jdp"
    assert private.any() and set(table.loc[private, "delta"]) == {0.001}
    assert cli.main(["bench", "--suite", "tiny", "--agent", "elim-ssp", "--delta", "0.001", "--out",
                     str(tmp_path / "b"), "--jobs", "1", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "8 cells (8 run, 0 already finished)" in captured.out
    assert "--seeds, --horizon and --delta change the baseline cells" in captured.err
    table = read_cell(tmp_path / "b" / "results.csv")
    assert set(table.loc[table["privacy_model"] == "jdp", "delta"]) == {0.001}


@pytest.mark.slow
def test_one_stored_cell_of_every_baseline_reruns_to_the_same_table(tmp_path):
    """One cell of every agent of the quick suite (its shortest horizon and first seed) runs again to the stored
    table up to rounding: a cell's seed fixes its round stream and the agent's randomness, so a difference beyond
    rounding means the code changed a baseline's numbers. Then raise the suite's ``results_version`` and regenerate
    with privbandit store-reference. Up to rounding, not bit for bit: on another CPU or BLAS kernel the stream and
    the agents' arithmetic (the means x @ theta of the regret column) move in their last bits (relative 1e-16,
    measured in docs/guide/benchmarking.md), so the tolerance is the streams' own."""
    from privbandit.bench.suites import get_suite

    quick = get_suite("quick")
    one: dict[str, object] = {}
    for cell in sorted(quick.cells(), key=lambda c: (c.horizon, c.seed, c.key)):
        one.setdefault(cell.agent.label, cell)
    sample = list(one.values())
    assert len(sample) == len({c.agent.label for c in quick.cells()})
    install_stored(quick, tmp_path / "stored", {c.key for c in sample})
    sweep(sample, tmp_path / "rerun", jobs=1)
    for cell in sample:
        pd.testing.assert_frame_equal(read_cell(cell_path(tmp_path / "rerun" / "cells", cell)),
                                      read_cell(cell_path(tmp_path / "stored" / "cells", cell)), check_exact=False,
                                      rtol=STREAM_TOLERANCE, atol=1e-12, obj=cell.key)


@pytest.mark.slow
def test_bench_runs_only_the_challenger_on_stored_baselines_and_says_when_it_cannot(stored, tmp_path, monkeypatch,
                                                                                   capsys):
    import privbandit.bench.stored as reference
    from privbandit.bench import suites

    _, dest, archive, manifest = stored
    monkeypatch.setitem(suites.SUITES, "tiny", TINY)
    monkeypatch.setattr(reference, "STORED_DIR", dest)
    assert cli.main(["bench", "--suite", "tiny", "--agent", "elim-ssp", "--out", str(tmp_path / "a"), "--jobs", "1",
                     "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "8 cells (2 run, 6 already finished)" in out
    assert "6 baseline cells from the stored reference results" in (tmp_path / "a" / "report.md").read_text()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "tiny.tar.xz").write_bytes(archive.read_bytes())
    (bad / "tiny.json").write_text(json.dumps({**json.loads(manifest.read_text()), "results_version": 0}))
    monkeypatch.setattr(reference, "STORED_DIR", bad)
    assert cli.main(["bench", "--suite", "tiny", "--agent", "elim-ssp", "--out", str(tmp_path / "b"), "--jobs", "1",
                     "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "8 cells (8 run, 0 already finished)" in captured.out
    assert "stored baselines not used (results_version 0 stored, 1 here" in captured.err
    # a stream equal to the stored one up to rounding (another CPU): the stored cells stand in, and the report says so
    meta = json.loads(manifest.read_text())
    (bad / "tiny.json").write_text(json.dumps(shifted(meta, sorted(meta["streams"])[0], 1e-13)))
    assert cli.main(["bench", "--suite", "tiny", "--agent", "elim-ssp", "--out", str(tmp_path / "r"), "--jobs", "1",
                     "--no-progress"]) == 0
    assert "8 cells (2 run, 6 already finished)" in capsys.readouterr().out
    assert "1 of their round streams equal the stored ones up to rounding" in (tmp_path / "r" / "report.md").read_text()
    # an agent added to the suite after the results were stored: its cells run beside the challenger's
    monkeypatch.setattr(reference, "STORED_DIR", dest)
    grown = replace(TINY, grids=(replace(TINY.grids[0], agents=TINY.grids[0].agents + (
        AgentEntry("linucb", {"batch_size": 4}, label="linucb-batch4", private=False),)),))
    monkeypatch.setitem(suites.SUITES, "tiny", grown)
    assert cli.main(["bench", "--suite", "tiny", "--agent", "elim-ssp", "--out", str(tmp_path / "g"), "--jobs", "1",
                     "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "10 cells (4 run, 6 already finished)" in captured.out
    assert "2 baseline cells are not in the stored results and run (agents: linucb-batch4)" in captured.err
    monkeypatch.setitem(suites.SUITES, "tiny", TINY)
    assert cli.main(["bench", "--suite", "tiny", "--agent", "elim-ssp", "--out", str(tmp_path / "c"), "--jobs", "1",
                     "--no-progress", "--baselines", "rerun"]) == 0
    assert "8 cells (8 run, 0 already finished)" in capsys.readouterr().out


def other_machines() -> list[dict[str, str]]:
    """Settings under which this install computes as another machine would: numpy without the SIMD targets beyond
    its baseline that this CPU has (AVX2, AVX-512: their exp and log round differently), and on x86-64 OpenBLAS
    with its generic Prescott kernel instead of the one it chose for this CPU."""
    import numpy as np

    found = np.show_config(mode="dicts")["SIMD Extensions"].get("found", [])
    out = [{"NPY_DISABLE_CPU_FEATURES": " ".join(found)}] if found else []
    if platform.machine().lower() in {"x86_64", "amd64"}:
        out.append({"OPENBLAS_CORETYPE": "Prescott"})
    return out


AS_ANOTHER_MACHINE = """
import json
from privbandit.bench.stored import check_stored, match_stored
from privbandit.bench.suites import get_suite
out = {}
for name in ("quick", "paper"):
    suite = get_suite(name)
    out[name] = dict(problems=check_stored(suite), inexact=len(match_stored(suite).inexact))
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.parametrize("setting", other_machines(), ids=lambda s: " ".join(f"{k}={v}" for k, v in s.items()))
def test_the_shipped_results_match_as_another_machine(setting):
    """Every stored round stream of both suites matches in a process that computes as another CPU would (numpy's
    SIMD dispatch limited, another OpenBLAS kernel). Matching by exact bytes failed here: on an AVX-512 machine the
    heavy-tailed streams change without numpy's AVX-512 code and the real-data streams with another kernel."""
    env = {**os.environ, **setting}
    done = subprocess.run([sys.executable, "-c", AS_ANOTHER_MACHINE], env=env, capture_output=True, text=True,
                          check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert {name: r["problems"] for name, r in result.items()} == {"quick": [], "paper": []}, (setting, result)
