"""The cell store: one CSV per cell in ``<out>/cells``, each proving it is complete, and their combination.

Each cell's table is written at once to ``<out>/cells/<cell.key>.csv`` through a temporary file and an
atomic :func:`os.replace` (:func:`~privbandit.report.files.atomic_write`); the file ends with a footer line
(:data:`~privbandit.report.files.FOOTER`: the cell's identity, the privbandit version, the entropy, the row count
and a SHA-256 of the table above it) written last. A cell is finished only when its file passes :func:`load_cell`
(footer, checksum, version, identity, schema, last logged round = horizon); a file that fails is moved to
``<out>/cells/rejected/`` (:func:`move_aside`). ``<out>/results.csv`` is the concatenation of the finished cells
(:func:`combine`). One sweep at a time writes a folder: :func:`folder_lock` (``fcntl.flock`` on ``<out>/.lock``)
refuses a second one with :class:`FolderLocked`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .. import __version__
from ..report.files import FOOTER, atomic_write, read_table, split_footer
from ..sim.runner import COLUMNS
from .grid import Cell, canonical

__all__ = ["REJECTED", "CellFileError", "FolderLocked", "cell_path", "cell_text", "combine", "folder_lock", "load_cell",
           "move_aside", "other_cells"]


class FolderLocked(RuntimeError):
    """Raised when another sweep (another process) is writing the same results folder."""


class CellFileError(ValueError):
    """Raised by :func:`load_cell` for a cell file that does not prove it is a finished cell."""


REJECTED = "rejected"
"""The subfolder of ``<out>/cells`` where files that failed the check are moved."""


def cell_path(cells_dir: Path, cell: Cell) -> Path:
    """Where a cell's table is stored."""
    return Path(cells_dir) / f"{cell.key}.csv"


def cell_text(cell: Cell, table: pd.DataFrame, planned_seeds: Sequence[int]) -> str:
    """The cell file: the table as CSV, then the footer (:data:`FOOTER`) that proves it complete."""
    body = table.to_csv(index=False, lineterminator="\n")
    footer = dict(key=cell.key, identity=json.loads(canonical(cell.identity())), version=__version__,
                  entropy=cell.entropy, rows=len(table), planned_seeds=[int(s) for s in planned_seeds],
                  sha256=hashlib.sha256(body.encode()).hexdigest())
    return body + FOOTER + json.dumps(footer, sort_keys=True, separators=(",", ":")) + "\n"


