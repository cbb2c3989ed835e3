"""Stored reference results: the baseline cells of a suite, run once, shipped in the package data.

A challenger run (``privbandit bench --suite S --agent X``) needs the baselines' per-seed results, which
are the same on every machine for one version of the suite and the library. :func:`store_reference`
packs the cell files of a finished suite (:mod:`privbandit.sim.cells`'s format: table, footer with key,
identity, version and checksum) into one xz-compressed tar, ``privbandit/data/reference/SUITE.tar.xz``, with
a manifest ``SUITE.json``: the :func:`suite_version`, the library version, the ``command`` that made them, the
suite's declared ``results_version``, a :func:`stream_summary` per (env, horizon, seed) under ``streams``, the
``stream_tolerance`` and ``made_on`` (:func:`machine`).

A change to a baseline's code that changes its numbers must raise the suite's ``results_version``
(``tests/test_reference.py`` re-runs one stored cell of every baseline and fails until it is raised); a refactor
that leaves every number as it was keeps the stored results valid.

Stored results are valid per cell (:func:`match_reference`): a stored cell stands in for a run here when the
library version and the suite's ``results_version`` are the stored ones, the archive holds the cell and its round
stream here is the stored one up to rounding (:func:`stream_difference`). Bytes alone do not carry across
machines: numpy evaluates exp and log with other SIMD code on CPUs with AVX-512 than on CPUs without, and
OpenBLAS picks a kernel per CPU, which moves the last bits of the heavy-tailed and the real-data streams; another
seed, generator or env code moves them by far more. A stored cell then stands for the run of its experiment; its
agents see the same rounds up to rounding (the largest difference of final regret measured when stored cells are
run again on another CPU is in ``docs/guide/benchmarking.md``). A cell the archive does not hold (an agent added
to a suite after the results were stored, a challenger) runs; so does every cell of a stream that differs. A
manifest without ``results_version`` (stored before cells were checked one by one) is valid only as a whole.
:func:`install_reference` writes the stored cell files into a results folder, where the sweep finds them finished.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_info

from .. import __version__
from .cells import atomic_write, cell_path, load_cell
from .grid import canonical
from .runner import split_seed

__all__ = ["STREAM_ROUNDS", "STREAM_TOLERANCE", "StoredMatch", "check_reference", "install_reference", "machine",
           "match_reference", "reference_path", "store_reference", "stream_difference", "stream_key", "stream_summary",
           "suite_version"]

STREAM_ROUNDS = 64
"""Rounds of a stream whose features and rewards its summary holds (:func:`stream_summary`)."""

SKETCH_SIZE = 4
"""Projections of the features, and of the rewards, that a stream's summary keeps."""

SKETCH_SEED = 20261129
"""Seed of the fixed +-1 vectors a sketch projects on."""

STREAM_TOLERANCE = 1e-9
"""The largest :func:`stream_difference` of a stream that stored results stand in for: rounding differences
between CPUs and BLAS kernels are about 1e-16 of the scale; another seed, generator or env code is about 0.01 or
more. Measured in ``docs/guide/benchmarking.md`` ("Stored results on another machine")."""

REFERENCE_DIR = Path(__file__).resolve().parents[1] / "data" / "reference"
"""Where the package data keeps the stored results."""


def reference_path(suite: str, base: Path | None = None) -> tuple[Path, Path]:
    """The (archive, manifest) paths of a suite's stored results (in the package data unless ``base``)."""
    base = REFERENCE_DIR if base is None else Path(base)
    return base / f"{suite}.tar.xz", base / f"{suite}.json"


def suite_version(suite) -> str:
    """``NAME-HASH``: a hash of the suite's ``results_version`` and of every cell's identity."""
    h = hashlib.sha256(f"results_version={suite.results_version}".encode())
    for cell in sorted(suite.cells(), key=lambda c: c.key):
        h.update(canonical(cell.identity()).encode())
    return f"{suite.name}-{h.hexdigest()[:16]}"


