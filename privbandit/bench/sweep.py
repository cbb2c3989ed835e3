"""Sweeps over agents x envs x seeds x privacy levels, persisted cell by cell and resumable.

A sweep runs a list of :class:`~privbandit.bench.grid.Cell` s (:mod:`privbandit.bench.grid`), each with
:func:`~privbandit.sim.runner.run` in a worker (:mod:`privbandit.bench.backends`), its table written at once to the
cell store (:mod:`privbandit.bench.cells`), so a rerun skips every finished cell. A file that fails the check is
moved aside (a :class:`CellFilesRejected` warning) and run again, as is a file of another cell whose footer fails or
whose entropy is not the sweep's; a killed sweep, or a dead worker, loses at most the cells that were running
(:attr:`SweepResult.lost`). ``<out>/results.csv`` is :func:`~privbandit.bench.cells.combine`'s: the cells in list
order (serial and parallel sweeps give identical tables), then every other finished cell of the folder.

Cells start in list order, each on the worker that frees up first, so a list with its costliest cells first
(as the named suites order their grids) ends on short cells; :func:`estimate` times one run per agent, env and
horizon and gives the wall time of that schedule.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .._validation import check_choice
from ..agents.workers import BACKENDS, backend_context, check_jobs, limit_blas, prepare
from ..report.files import atomic_write
from ..sim.runner import run
from .backends import check_plugins, plugin_refs, return_as, worker_lost_errors
from .cells import (
    REJECTED,
    CellFileError,
    cell_path,
    cell_text,
    combine,
    folder_lock,
    load_cell,
    move_aside,
    other_cells,
)
from .grid import Cell

__all__ = ["PLANNED_COLUMNS", "CellFilesRejected", "SweepCost", "SweepResult", "estimate", "run_cell",
           "sweep"]


class CellFilesRejected(UserWarning):
    """Warned by :func:`sweep` when it moved cell files that failed :func:`load_cell` aside."""


def run_cell(cell: Cell, cells_dir: str | os.PathLike, plugins: Sequence[Any] = (),
             planned_seeds: Sequence[int] | None = None) -> tuple[str, bool]:
    """Run one cell unless its file exists; write the table atomically. Returns (key, ran).

    ``plugins`` are the :class:`~privbandit.agents.workers.PluginRef` s of the sweep (:func:`plugin_refs`), made
    known in this process first (a worker of a parallel sweep starts without the user's registrations).
    ``planned_seeds`` (the seeds of the cell's group in its sweep, default the cell's own) go into the
    footer, so a later report knows how many seeds the group should have.
    """
    path = cell_path(Path(cells_dir), cell)
    if path.exists():
        return cell.key, False
    for ref in plugins:
        prepare(ref)
    table = _play(cell, dict(agent=cell.agent.label, env=cell.env.label, seed=cell.seed))
    atomic_write(path, cell_text(cell, table, planned_seeds if planned_seeds is not None else (cell.seed,)))
    return cell.key, True


def _play(cell: Cell, labels: dict[str, Any] | None = None) -> pd.DataFrame:
    """The table of one run of ``cell``, on one BLAS thread (as in a worker)."""
    with limit_blas():
        agent = cell.agent.build(cell.epsilon, cell.delta)
        env = cell.env.make(cell.horizon)
        try:
            return run(agent, env, cell.horizon, cell.seed_sequence(), points_per_octave=cell.points_per_octave,
                       labels=labels)
        finally:
            env.close()


def _group(cell: Cell) -> tuple[str, str, float, int]:
    """The report group of a cell (env, agent, epsilon, horizon), epsilon inf for a non-private agent as in
    the run's table."""
    return cell.env.label, cell.agent.label, math.inf if cell.epsilon is None else float(cell.epsilon), cell.horizon


def _footer_group(footer: Mapping[str, Any]) -> tuple[str, str, float, int]:
    ident = footer["identity"]
    eps = ident["epsilon"]
    return ident["env"][0], ident["agent"][2], math.inf if eps is None else float(eps), int(ident["horizon"])


PLANNED_COLUMNS: tuple[str, ...] = ("env", "agent", "epsilon", "horizon", "n_planned")
"""The columns of :attr:`SweepResult.planned`."""


@dataclass
class SweepResult:
    """What a sweep did: the combined table and which cells ran now or were found finished.

    ``table`` is ``<out>/results.csv``: the sweep's cells, then ``others``, the cells that earlier sweeps
    left in the same folder (their keys). ``rejected`` lists the cell files that failed :func:`load_cell`
    (file name, reason), moved to ``<out>/cells/rejected/``; ``lost`` the keys of cells whose worker died
    (not finished: a rerun runs them); ``planned`` the number of seeds planned per group (env, agent,
    epsilon, horizon) by this sweep and by the footers of the other cells, for
    :func:`~privbandit.report.tables.final_regret`'s completeness columns.
    """

    table: pd.DataFrame
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    planned: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(PLANNED_COLUMNS)))


