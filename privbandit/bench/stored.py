"""Stored results: the baseline cells of a suite, run once, shipped in the package data.

A challenger run (``privbandit bench --suite S --agent X``) needs the baselines' per-seed results, which are
the same on every machine for one version of the suite and the library. :func:`pack_results` packs the cell files
of a finished suite (:mod:`privbandit.bench.cells`'s format) into ``privbandit/data/reference/SUITE.tar.xz`` with a
manifest ``SUITE.json`` (the versions, the command, a :func:`stream_summary` of every round stream);
:func:`refresh_stream_summaries` rewrites only the summaries (``privbandit store-reference --suite S
--streams-only``). :func:`match_stored` says which cells the stored ones stand in for here: the library version and
the suite's ``results_version`` are the stored ones, the archive holds the cell, and its round stream here is the
stored one up to rounding in every round (:func:`stream_difference`; bytes do not carry across CPUs and BLAS
kernels). :func:`install_stored` writes the stored cell files into a results folder, where the sweep finds them
finished; :func:`stored_results` reads them as one table, :func:`stored_source` as a source of the results board.

A change to a baseline's code that changes its numbers must raise the suite's ``results_version``
(``tests/bench/test_reference.py`` re-runs one stored cell of every baseline and fails until it is raised). What
the manifest holds, when a stored cell stands in for a run and why streams are compared to a tolerance: the
benchmarking guide, ``docs/guide/benchmarking.md``.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_info

from .. import __version__
from ..report.board import BoardSource
from ..report.files import atomic_write, read_cell
from ..sim.runner import split_seed
from .cells import cell_path, load_cell
from .grid import canonical
from .suites import get_suite

__all__ = ["MANIFEST_FORMAT", "STREAM_BLOCKS", "STREAM_TOLERANCE", "StoredMatch", "check_stored", "install_stored",
           "machine", "match_stored", "pack_results", "refresh_stream_summaries", "stored_paths", "stored_results",
           "stored_source", "stream_blocks", "stream_difference", "stream_key", "stream_summary", "suite_version"]

MANIFEST_FORMAT = 2
"""The manifest's ``format``: 2 summarises every round of a stream (:func:`stream_summary`); 1 (no ``format``
field) summarised its first 64 rounds only, and is not used (:func:`refresh_stream_summaries` rewrites it)."""

STREAM_BLOCKS = 16
"""Blocks of consecutive rounds a stream's summary cuts it into (more for a stream longer than
:data:`BLOCK_ROUNDS` times this, one per round for a stream shorter than this): :func:`stream_blocks`."""

BLOCK_ROUNDS = 65536
"""The most rounds of one block (memory bound of :func:`stream_summary`: one block of rounds at a time)."""

SKETCH_SIZE = 4
"""Projections of the features, and of the rewards, of each block that a stream's summary keeps."""

SKETCH_PIECE = 65536
"""Length of the fixed +-1 vectors a block's values are projected on piece by piece (:func:`_sketch`)."""

SKETCH_SEED = 20261129
"""Seed of the fixed +-1 vectors a sketch projects on."""

STREAM_TOLERANCE = 1e-9
"""The largest :func:`stream_difference` of a stream that stored results stand in for: rounding differences
between CPUs and BLAS kernels are about 1e-16 of a block's scale; another seed, generator or env code is about 0.01
or more. Measured in ``docs/guide/benchmarking.md`` ("Stored results on another machine")."""

STORED_DIR = Path(__file__).resolve().parents[1] / "data" / "reference"
"""Where the package data keeps the stored results."""


def stored_paths(suite: str, base: Path | None = None) -> tuple[Path, Path]:
    """The (archive, manifest) paths of a suite's stored results (in the package data unless ``base``)."""
    base = STORED_DIR if base is None else Path(base)
    return base / f"{suite}.tar.xz", base / f"{suite}.json"