def _stream_batch(cell, rounds: int):
    """The first ``rounds`` rounds of the cell's round stream (as the runner resets the env: its seed is
    :func:`privbandit.sim.runner.split_seed` of the cell's)."""
    env_seed, _ = split_seed(cell.seed_sequence())
    env = cell.env.make(cell.horizon)
    try:
        env.reset(seed=env_seed)
        return env.unwrapped.sample_batch(min(rounds, cell.horizon))
    finally:
        env.close()


def _signs(n: int) -> np.ndarray:
    """The :data:`SKETCH_SIZE` fixed +-1 vectors of length ``n`` a sketch projects on (integers from a fixed
    seed: the same on every machine)."""
    return 2.0 * np.random.default_rng([SKETCH_SEED, n]).integers(0, 2, size=(SKETCH_SIZE, n)) - 1.0


def stream_summary(cell, rounds: int = STREAM_ROUNDS) -> dict[str, Any]:
    """What the manifest stores of a cell's round stream, and what another install's stream is compared with.

    For the features and the rewards of every arm in the first ``rounds`` rounds: the sha256 of their bytes
    (``sha256``: equal only where the stream is bit for bit the stored one), and a sketch (``sketch``: the
    projections of the features' and of the rewards' values on :data:`SKETCH_SIZE` fixed +-1 vectors each) with
    the sum of their absolute values (``scale``). :func:`stream_difference` compares two summaries.
    """
    batch = _stream_batch(cell, rounds)
    h = hashlib.sha256()
    sketch, scale = [], []
    for a in (batch.features, batch.rewards):
        v = np.ascontiguousarray(a, dtype=np.float64)
        h.update(v.tobytes())
        sketch.extend(float(s) for s in _signs(v.size) @ v.ravel())
        scale.append(float(np.abs(v).sum()))
    return {"sha256": h.hexdigest(), "sketch": sketch, "scale": scale}


def stream_difference(stored: dict[str, Any], here: dict[str, Any]) -> float:
    """The largest difference of two :func:`stream_summary` sketches, relative to the stored scale of the values
    (features and rewards each against their own): 0 for the same bytes, about 1e-16 for the same stream
    computed with other rounding (another CPU's SIMD code for exp and log, another BLAS kernel), of order 0.01
    or more for another stream. ``inf`` for summaries of streams of other shapes."""
    if here["sha256"] == stored["sha256"]:
        return 0.0
    a, b = np.asarray(stored["sketch"], dtype=float), np.asarray(here["sketch"], dtype=float)
    if a.shape != b.shape or a.size != SKETCH_SIZE * len(stored["scale"]):
        return float("inf")
    scale = np.repeat(np.maximum(np.asarray(stored["scale"], dtype=float), np.finfo(float).tiny), SKETCH_SIZE)
    return float(np.max(np.abs(a - b) / scale))


def stream_key(cell) -> str:
    """``env|T=horizon|seed``: the round stream a cell plays (its env, horizon and seed fix it)."""
    return f"{cell.env.label}|T={cell.horizon}|seed={cell.seed}"


def stream_summaries(cells: Sequence) -> dict[str, dict[str, Any]]:
    """:func:`stream_summary` of every distinct (env, horizon, seed) of ``cells``."""
    out: dict[str, dict[str, Any]] = {}
    for cell in cells:
        key = stream_key(cell)
        if key not in out:
            out[key] = stream_summary(cell)
    return out


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


def store_reference(suite, folder: str | Path, command: str, dest: Path | None = None) -> tuple[Path, Path]:
    """Pack the suite's finished cell files of ``folder/cells`` (every one checked) with a manifest.

    Raises
    ------
    ValueError
        If a cell of the suite is missing from ``folder`` or fails the check.
    """
    cells = suite.cells()
    archive, manifest = reference_path(suite.name, dest)
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
                privbandit=__version__, command=command, cells=len(cells), stream_rounds=STREAM_ROUNDS,
                stream_tolerance=STREAM_TOLERANCE, streams=stream_summaries(cells), made_on=machine())
    manifest.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    return archive, manifest