def _check_folder(cells: Sequence[Cell], cells_dir: Path) -> tuple[list[Cell], list[str], list[tuple[str, str]],
                                                                    dict[tuple, set]]:
    """Check every cell file of the folder: the sweep's cells to run, those found finished, the files moved
    aside (name, reason) and the seeds planned per group (this sweep's and the other files' footers)."""
    todo, skipped, rejected = [], [], []
    groups: dict[tuple, set] = {}
    for c in cells:
        groups.setdefault(_group(c), set()).add(c.seed)
        path = cell_path(cells_dir, c)
        if not path.exists():
            todo.append(c)
            continue
        try:
            load_cell(path, c)
        except CellFileError as exc:
            rejected.append((path.name, str(exc)))
            move_aside(path)
            todo.append(c)
        else:
            skipped.append(c.key)
    entropies = {c.entropy for c in cells}
    for path in other_cells(cells, cells_dir.parent):
        try:
            _, footer = load_cell(path, entropies=entropies)
            groups.setdefault(_footer_group(footer), set()).update(
                int(s) for s in footer.get("planned_seeds", [footer["identity"]["seed"]]))
        except (CellFileError, KeyError, TypeError, ValueError) as exc:
            rejected.append((path.name, str(exc) if isinstance(exc, CellFileError) else "unreadable footer"))
            move_aside(path)
    return todo, skipped, rejected, groups


def sweep(cells: Sequence[Cell], out: str | os.PathLike, *, jobs: int = 1, backend: str = "loky",
          address: str | None = None, progress: bool = False) -> SweepResult:
    """Run every cell not finished yet in ``out`` and return the combined table.

    Parameters
    ----------
    cells : sequence of Cell
        The sweep (e.g. ``Grid(...).cells()`` or a suite's cells); keys must be unique.
    out : path
        The results folder: ``cells/`` gets one CSV per cell, ``results.csv`` the combined table.
    jobs : int
        Parallel workers (>= 1; -1 for all cores).
    backend : {"loky", "dask", "ray"}
        joblib backend (see the module docstring).
    address : str, optional
        Scheduler address of a dask or ray cluster (default: start one locally).
    progress : bool
        Show a tqdm progress bar.

    Returns
    -------
    SweepResult
        With ``lost`` the cells of workers that died (the sweep stops starting cells, keeps every
        finished one and writes ``results.csv``; a rerun runs the lost ones).

    Raises
    ------
    FolderLocked
        If another process is sweeping into ``out``.
    OSError
        If a cell file cannot be written (e.g. ``ENOSPC``, a full disk): no partial file is left, the
        finished cells are kept.

    Warns
    -----
    CellFilesRejected
        Naming the cell files that failed :func:`load_cell`, moved to ``<out>/cells/rejected/``.

    Examples
    --------
    >>> import tempfile
    >>> from privbandit.bench import AgentEntry, EnvEntry, Grid, sweep
    >>> grid = Grid(agents=(AgentEntry("uniform"), AgentEntry("elim-jdp")),
    ...             envs=(EnvEntry("iso-d2", kwargs={"family": "isotropic", "n_arms": 3, "dim": 2}),),
    ...             epsilons=(1.0,), seeds=2, horizon=128)
    >>> len(grid.cells())                 # (uniform, elim-jdp at epsilon = 1) x 2 seeds
    4
    >>> with tempfile.TemporaryDirectory() as out:
    ...     first = sweep(grid.cells(), out)
    ...     again = sweep(grid.cells(), out)  # resumes: every cell is finished already
    >>> len(first.ran), len(again.ran), len(again.skipped)
    (4, 0, 4)
    >>> sorted(first.table["agent"].unique()), int(first.table["t"].max())
    (['elim-jdp', 'uniform'], 128)
    """
    cells = list(cells)
    if not all(isinstance(c, Cell) for c in cells):
        raise TypeError("cells must be a sequence of Cell")
    keys = [c.key for c in cells]
    if len(set(keys)) != len(keys):
        raise ValueError("cells must be distinct (two cells share a key)")
    jobs = check_jobs(jobs)
    check_choice("backend", backend, BACKENDS)
    out = Path(out)
    cells_dir = out / "cells"
    cells_dir.mkdir(parents=True, exist_ok=True)
    with folder_lock(out):
        return _sweep(cells, out, cells_dir, jobs, backend, address, progress)


