"""Stored reference results: the baseline cells of a suite, run once, shipped in the package data.

A challenger run (``privbandit bench --suite S --agent X``) needs the baselines' per-seed results, which
are the same on every machine for one version of the suite and the library. :func:`store_reference`
packs the cell files of a finished suite (:mod:`privbandit.sim.sweep`'s format: table, footer with key,
identity, version and checksum) into one xz-compressed tar, ``privbandit/data/reference/SUITE.tar.xz``, with
a manifest ``SUITE.json``:

- ``suite_version``: :func:`suite_version`, a hash of every baseline cell's identity (agent, kwargs, env,
  epsilon, horizon, seed, entropy) and of the suite's declared ``results_version``: it changes whenever a
  cell's definition does, and whenever a change to a baseline's code changes its numbers (the developer
  raises ``results_version`` then: ``tests/test_reference.py`` re-runs one stored cell of every baseline and
  fails until they do). A refactor that leaves every number as it was keeps the stored results valid;
- ``privbandit``: the library version (a cell file carries it too; :func:`~privbandit.sim.sweep.load_cell`
  refuses another one);
- ``command``: the command that made them (``scripts/store_reference.py``);
- ``fingerprints``: per (env, horizon, seed) the sha256 of the first :data:`FINGERPRINT_ROUNDS` rounds'
  features and rewards of its round stream (:func:`stream_fingerprint`): the same seed must give the same
  stream on this machine (numpy's generators, BLAS, the env code).

- ``results_version``: the suite's declared ``results_version`` when they were made.

Stored results are valid per cell (:func:`match_reference`): a stored cell stands in for a run here when the
library version and the suite's ``results_version`` are the stored ones, the archive holds the cell (its file
name is the cell's key, which hashes its identity, and the sweep checks the identity in its footer) and the
fingerprint of its round stream is the stored one. A cell the archive does not hold (an agent added to a suite
after the results were stored, a challenger) runs; so does every cell of a stream whose fingerprint differs.
A manifest without ``results_version`` (stored before cells were checked one by one) is valid only as a whole,
when its ``suite_version`` is this suite's.

:func:`check_reference` says what keeps the whole suite from being stored (nothing: every cell stands in), and
:func:`install_reference` writes the stored cell files into a results folder's ``cells/``, where the sweep
finds them finished: only the other cells run (the challenger's), paired with the stored baselines by seed
(common random numbers: a cell's seed fixes its round stream).
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FINGERPRINT_ROUNDS", "StoredMatch", "check_reference", "install_reference", "match_reference",
           "reference_path", "store_reference", "stream_fingerprint", "suite_version"]

FINGERPRINT_ROUNDS = 64
"""Rounds of a stream whose features and rewards its fingerprint hashes."""

REFERENCE_DIR = Path(__file__).resolve().parents[1] / "data" / "reference"
"""Where the package data keeps the stored results."""


def reference_path(suite: str, base: Path | None = None) -> tuple[Path, Path]:
    """The (archive, manifest) paths of a suite's stored results (in the package data unless ``base``)."""
    base = REFERENCE_DIR if base is None else Path(base)
    return base / f"{suite}.tar.xz", base / f"{suite}.json"


def baseline_cells(suite) -> list:
    """The suite's cells (its baselines: a suite holds no challenger)."""
    return suite.cells()


def suite_version(suite) -> str:
    """``NAME-HASH``: a hash of the suite's ``results_version`` and of every cell's identity."""
    from .grid import canonical as _canonical

    h = hashlib.sha256(f"results_version={suite.results_version}".encode())
    for cell in sorted(baseline_cells(suite), key=lambda c: c.key):
        h.update(_canonical(cell.identity()).encode())
    return f"{suite.name}-{h.hexdigest()[:16]}"


def stream_fingerprint(cell, rounds: int = FINGERPRINT_ROUNDS) -> str:
    """sha256 of the first ``rounds`` rounds (features and rewards of every arm) of the round stream the
    cell's seed gives (:func:`privbandit.sim.runner.split_seed`, as the runner resets the env)."""
    from .runner import split_seed

    env_seed, _ = split_seed(cell.seed_sequence())
    env = cell.env.make(cell.horizon)
    try:
        env.reset(seed=env_seed)
        batch = env.unwrapped.sample_batch(min(rounds, cell.horizon))
    finally:
        env.close()
    h = hashlib.sha256()
    for a in (batch.features, batch.rewards):
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()