def load_manifest(suite_name: str, base: Path | None = None) -> dict[str, Any] | None:
    """The stored manifest of a suite (None if none is shipped)."""
    _, manifest = reference_path(suite_name, base)
    try:
        return json.loads(manifest.read_text())
    except (OSError, ValueError):
        return None


def stored_keys(suite_name: str, base: Path | None = None) -> set[str]:
    """The keys of the cells the stored archive of a suite holds (empty if none is shipped)."""
    archive, _ = reference_path(suite_name, base)
    if not archive.exists():
        return set()
    with tarfile.open(archive, mode="r:xz") as tar:
        return {m.name.removesuffix(".csv") for m in tar.getmembers()
                if m.isfile() and "/" not in m.name and not m.name.startswith(".") and m.name.endswith(".csv")}


@dataclass(frozen=True)
class StoredMatch:
    """Which cells the stored results of a suite stand in for here (:func:`match_reference`).

    ``usable``: keys of the cells taken from the store; ``unstored``: keys of the cells the store does not hold
    (they run); ``problems``: what did not match, one line each (a mismatch of the whole archive, or a round
    stream whose cells run); ``inexact``: the streams (``env|T=horizon|seed``) whose stored cells stand in
    though they are not the stored bytes, only within :data:`STREAM_TOLERANCE` of them (another CPU or BLAS).
    """

    usable: tuple[str, ...]
    unstored: tuple[str, ...]
    problems: tuple[str, ...]
    inexact: tuple[str, ...] = ()


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
    return problems


def match_reference(suite, cells: Sequence | None = None, base: Path | None = None,
                    sample: int | None = None) -> StoredMatch:
    """Which of ``cells`` (default: the suite's) the stored results of ``suite`` stand in for here.

    A cell is usable when the archive is valid for this install (library version, the suite's
    ``results_version``), holds the cell, and the cell's round stream here is within :data:`STREAM_TOLERANCE` of
    the stored one (:func:`stream_difference`; every distinct stream is summarised once; with ``sample``, only that
    many of them, spread over the list, and the others are taken as matching).
    """
    cells = list(suite.cells() if cells is None else cells)
    archive, _ = reference_path(suite.name, base)
    meta = load_manifest(suite.name, base)
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
        differs = machine_differences(meta.get("made_on"))
        problems.extend([f"stored on another machine ({differs})"] if bad and differs else [])
    usable = tuple(c.key for key in sorted(set(streams) - bad) for c in streams[key])
    return StoredMatch(usable, unstored, tuple(problems), tuple(inexact))


def check_reference(suite, sample: int | None = None, base: Path | None = None) -> list[str]:
    """What keeps the stored results of ``suite`` from standing in for all its cells here (empty: nothing).

    Checks the manifest exists, the library version and the suite's ``results_version`` (or, for a manifest
    stored before cells were checked one by one, the suite version), that the archive holds every cell of the
    suite, and the round streams (all of them, or ``sample`` of them, spread over the list).
    """
    archive, _ = reference_path(suite.name, base)
    problems = _archive_problems(suite, load_manifest(suite.name, base), archive)
    if problems:
        return problems
    match = match_reference(suite, base=base, sample=sample)
    problems = list(match.problems)
    if match.unstored:
        labels = sorted({c.agent.label for c in suite.cells() if c.key in set(match.unstored)})
        problems.append(f"{len(match.unstored)} cells of the suite are not in the stored results (agents: "
                        f"{', '.join(labels)})")
    return problems


def install_reference(suite, folder: str | Path, keys: set[str] | None = None, base: Path | None = None) -> list[str]:
    """Write the stored cell files of ``suite`` (only those of the cell ``keys``, if given) into
    ``folder/cells`` (existing files are kept); returns their names."""
    archive, _ = reference_path(suite.name, base)
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