def load_cell(path: str | os.PathLike, cell: Cell | None = None,
              entropies: Iterable[int] | None = None) -> tuple[pd.DataFrame, dict]:
    """A cell file's table and footer, if the file proves it is a finished cell of this privbandit.

    Checked: the footer line is there (written last, so a truncated file has none), the SHA-256 of the
    table matches it, the privbandit version is this one, the footer's key is the file's name and, with
    ``cell``, its identity is the cell's; the entropy is among ``entropies`` (if given); the table has the
    columns :data:`~privbandit.sim.runner.COLUMNS`, the footer's row count, the identity's agent label,
    env label, seed and horizon on every row, and its last logged round is the horizon.

    Raises
    ------
    CellFileError
        Saying what failed, in a few words.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CellFileError(f"unreadable ({exc.strerror or exc})") from None
    body, line = split_footer(data)
    if line is None:
        raise CellFileError("no footer: truncated, damaged or written by an older privbandit")
    try:
        footer = json.loads(line[len(FOOTER):].decode())
        if not isinstance(footer, dict):
            raise ValueError
    except ValueError:
        raise CellFileError("unreadable footer") from None
    if footer.get("sha256") != hashlib.sha256(body).hexdigest():
        raise CellFileError("checksum mismatch: the table was changed or damaged")
    if footer.get("version") != __version__:
        raise CellFileError(f"written by privbandit {footer.get('version')}, this is {__version__}")
    if f"{footer.get('key')}.csv" != path.name:
        raise CellFileError(f"its footer names another cell ({footer.get('key')})")
    if cell is not None and footer.get("identity") != json.loads(canonical(cell.identity())):
        raise CellFileError("its footer's identity is not this cell's")
    if entropies is not None and footer.get("entropy") not in set(entropies):
        raise CellFileError(f"entropy {footer.get('entropy')}, this sweep uses {sorted(set(entropies))}")
    try:
        table = read_table(io.BytesIO(body))
        ident = footer["identity"]
        expected = dict(agent=ident["agent"][2], env=ident["env"][0], seed=ident["seed"], horizon=ident["horizon"])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise CellFileError(f"unreadable table ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") \
            from None
    if tuple(table.columns) != COLUMNS:
        raise CellFileError(f"columns {list(table.columns)} are not {list(COLUMNS)}")
    if len(table) != footer.get("rows") or table.empty:
        raise CellFileError(f"{len(table)} rows, its footer says {footer.get('rows')}")
    for col, want in expected.items():
        if not (table[col] == want).all():
            raise CellFileError(f"column {col} is not {want!r} on every row")
    if int(table["t"].iloc[-1]) != int(expected["horizon"]):
        raise CellFileError(f"last logged round {table['t'].iloc[-1]}, not the horizon {expected['horizon']}")
    return table, footer


def move_aside(path: Path) -> Path:
    """Move a cell file that failed the check to ``cells/rejected/`` (never over another file there)."""
    folder = path.parent / REJECTED
    folder.mkdir(exist_ok=True)
    target, n = folder / path.name, 1
    while target.exists():
        target, n = folder / f"{path.name}.{n}", n + 1
    os.replace(path, target)
    return target


_HELD: dict[str, tuple[Any, int]] = {}


@contextlib.contextmanager
def folder_lock(out: str | os.PathLike) -> Iterator[Path]:
    """Hold ``<out>/.lock`` (``fcntl.flock``, released when the process exits, even killed) for a sweep.

    Re-entrant in one process (a command holds it around its sweep and its report). Without ``fcntl``
    (Windows) it does nothing.

    Raises
    ------
    FolderLocked
        If another process holds it.
    """
    out = Path(out)
    path = out / ".lock"
    key = str(path.resolve())
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield path
        return
    if key in _HELD:
        fh, n = _HELD[key]
        _HELD[key] = (fh, n + 1)
    else:
        fh = open(path, "a+")  # noqa: SIM115 - held until the outermost exit
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                fh.close()
                raise
            fh.seek(0)
            holder = fh.read().strip()
            fh.close()
            raise FolderLocked(f"{out} is in use by another privbandit sweep"
                               f"{f' (pid {holder})' if holder.isdigit() else ''}: wait for it to finish, "
                               "or write to another folder") from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        _HELD[key] = (fh, 1)
    try:
        yield path
    finally:
        fh, n = _HELD[key]
        if n > 1:
            _HELD[key] = (fh, n - 1)
        else:
            del _HELD[key]
            fh.close()  # closing the file releases the lock


def other_cells(cells: Sequence[Cell], out: str | os.PathLike) -> list[Path]:
    """The cell files in ``<out>/cells`` that are not among ``cells`` (left by earlier sweeps into the same
    folder), sorted by name."""
    cells_dir = Path(out) / "cells"
    mine = {cell_path(cells_dir, c).name for c in cells}
    return sorted(p for p in cells_dir.glob("*.csv") if p.name not in mine)


def combine(cells: Sequence[Cell], out: str | os.PathLike) -> pd.DataFrame:
    """Write ``<out>/results.csv`` atomically: every finished cell of the folder, so that it never drops
    the results of an earlier sweep into the same folder.

    The tables of ``cells`` come first, in their order, then those of :func:`other_cells`. Only files that
    pass :func:`load_cell` are read: a missing or damaged cell is left out (never averaged in), and the
    report's completeness columns show it.

    Parameters
    ----------
    cells : sequence of Cell
        The cells of this sweep (their tables first).
    out : path
        The results folder.
    """
    out = Path(out)
    frames = []
    for path, cell in [(cell_path(out / "cells", c), c) for c in cells] + [(p, None) for p in other_cells(cells, out)]:
        with contextlib.suppress(CellFileError):
            frames.append(load_cell(path, cell)[0])
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(COLUMNS))
    atomic_write(out / "results.csv", table.to_csv(index=False, lineterminator="\n"))
    return table