def _sweep(cells: list[Cell], out: Path, cells_dir: Path, jobs: int, backend: str, address: str | None,
           progress: bool) -> SweepResult:
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    for stale in cells_dir.glob(".*.tmp"):  # left by a killed sweep: never complete, never read
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
    todo, skipped, rejected, groups = _check_folder(cells, cells_dir)
    if rejected:
        warnings.warn(CellFilesRejected(
            f"{len(rejected)} cell files in {cells_dir} failed the check, moved to {cells_dir / REJECTED} and run "
            "again: " + "; ".join(f"{name} ({why})" for name, why in rejected)), stacklevel=2)
    planned_seeds = {k: sorted(v) for k, v in groups.items()}
    ran: list[str] = []
    lost: list[str] = []
    if todo:
        n_jobs = min(jobs if jobs > 0 else os.cpu_count() or 1, len(todo))
        refs = plugin_refs(todo)
        bar = tqdm(total=len(todo), desc="cells", unit="cell", disable=not progress, dynamic_ncols=True)
        serial = n_jobs == 1 and backend == "loky"  # in this process, where the plugins are registered
        try:
            with contextlib.nullcontext() if serial else backend_context(backend, n_jobs, address):
                check_plugins(todo, refs, n_jobs, None if serial else backend)
                results: Iterable[tuple[str, bool]] = (
                    (run_cell(c, cells_dir, (), planned_seeds[_group(c)]) for c in todo) if serial else
                    Parallel(return_as=return_as())(
                        delayed(run_cell)(c, str(cells_dir), refs, planned_seeds[_group(c)]) for c in todo))
                try:
                    for key, did in results:
                        (ran if did else skipped).append(key)
                        bar.update()
                except worker_lost_errors():
                    done = set(ran) | set(skipped)
                    for c in todo:
                        if c.key in done:
                            continue
                        try:  # a cell may have finished between the worker's death and the error
                            load_cell(cell_path(cells_dir, c), c)
                            ran.append(c.key)
                        except CellFileError:
                            lost.append(c.key)
        finally:
            bar.close()
    table = combine(cells, out)
    others = [p.stem for p in other_cells(cells, out)]
    return SweepResult(table=table, ran=ran, skipped=skipped, others=others, rejected=rejected, lost=lost,
                       planned=pd.DataFrame([(*k, len(v)) for k, v in groups.items()], columns=list(PLANNED_COLUMNS)))


@dataclass(frozen=True)
class SweepCost:
    """A sweep's cost, estimated by :func:`estimate`: CPU seconds per cell key, the combinations timed and
    the wall seconds on ``jobs`` idle workers."""

    seconds: dict
    timed: int
    jobs: int
    wall: float

    def line(self) -> str:
        """One line: cells, combinations timed, CPU minutes in all and the wall time on the workers."""
        total = sum(self.seconds.values())
        return (f"estimate: {len(self.seconds)} cells, {self.timed} combinations timed once "
                f"({total / max(1, len(self.seconds)):.2f} CPU s per cell on average, {total / 60:.1f} CPU minutes "
                f"in all); on {self.jobs} idle workers: {self.wall / 60:.1f} minutes wall")


def _combination(cell: Cell) -> tuple:
    return cell.agent.label, cell.agent.kwargs, cell.env.label, cell.horizon


def estimate(cells: Sequence[Cell], jobs: int = 1) -> SweepCost:
    """The sweep's wall time on ``jobs`` idle workers, from one timed run per combination.

    The first cell (in list order) of every combination of agent, env and horizon runs once in this process
    (one BLAS thread, as a worker), timed in CPU seconds; it stands for every cell of its combination. The
    cells are then list-scheduled in the sweep's order (list order, each to the worker that frees up first),
    as :func:`sweep` starts them.
    """
    cells = list(cells)
    jobs = check_jobs(jobs)
    jobs = jobs if jobs > 0 else os.cpu_count() or 1
    cost: dict[tuple, float] = {}
    for c in cells:
        combo = _combination(c)
        if combo in cost:
            continue
        start = time.process_time()
        _play(c)
        cost[combo] = time.process_time() - start
    seconds = {c.key: cost[_combination(c)] for c in cells}
    workers = [0.0] * jobs
    for c in cells:
        workers[workers.index(min(workers))] += seconds[c.key]
    return SweepCost(seconds=seconds, timed=len(cost), jobs=jobs, wall=max(workers))
