"""The files of a results table: a cell file or a ``results.csv`` read back exactly, and any file written atomically.

A cell file (:mod:`privbandit.bench.cells`) is a table as CSV followed by a footer line (:data:`FOOTER`) that proves
it complete; :func:`read_cell` reads the table of one, or of a ``results.csv``, without the footer.
:func:`atomic_write` writes a results file (a cell, ``results.csv``, ``report.md``, ``board.html``) so that a
reader sees the old file or the new one, never a torn one.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["FOOTER", "atomic_write", "read_cell", "read_table", "split_footer"]


_PANDAS_MAJOR = int(pd.__version__.split(".")[0])


FOOTER = "#privbandit-cell "
"""The start of a cell file's last line; the rest is a JSON object (key, identity, version, entropy,
rows, sha256 of the lines above, planned_seeds of the cell's group)."""


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder, fsync and :func:`os.replace`:
    readers see the old file or the new one, never a torn one; on any error the temporary file is removed
    and the old file is left as it was."""
    path = Path(path)
    data = memoryview(text.encode())
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0600 would ignore the umask (a shared results folder)
            while data:
                data = data[os.write(fd, data):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


def split_footer(data: bytes) -> tuple[bytes, bytes | None]:
    """The bytes above a cell file's footer line and the footer line (None if the last line is not one)."""
    head, sep, last = data.rstrip(b"\n").rpartition(b"\n")
    if last.startswith(FOOTER.encode()):
        return (head + sep), last
    return data, None


def read_table(source: Any) -> pd.DataFrame:
    """A results table from CSV (a path or a file object), its floats round-tripped and its text columns text."""
    extra = {} if _PANDAS_MAJOR >= 3 else {"float_precision": "round_trip"}  # pandas 3 round-trips by default
    return pd.read_csv(source, keep_default_na=False, dtype={"agent": str, "env": str, "family": str,
                                                             "privacy_model": str}, **extra)


def read_cell(source: str | os.PathLike | bytes) -> pd.DataFrame:
    """Read a cell's (or a results) table back exactly (floats round-trip), without the footer; no check
    (:func:`load_cell` checks). ``source`` is a path or the file's bytes (a member of a stored archive)."""
    body, _ = split_footer(source if isinstance(source, bytes) else Path(source).read_bytes())
    return read_table(io.BytesIO(body))