def suite_version(suite) -> str:
    """``NAME-HASH``: a hash of the suite's ``results_version`` and of every cell's identity."""
    h = hashlib.sha256(f"results_version={suite.results_version}".encode())
    for cell in sorted(suite.cells(), key=lambda c: c.key):
        h.update(canonical(cell.identity()).encode())
    return f"{suite.name}-{h.hexdigest()[:16]}"


def stream_blocks(horizon: int) -> list[tuple[int, int]]:
    """The ``(start, stop)`` rounds of the blocks a stream of ``horizon`` rounds is summarised in: consecutive,
    covering every round, of nearly equal length; :data:`STREAM_BLOCKS` of them (one per round for a shorter
    stream, more where a block would exceed :data:`BLOCK_ROUNDS` rounds)."""
    n = min(horizon, max(STREAM_BLOCKS, -(-horizon // BLOCK_ROUNDS)))
    edges = [i * horizon // n for i in range(n + 1)]
    return list(zip(edges[:-1], edges[1:]))


@lru_cache(maxsize=8)
def _signs(n: int) -> np.ndarray:
    """:data:`SKETCH_SIZE` fixed +-1 vectors of length ``n`` (integers from a fixed seed: the same on every
    machine); read-only."""
    out = 2.0 * np.random.default_rng([SKETCH_SEED, n]).integers(0, 2, size=(SKETCH_SIZE, n)) - 1.0
    out.flags.writeable = False
    return out


def _sketch(values: np.ndarray) -> list[float]:
    """The projections of ``values`` (flattened) on :data:`SKETCH_SIZE` fixed +-1 vectors of their length.

    The vector of projection j has the sign ``u_j(p) w_j(i)`` at position ``i`` of piece ``p`` (pieces of
    :data:`SKETCH_PIECE` values): one fixed vector ``w_j`` per piece length, one ``u_j`` per number of pieces, so
    a block of a million rounds needs no sign vector of its length. Changing one value by ``e`` moves every
    projection by ``e``; other rounding of the values moves them by at most that rounding times the values' sum of
    absolute values (:func:`stream_difference`'s scale)."""
    v = np.ascontiguousarray(values, dtype=np.float64).ravel()
    pieces, rest = divmod(v.size, SKETCH_PIECE)
    parts = np.zeros((pieces + (rest > 0), SKETCH_SIZE))
    if pieces:
        parts[:pieces] = v[:pieces * SKETCH_PIECE].reshape(pieces, SKETCH_PIECE) @ _signs(SKETCH_PIECE).T
    if rest:
        parts[pieces] = _signs(SKETCH_PIECE)[:, :rest] @ v[pieces * SKETCH_PIECE:]
    return [float(x) for x in (_signs(len(parts)) * parts.T).sum(axis=1)]


def stream_summary(cell) -> dict[str, Any]:
    """What the manifest stores of a cell's whole round stream, and what another install's stream is compared with.

    The stream is drawn as the runner draws it (the env reset with the seed
    :func:`privbandit.sim.runner.split_seed` gives the cell), one block of :func:`stream_blocks` at a time. For the
    features and the rewards of every arm in each block: a sketch (``sketch``: per block, the projections of the
    features' and of the rewards' values on :data:`SKETCH_SIZE` fixed +-1 vectors each, :func:`_sketch`) with the
    sum of their absolute values (``scale``: per block, features then rewards). ``blocks``: the blocks' (start,
    stop) rounds. :func:`stream_difference` compares two summaries.
    """
    env_seed, _ = split_seed(cell.seed_sequence())
    env = cell.env.make(cell.horizon)
    blocks, sketch, scale = stream_blocks(cell.horizon), [], []
    try:
        env.reset(seed=env_seed)
        for start, stop in blocks:
            batch = env.unwrapped.sample_batch(stop - start)
            values = [np.asarray(a, dtype=np.float64) for a in (batch.features, batch.rewards)]
            sketch.append([x for v in values for x in _sketch(v)])
            scale.append([float(np.abs(v).sum()) for v in values])
    finally:
        env.close()
    return {"blocks": [list(b) for b in blocks], "sketch": sketch, "scale": scale}


def stream_difference(stored: dict[str, Any], here: dict[str, Any]) -> float:
    """The largest difference of two :func:`stream_summary` sketches over the blocks, each relative to the stored
    scale of its block's values (features and rewards each against their own): 0 when every sketch is equal bit for
    bit (the same bytes), about 1e-16 for the same stream computed with other rounding (another CPU's SIMD code for
    exp and log, another BLAS kernel), of order 0.01 or more for another stream, or where any one block's rounds
    differ by more than rounding. ``inf`` for summaries of streams of other blocks or shapes (or a summary of an
    older format)."""
    try:
        a, b = np.asarray(stored["sketch"], dtype=float), np.asarray(here["sketch"], dtype=float)
        scale = np.asarray(stored["scale"], dtype=float)
        same = stored["blocks"] == here["blocks"]
    except (KeyError, ValueError):
        return float("inf")
    if not same or a.shape != b.shape or a.ndim != 2 or a.shape != (len(stored["blocks"]), 2 * SKETCH_SIZE) \
            or scale.shape != (len(a), 2):
        return float("inf")
    if np.array_equal(a, b):
        return 0.0
    scale = np.repeat(np.maximum(scale, np.finfo(float).tiny), SKETCH_SIZE, axis=1)
    return float(np.max(np.abs(a - b) / scale))


def stream_key(cell) -> str:
    """``env|T=horizon|seed``: the round stream a cell plays (its env, horizon and seed fix it)."""
    return f"{cell.env.label}|T={cell.horizon}|seed={cell.seed}"


def machine() -> dict[str, str]:
    """Where results are made: the versions of privbandit, numpy, scipy and scikit-learn (``absent`` without it),
    the BLAS numpy calls and the kernel it chose for this CPU, and the CPU features numpy dispatches to (the SIMD
    code of its exp, log and power differs between, say, AVX2 and AVX-512)."""
    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "absent"

    out = {name: version(name) for name in ("privbandit", "numpy", "scipy", "scikit-learn")}
    try:
        simd = np.show_config(mode="dicts").get("SIMD Extensions", {})
        out["numpy_simd"] = " ".join([*simd.get("baseline", []), *simd.get("found", [])])
    except TypeError:                                    # numpy < 1.26 has no mode="dicts"
        out["numpy_simd"] = "unknown"
    out["blas"] = _blas()
    return out


def _blas() -> str:
    """``api version kernel`` of numpy's BLAS (threadpoolctl reads the kernel OpenBLAS chose for this CPU), or
    ``unknown``."""
    libs = [lib for lib in threadpool_info() if lib.get("user_api") == "blas"]
    libs.sort(key=lambda lib: "numpy" not in str(lib.get("filepath", "")))     # numpy's own first
    if not libs:
        return "unknown"
    return " ".join(str(libs[0].get(k, "?")) for k in ("internal_api", "version", "architecture"))


def machine_differences(stored: dict[str, str] | None) -> str:
    """``key stored -> here`` for every entry of :func:`machine` that differs (empty when none does)."""
    here, stored = machine(), stored or {}
    return ", ".join(f"{k} {stored.get(k, 'unrecorded')} -> {here[k]}" for k in here if stored.get(k) != here[k])


def pack_results(suite, folder: str | Path, command: str, dest: Path | None = None) -> tuple[Path, Path]:
    """Pack the suite's finished cell files of ``folder/cells`` (every one checked) with a manifest.

    Raises
    ------
    ValueError
        If a cell of the suite is missing from ``folder`` or fails the check.
    """
    cells = suite.cells()
    archive, manifest = stored_paths(suite.name, dest)
    archive.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz", preset=9) as tar:
        for cell in sorted(cells, key=lambda c: c.key):
            path = cell_path(Path(folder) / "cells", cell)
            if not path.exists():
                raise ValueError(f"cell {cell.key} of suite {suite.name!r} is not in {folder}: run the suite first")
            load_cell(path)
            info = tarfile.TarInfo(path.name)
            data = path.read_bytes()
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    archive.write_bytes(buf.getvalue())
    meta = dict(suite=suite.name, suite_version=suite_version(suite), results_version=suite.results_version,
                privbandit=__version__, command=command, cells=len(cells), made_on=machine())
    _write_manifest(manifest, {**meta, **_summaries_meta(cells)})
    return archive, manifest


def _summaries_meta(cells: Sequence) -> dict[str, Any]:
    """The manifest's entries on the round streams of ``cells``: a :func:`stream_summary` of each distinct (env,
    horizon, seed) and how they are compared."""
    first: dict[str, Any] = {}
    for cell in cells:
        first.setdefault(stream_key(cell), cell)
    return dict(format=MANIFEST_FORMAT, stream_blocks=STREAM_BLOCKS, stream_tolerance=STREAM_TOLERANCE,
                streams={key: stream_summary(c) for key, c in first.items()}, streams_made_on=machine())


def _write_manifest(path: Path, meta: dict[str, Any]) -> None:
    """``meta`` as JSON, one entry a line, each list of numbers on one line (a block's sketch, its scale)."""
    text = json.dumps(meta, indent=1, sort_keys=True)
    text = re.sub(r"\[\s+([-+0-9.eE,\s]+?)\s+\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text)
    atomic_write(path, text + "\n")


def refresh_stream_summaries(suite, base: Path | None = None) -> Path:
    """Rewrite only the round-stream summaries of a suite's stored manifest from this install's envs (and its
    ``format``, ``stream_blocks`` and ``stream_tolerance``); the archive of cells and every other entry are kept
    as they are. Run it where the envs draw the streams the stored cells were run on (the summaries are what later
    installs are compared with): ``privbandit store-reference --suite S --streams-only``. Returns the manifest.

    Raises
    ------
    ValueError
        If the suite has no stored manifest and archive in ``base`` (default: the package data).
    """
    archive, manifest = stored_paths(suite.name, base)
    meta = stored_manifest(suite.name, base)
    if meta is None or not archive.exists():
        raise ValueError(f"no stored results of suite {suite.name!r} in {manifest.parent}: nothing to refresh")
    held = stored_keys(suite.name, base)
    cells = [c for c in suite.cells() if c.key in held]
    meta = {k: v for k, v in meta.items() if k != "stream_rounds"}    # format 1's first-64-rounds field
    _write_manifest(manifest, {**meta, **_summaries_meta(cells)})
    return manifest


def stored_manifest(suite_name: str, base: Path | None = None) -> dict[str, Any] | None:
    """The stored manifest of a suite (None if none is shipped)."""
    _, manifest = stored_paths(suite_name, base)
    try:
        return json.loads(manifest.read_text())
    except (OSError, ValueError):
        return None


def stored_keys(suite_name: str, base: Path | None = None) -> set[str]:
    """The keys of the cells the stored archive of a suite holds (empty if none is shipped)."""
    archive, _ = stored_paths(suite_name, base)
    if not archive.exists():
        return set()
    with tarfile.open(archive, mode="r:xz") as tar:
        return {m.name.removesuffix(".csv") for m in tar.getmembers()
                if m.isfile() and "/" not in m.name and not m.name.startswith(".") and m.name.endswith(".csv")}


@dataclass(frozen=True)
class StoredMatch:
    """Which cells the stored results of a suite stand in for here (:func:`match_stored`).

    ``usable``: keys of the cells taken from the store; ``unstored``: keys of the cells the store does not hold
    (they run); ``problems``: what did not match, one line each (a mismatch of the whole archive, or a round
    stream whose cells run); ``inexact``: the streams (``env|T=horizon|seed``) whose stored cells stand in
    though they are not the stored bytes, only within :data:`STREAM_TOLERANCE` of them (another CPU or BLAS);
    ``unchecked``: keys of stored cells whose round stream a sampled check did not summarise (neither usable nor
    known to differ: a caller that takes them takes them unchecked).
    """

    usable: tuple[str, ...]
    unstored: tuple[str, ...]
    problems: tuple[str, ...]
    inexact: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()


def _archive_problems(suite, meta: dict[str, Any] | None, archive: Path) -> list[str]:
    """What keeps every stored cell of ``suite`` from standing in (the archive, the versions)."""
    if meta is None or not archive.exists():
        return [f"no stored results for suite {suite.name!r} in this install"]
    problems = []
    if "results_version" in meta:
        if meta["results_version"] != suite.results_version:
            problems.append(f"results_version {meta['results_version']} stored, {suite.results_version} here (a "
                            "change to the library changed the baselines' numbers)")
    elif meta.get("suite_version") != suite_version(suite):
        problems.append(f"suite version {meta.get('suite_version')} stored, {suite_version(suite)} here (a cell's "
                        "definition or the suite's results_version changed)")
    if meta.get("privbandit") != __version__:
        problems.append(f"stored by privbandit {meta.get('privbandit')}, this is {__version__}")
    if "streams" not in meta:
        problems.append("stored without round-stream summaries (before streams were compared to a tolerance): "
                        "store them again")
    elif meta.get("format", 1) != MANIFEST_FORMAT:
        problems.append(f"stored with manifest format {meta.get('format', 1)}, this install reads format "
                        f"{MANIFEST_FORMAT} (format 1 summarised only the first 64 rounds of each round stream): "
                        f"refresh the summaries with privbandit store-reference --suite {suite.name} --streams-only")
    return problems


def match_stored(suite, cells: Sequence | None = None, base: Path | None = None,
                 sample: int | None = None) -> StoredMatch:
    """Which of ``cells`` (default: the suite's) the stored results of ``suite`` stand in for here.

    A cell is usable when the archive is valid for this install (library version, the suite's
    ``results_version``), holds the cell, and the cell's round stream here, every round of it, is within
    :data:`STREAM_TOLERANCE` of the stored one (:func:`stream_difference`; every distinct stream is summarised
    once). With ``sample``, only that many streams, spread over the list, are summarised: the cells of the others
    are ``unchecked``, never usable.
    """
    cells = list(suite.cells() if cells is None else cells)
    archive, _ = stored_paths(suite.name, base)
    meta = stored_manifest(suite.name, base)
    problems = _archive_problems(suite, meta, archive)
    if problems:
        return StoredMatch((), tuple(c.key for c in cells), tuple(problems))
    held = stored_keys(suite.name, base)
    unstored = tuple(c.key for c in cells if c.key not in held)
    streams: dict[str, list] = {}
    for c in cells:
        if c.key in held:
            streams.setdefault(stream_key(c), []).append(c)
    keys = sorted(streams)
    if sample is not None and sample < len(keys):
        keys = [keys[i] for i in np.linspace(0, len(keys) - 1, sample).round().astype(int)]
    unchecked = tuple(c.key for key in sorted(set(streams) - set(keys)) for c in streams[key])
    stored, tolerance, bad, inexact = meta["streams"], meta["stream_tolerance"], set(), []
    for key in keys:
        diff = stream_difference(stored[key], stream_summary(streams[key][0])) if key in stored else float("inf")
        if diff > tolerance:
            bad.add(key)
            problems.append(f"round stream {key} differs from the stored one by {diff:.2g} of its scale, over the "
                            f"tolerance {tolerance:g} (numpy's generators or the env code changed): its "
                            f"{len(streams[key])} cells run")
        elif diff > 0:
            inexact.append(key)
    if bad or inexact:
        differs = machine_differences(meta.get("streams_made_on", meta.get("made_on")))
        problems.extend([f"stored on another machine ({differs})"] if bad and differs else [])
    usable = tuple(c.key for key in keys if key not in bad for c in streams[key])
    return StoredMatch(usable, unstored, tuple(problems), tuple(inexact), unchecked)


def check_stored(suite, sample: int | None = None, base: Path | None = None) -> list[str]:
    """What keeps the stored results of ``suite`` from standing in for all its cells here (empty: nothing).

    Checks the manifest exists, its format, the library version and the suite's ``results_version`` (or, for a
    manifest stored before cells were checked one by one, the suite version), that the archive holds every cell of
    the suite, and the round streams: all of them, or with ``sample`` that many, spread over the list, and then
    the last line says how many streams were left unchecked (a sampled check is never a clean one: a caller that
    accepts it, as the documentation build does for the paper suite, takes those streams unchecked).
    """
    archive, _ = stored_paths(suite.name, base)
    problems = _archive_problems(suite, stored_manifest(suite.name, base), archive)
    if problems:
        return problems
    match = match_stored(suite, base=base, sample=sample)
    problems = list(match.problems)
    if match.unstored:
        labels = sorted({c.agent.label for c in suite.cells() if c.key in set(match.unstored)})
        problems.append(f"{len(match.unstored)} cells of the suite are not in the stored results (agents: "
                        f"{', '.join(labels)})")
    if match.unchecked:
        streams = {stream_key(c) for c in suite.cells() if c.key in set(match.unchecked)}
        problems.append(f"{len(streams)} round streams unchecked ({len(match.unchecked)} cells): sample={sample}")
    return problems


def install_stored(suite, folder: str | Path, keys: set[str] | None = None, base: Path | None = None) -> list[str]:
    """Write the stored cell files of ``suite`` (only those of the cell ``keys``, if given) into
    ``folder/cells`` (existing files are kept); returns their names."""
    archive, _ = stored_paths(suite.name, base)
    cells_dir = Path(folder) / "cells"
    cells_dir.mkdir(parents=True, exist_ok=True)
    names = []
    with tarfile.open(archive, mode="r:xz") as tar:
        for member in tar.getmembers():
            if not member.isfile() or "/" in member.name or member.name.startswith("."):
                continue
            if keys is not None and member.name.removesuffix(".csv") not in keys:
                continue
            target = cells_dir / member.name
            if not target.exists():
                atomic_write(target, tar.extractfile(member).read().decode())
            names.append(member.name)
    return names


def stored_results(suite: str) -> pd.DataFrame:
    """The stored results of a suite as one table (empty if none are shipped)."""
    archive, _ = stored_paths(suite)
    if not archive.exists():
        return pd.DataFrame()
    with tarfile.open(archive, mode="r:xz") as tar:
        tables = [read_cell(tar.extractfile(m).read()) for m in tar.getmembers() if m.isfile()]
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()


def stored_source(suite: str) -> BoardSource:
    """The :class:`~privbandit.report.board.BoardSource` of a suite's stored results (its baselines), for
    :func:`~privbandit.report.board.write_board`.

    Raises
    ------
    ValueError
        If this install has no stored results for ``suite``.
    """
    table = stored_results(suite)
    manifest = stored_manifest(suite)
    if table.empty or manifest is None:
        raise ValueError(f"no stored reference results for suite {suite!r} in this install")
    the_suite = get_suite(suite)
    notes = (f"stored reference results of suite `{suite}` ({manifest.get('suite_version', '')}): "
             f"{manifest.get('cells')} baseline cells made with privbandit {manifest.get('privbandit')}",
             f"suite `{suite}`: {the_suite.description}")
    return BoardSource(name=f"stored {suite}", table=table, command=str(manifest.get("command", "")), notes=notes,
                       references=the_suite.references())