def _stream_key(cell) -> str:
    return f"{cell.env.label}|T={cell.horizon}|seed={cell.seed}"


def fingerprints(cells: Sequence) -> dict[str, str]:
    """:func:`stream_fingerprint` of every distinct (env, horizon, seed) of ``cells``."""
    out: dict[str, str] = {}
    for cell in cells:
        key = _stream_key(cell)
        if key not in out:
            out[key] = stream_fingerprint(cell)
    return out


def store_reference(suite, folder: str | Path, command: str, dest: Path | None = None) -> tuple[Path, Path]:
    """Pack the suite's finished cell files of ``folder/cells`` (every one checked) with a manifest.

    Raises
    ------
    ValueError
        If a cell of the suite is missing from ``folder`` or fails the check.
    """
    from .cells import _version, cell_path, load_cell

    cells = baseline_cells(suite)
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
                privbandit=_version(), command=command, cells=len(cells), fingerprint_rounds=FINGERPRINT_ROUNDS,
                fingerprints=fingerprints(cells))
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
    stream whose cells run).
    """

    usable: tuple[str, ...]
    unstored: tuple[str, ...]
    problems: tuple[str, ...]


def _archive_problems(suite, meta: dict[str, Any] | None, archive: Path) -> list[str]:
    """What keeps every stored cell of ``suite`` from standing in (the archive, the versions)."""
    from .cells import _version

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
    if meta.get("privbandit") != _version():
        problems.append(f"stored by privbandit {meta.get('privbandit')}, this is {_version()}")
    return problems


def match_reference(suite, cells: Sequence | None = None, base: Path | None = None,
                    sample: int | None = None) -> StoredMatch:
    """Which of ``cells`` (default: the suite's) the stored results of ``suite`` stand in for here.

    A cell is usable when the archive is valid for this install (library version, the suite's
    ``results_version``), holds the cell, and the fingerprint of the cell's round stream is the stored one
    (every distinct stream is fingerprinted once; with ``sample``, only that many of them, spread over the
    list, and the others are taken as matching).
    """
    cells = list(baseline_cells(suite) if cells is None else cells)
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
            streams.setdefault(_stream_key(c), []).append(c)
    keys = sorted(streams)
    if sample is not None and sample < len(keys):
        keys = [keys[i] for i in np.linspace(0, len(keys) - 1, sample).round().astype(int)]
    stored, bad = meta.get("fingerprints", {}), set()
    for key in keys:
        if stored.get(key) != stream_fingerprint(streams[key][0]):
            bad.add(key)
            problems.append(f"round stream {key} differs from the stored one (numpy, BLAS or env code): its "
                            f"{len(streams[key])} cells run")
    usable = tuple(c.key for key in sorted(set(streams) - bad) for c in streams[key])
    return StoredMatch(usable, unstored, tuple(problems))


def check_reference(suite, sample: int | None = None, base: Path | None = None) -> list[str]:
    """What keeps the stored results of ``suite`` from standing in for all its cells here (empty: nothing).

    Checks the manifest exists, the library version and the suite's ``results_version`` (or, for a manifest
    stored before cells were checked one by one, the suite version), that the archive holds every cell of the
    suite, and the round-stream fingerprints (all of them, or ``sample`` of them, spread over the list).
    """
    archive, _ = reference_path(suite.name, base)
    problems = _archive_problems(suite, load_manifest(suite.name, base), archive)
    if problems:
        return problems
    match = match_reference(suite, base=base, sample=sample)
    problems = list(match.problems)
    if match.unstored:
        labels = sorted({c.agent.label for c in baseline_cells(suite) if c.key in set(match.unstored)})
        problems.append(f"{len(match.unstored)} cells of the suite are not in the stored results (agents: "
                        f"{', '.join(labels)})")
    return problems


def install_reference(suite, folder: str | Path, keys: set[str] | None = None, base: Path | None = None) -> list[str]:
    """Write the stored cell files of ``suite`` (only those of the cell ``keys``, if given) into
    ``folder/cells`` (existing files are kept); returns their names."""
    archive, _ = reference_path(suite.name, base)
    cells_dir = Path(folder) / "cells"
    cells_dir.mkdir(parents=True, exist_ok=True)
    from .cells import atomic_write

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
