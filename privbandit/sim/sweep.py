"""Sweeps over agents x envs x seeds x privacy levels, persisted cell by cell and resumable.

A sweep is a list of :class:`Cell` s (one agent, one env, one epsilon, one seed, one horizon). Each
cell runs :func:`~privbandit.sim.runner.run` in a worker and writes its table at once to
``<out>/cells/<cell.key>.csv`` through a temporary file and an atomic :func:`os.replace`; the file ends
with a footer line (:data:`FOOTER`: the cell's identity, the privbandit version, the entropy, the row
count and a SHA-256 of the table above it) written last. A cell is finished only when its file passes
:func:`load_cell` (footer, checksum, version, identity, schema, last logged round = horizon). A rerun
skips every finished cell; a file that fails the check is moved to ``<out>/cells/rejected/``, named in a
:class:`CellFilesRejected` warning and run again, and a file of another cell whose footer fails (or whose
entropy is not the sweep's) is moved aside too, never mixed in. A killed sweep, or a dead worker, loses
at most the cells that were running (:attr:`SweepResult.lost`). When the cells are done,
``<out>/results.csv`` is their concatenation in the order of the cell list (so serial and parallel sweeps
give identical tables), followed by any other finished cell that an earlier sweep left in the folder (so
the file always covers every cell of the folder); it is written atomically too. One sweep at a time
writes a folder: :func:`folder_lock` (``fcntl.flock`` on ``<out>/.lock``) refuses a second one with
:class:`FolderLocked`.

Seeds
-----
A cell's randomness comes from ``SeedSequence(entropy, spawn_key=(env_hash, seed))``: ``entropy`` is the
sweep's root entropy (:data:`DEFAULT_ENTROPY` unless given), ``env_hash`` a stable 64-bit hash of the
env's id and keyword arguments, ``seed`` the cell's seed index. It does not depend on the cell's
position in the sweep or on the process that runs it; and every agent and privacy level of the same
(env, seed) meets the same contexts and rewards (common random numbers).

Parallelism
-----------
joblib runs the cells: ``backend="loky"`` (local processes, the default), ``"dask"`` or ``"ray"`` (a
cluster; the optional extra ``pip install "privbandit[dist]"``) through ``joblib.parallel_config``.
BLAS threads are limited to one per worker: loky's ``inner_max_num_threads=1`` sets the thread
variables in its workers, dask workers we start get them through ``distributed.nanny.pre-spawn-environ``,
ray workers through ``runtime_env``, and every cell also runs under ``threadpoolctl.threadpool_limits(1)``
when threadpoolctl is installed.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import math
import numbers
import os
import re
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from .._validation import check_choice, check_delta, check_epsilon, check_int
from .runner import COLUMNS, run

_PANDAS_MAJOR = int(pd.__version__.split(".")[0])

DEFAULT_ENTROPY = 20_251_125
"""Root entropy of every sweep unless a sweep is given its own."""

BACKENDS: tuple[str, ...] = ("loky", "dask", "ray")

THREAD_ENV: dict[str, str] = {k: "1" for k in (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS")}
"""Environment variables that limit BLAS and OpenMP to one thread in a worker."""


class BackendUnavailable(ImportError):
    """Raised when the dask or ray backend is asked for but its package is not installed."""


class FolderLocked(RuntimeError):
    """Raised when another sweep (another process) is writing the same results folder."""


class CellFileError(ValueError):
    """Raised by :func:`load_cell` for a cell file that does not prove it is a finished cell."""


class CellFilesRejected(UserWarning):
    """Warned by :func:`sweep` when it moved cell files that failed :func:`load_cell` aside."""


FOOTER = "#privbandit-cell "
"""The start of a cell file's last line; the rest is a JSON object (key, identity, version, entropy,
rows, sha256 of the lines above, planned_seeds of the cell's group)."""

REJECTED = "rejected"
"""The subfolder of ``<out>/cells`` where files that failed the check are moved."""


def _freeze(kwargs: Mapping[str, Any] | Iterable[tuple[str, Any]] | None) -> tuple[tuple[str, Any], ...]:
    items = dict(kwargs or {})
    for k, v in items.items():
        if isinstance(v, np.ndarray):
            items[k] = tuple(np.asarray(v).ravel().tolist()) if v.ndim <= 1 else tuple(map(tuple, v.tolist()))
    return tuple(sorted(items.items()))


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, default=repr, separators=(",", ":"))


def stable_hash(obj: Any, bits: int = 64) -> int:
    """A hash of a JSON-able object that is the same in every process and Python version."""
    digest = hashlib.sha256(_canonical(obj).encode()).digest()
    return int.from_bytes(digest[: bits // 8], "little")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", text).strip("-")


@dataclass(frozen=True)
class AgentEntry:
    """One agent of a sweep: a registered agent name, its keyword arguments and how to label it.

    Parameters
    ----------
    name : str
        A name from :func:`privbandit.agents.agent_names`.
    kwargs : mapping
        Keyword arguments of ``make_agent(name, ...)`` besides the privacy level.
    label : str, optional
        The ``agent`` column of the results (default ``name``).
    private : bool, optional
        Whether the agent takes a privacy level (``epsilon=``, ``delta=`` keywords of ``make_agent``).
        Default: the registration's (``agents.agent_is_private``); for a registration that does not say,
        or an ``oracle`` instance in ``kwargs``, decided by building the agent and asking ``agent.privacy``.
    reference : str, optional
        Label of the non-private counterpart, for the price of privacy in reports.
    """

    name: str
    kwargs: Any = ()
    label: str | None = None
    private: bool | None = None
    reference: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty agent name, got {self.name!r}")
        object.__setattr__(self, "kwargs", _freeze(self.kwargs))
        if self.label is None:
            object.__setattr__(self, "label", self.name)

    def is_private(self) -> bool:
        """Whether the agent takes a privacy level (see ``private``)."""
        if self.private is not None:
            return bool(self.private)
        from ..agents import agent_is_private, make_agent

        kwargs = dict(self.kwargs)
        private = agent_is_private(self.name)
        if private is not None and kwargs.get("oracle") is None:
            return private
        return make_agent(self.name, **kwargs).privacy.is_private

    def build(self, epsilon: float | None = None, delta: float | None = None):
        """The agent, at privacy level (epsilon, delta) if it is private."""
        from ..agents import make_agent

        kw = dict(self.kwargs)
        if epsilon is not None:
            kw.update(epsilon=epsilon, delta=delta)
        return make_agent(self.name, **kw)


@dataclass(frozen=True)
class EnvEntry:
    """One environment of a sweep: a Gymnasium id, its keyword arguments and a label.

    Parameters
    ----------
    label : str
        The ``env`` column of the results, e.g. ``"heavy-tailed-d10"``.
    env_id : str
        A registered id, e.g. ``"PrivLinCB-v0"``.
    kwargs : mapping
        Keyword arguments of ``gymnasium.make`` (family, dim, n_arms, ...); the sweep adds the horizon.
    """

    label: str
    env_id: str = "PrivLinCB-v0"
    kwargs: Any = ()

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label:
            raise ValueError(f"label must be a non-empty string, got {self.label!r}")
        object.__setattr__(self, "kwargs", _freeze(self.kwargs))

    def identity(self) -> dict:
        """What defines the env instance (its seed stream depends only on this)."""
        return dict(env_id=self.env_id, kwargs=[list(kv) for kv in self.kwargs])

    def make(self, horizon: int):
        """``gymnasium.make(env_id, horizon=horizon, **kwargs)``."""
        import gymnasium as gym

        import privbandit  # noqa: F401 - registers the envs

        return gym.make(self.env_id, **{**dict(self.kwargs), "horizon": horizon})


@dataclass(frozen=True)
class Cell:
    """One run of a sweep: an agent at a privacy level on an env for one seed and horizon."""

    agent: AgentEntry
    env: EnvEntry
    epsilon: float | None
    seed: int
    horizon: int
    delta: float | None = None
    entropy: int = DEFAULT_ENTROPY
    points_per_octave: int = 8

    def __post_init__(self) -> None:
        if self.epsilon is not None:
            object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
            object.__setattr__(self, "delta", check_delta(self.delta if self.delta is not None else 1e-5))
        else:
            object.__setattr__(self, "delta", None)
        object.__setattr__(self, "seed", check_int("seed", self.seed, low=0))
        object.__setattr__(self, "horizon", check_int("horizon", self.horizon, low=1))
        object.__setattr__(self, "entropy", check_int("entropy", self.entropy, low=0))

    def identity(self) -> dict:
        """Everything that defines the cell's result."""
        return dict(agent=[self.agent.name, [list(kv) for kv in self.agent.kwargs], self.agent.label],
                    env=[self.env.label, self.env.identity()], epsilon=self.epsilon, delta=self.delta,
                    seed=self.seed, horizon=self.horizon, entropy=self.entropy, ppo=self.points_per_octave)

    @property
    def key(self) -> str:
        """A file name that says what ran (``env__agent__eps__T__seed``) plus a short hash of the identity."""
        eps = "nonprivate" if self.epsilon is None else f"eps{self.epsilon:g}"
        name = f"{self.env.label}__{self.agent.label}__{eps}__T{self.horizon}__seed{self.seed}"
        return f"{_slug(name)}__{stable_hash(self.identity(), 32):08x}"

    def seed_sequence(self) -> np.random.SeedSequence:
        """``SeedSequence(entropy, spawn_key=(env_hash, seed))`` (see the module docstring)."""
        return np.random.SeedSequence(self.entropy, spawn_key=(stable_hash(self.env.identity()), self.seed))


@dataclass(frozen=True)
class Grid:
    """A product of agents x envs x epsilons x seeds at one horizon.

    Non-private agents get one cell per (env, seed) whatever the epsilons.

    Parameters
    ----------
    agents, envs : sequence of AgentEntry, EnvEntry
    epsilons : sequence of float
        Privacy levels of the private agents, each > 0.
    seeds : int or sequence of int
        A count n >= 1 (the seeds 0 .. n-1) or the seeds themselves (distinct integers >= 0, kept in
        their order); stored as a tuple. A seed names a cell's random stream (see the module docstring),
        so two grids that share a seed and an env share its contexts and rewards.
    horizon : int
        T >= 1.
    delta : float
        The privacy delta of every private agent, in (0, 1).
    points_per_octave : int
        Logging density of the runs.
    """

    agents: tuple
    envs: tuple
    epsilons: tuple = (1.0,)
    seeds: Any = 1
    horizon: int = 1024
    delta: float = 1e-5
    points_per_octave: int = 8

    def __post_init__(self) -> None:
        object.__setattr__(self, "agents", tuple(self.agents))
        object.__setattr__(self, "envs", tuple(self.envs))
        if not self.agents or not all(isinstance(a, AgentEntry) for a in self.agents):
            raise ValueError("agents must be a non-empty sequence of AgentEntry")
        if not self.envs or not all(isinstance(e, EnvEntry) for e in self.envs):
            raise ValueError("envs must be a non-empty sequence of EnvEntry")
        object.__setattr__(self, "epsilons", tuple(check_epsilon(e) for e in self.epsilons))
        if not self.epsilons:
            raise ValueError("epsilons must contain at least one privacy level > 0")
        object.__setattr__(self, "seeds", _seed_list(self.seeds))
        object.__setattr__(self, "horizon", check_int("horizon", self.horizon, low=1))
        object.__setattr__(self, "delta", check_delta(self.delta))
        object.__setattr__(self, "points_per_octave", check_int("points_per_octave", self.points_per_octave, low=1))

    def cells(self, entropy: int = DEFAULT_ENTROPY) -> list[Cell]:
        """The grid's cells in a fixed order (env, agent, epsilon, seed)."""
        out = []
        for env in self.envs:
            for agent in self.agents:
                levels: Sequence[float | None] = self.epsilons if agent.is_private() else (None,)
                for eps in levels:
                    for seed in self.seeds:
                        out.append(Cell(agent, env, eps, seed, self.horizon, self.delta if eps is not None else None,
                                        entropy, self.points_per_octave))
        return out


def _seed_list(seeds: Any) -> tuple[int, ...]:
    """A grid's seeds: ``range(n)`` for a count n >= 1, else the given distinct integers >= 0, as a tuple."""
    if isinstance(seeds, (numbers.Integral, np.integer)) and not isinstance(seeds, (bool, np.bool_)):
        return tuple(range(check_int("seeds", seeds, low=1)))
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise TypeError(f"seeds must be a count (an integer >= 1) or a sequence of integers >= 0, "
                        f"got {type(seeds).__name__}")
    out = tuple(check_int("seeds[i]", s, low=0) for s in seeds)
    if not out:
        raise ValueError("seeds must contain at least one seed")
    if len(set(out)) != len(out):
        raise ValueError(f"seeds must be distinct, got {list(out)}")
    return out


def _limit_blas():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - depends on the install
        return contextlib.nullcontext()
    return threadpool_limits(1)


def cell_path(cells_dir: Path, cell: Cell) -> Path:
    """Where a cell's table is stored."""
    return Path(cells_dir) / f"{cell.key}.csv"


def _version() -> str:
    from .. import __version__

    return __version__


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


def _cell_text(cell: Cell, table: pd.DataFrame, planned_seeds: Sequence[int]) -> str:
    """The cell file: the table as CSV, then the footer (:data:`FOOTER`) that proves it complete."""
    body = table.to_csv(index=False, lineterminator="\n")
    footer = dict(key=cell.key, identity=json.loads(_canonical(cell.identity())), version=_version(),
                  entropy=cell.entropy, rows=len(table), planned_seeds=[int(s) for s in planned_seeds],
                  sha256=hashlib.sha256(body.encode()).hexdigest())
    return body + FOOTER + json.dumps(footer, sort_keys=True, separators=(",", ":")) + "\n"


def run_cell(cell: Cell, cells_dir: str | os.PathLike, plugins: Sequence[Any] = (),
             planned_seeds: Sequence[int] | None = None) -> tuple[str, bool]:
    """Run one cell unless its file exists; write the table atomically. Returns (key, ran).

    ``plugins`` are the :class:`~privbandit.plugins.PluginRef` s of the sweep (:func:`plugin_refs`), made
    known in this process first (a worker of a parallel sweep starts without the user's registrations).
    ``planned_seeds`` (the seeds of the cell's group in its sweep, default the cell's own) go into the
    footer, so a later report knows how many seeds the group should have.
    """
    path = cell_path(Path(cells_dir), cell)
    if path.exists():
        return cell.key, False
    if plugins:
        from ..plugins import prepare

        for ref in plugins:
            prepare(ref)
    with _limit_blas():
        agent = cell.agent.build(cell.epsilon, cell.delta)
        env = cell.env.make(cell.horizon)
        try:
            table = run(agent, env, cell.horizon, cell.seed_sequence(), points_per_octave=cell.points_per_octave,
                        labels=dict(agent=cell.agent.label, env=cell.env.label, seed=cell.seed))
        finally:
            env.close()
    atomic_write(path, _cell_text(cell, table, planned_seeds if planned_seeds is not None else (cell.seed,)))
    return cell.key, True


def _split_footer(data: bytes) -> tuple[bytes, bytes | None]:
    """The bytes above a cell file's footer line and the footer line (None if the last line is not one)."""
    head, sep, last = data.rstrip(b"\n").rpartition(b"\n")
    if last.startswith(FOOTER.encode()):
        return (head + sep), last
    return data, None


def _read_table(source: Any) -> pd.DataFrame:
    extra = {} if _PANDAS_MAJOR >= 3 else {"float_precision": "round_trip"}  # pandas 3 round-trips by default
    return pd.read_csv(source, keep_default_na=False, dtype={"agent": str, "env": str, "family": str,
                                                             "privacy_model": str}, **extra)


def read_cell(path: str | os.PathLike) -> pd.DataFrame:
    """Read a cell's (or a results) table back exactly (floats round-trip), without the footer; no check
    (:func:`load_cell` checks)."""
    body, _ = _split_footer(Path(path).read_bytes())
    return _read_table(io.BytesIO(body))


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
    body, line = _split_footer(data)
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
    if footer.get("version") != _version():
        raise CellFileError(f"written by privbandit {footer.get('version')}, this is {_version()}")
    if f"{footer.get('key')}.csv" != path.name:
        raise CellFileError(f"its footer names another cell ({footer.get('key')})")
    if cell is not None and footer.get("identity") != json.loads(_canonical(cell.identity())):
        raise CellFileError("its footer's identity is not this cell's")
    if entropies is not None and footer.get("entropy") not in set(entropies):
        raise CellFileError(f"entropy {footer.get('entropy')}, this sweep uses {sorted(set(entropies))}")
    try:
        table = _read_table(io.BytesIO(body))
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


def _move_aside(path: Path) -> Path:
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


TRACKER_FILTER = "ignore::UserWarning:joblib.externals.loky.backend.resource_tracker"
"""The ``PYTHONWARNINGS`` entry :func:`backend_context` gives the loky processes it starts."""


@contextlib.contextmanager
def _quiet_resource_tracker() -> Iterator[None]:
    """``PYTHONWARNINGS`` with :data:`TRACKER_FILTER` appended (it takes precedence), restored afterwards.

    loky's resource tracker, a process started with the first workers, warns on stderr when a run ends by
    Ctrl-C ("leaked semlock objects to clean up at shutdown", then cleans them up): that would break the
    one line an interrupted command prints. Only that module's UserWarnings are silenced; the variable is
    process-wide while the context is open.
    """
    old = os.environ.get("PYTHONWARNINGS")
    os.environ["PYTHONWARNINGS"] = f"{old},{TRACKER_FILTER}" if old else TRACKER_FILTER
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PYTHONWARNINGS", None)
        else:
            os.environ["PYTHONWARNINGS"] = old


@contextlib.contextmanager
def backend_context(backend: str, jobs: int, address: str | None = None) -> Iterator[None]:
    """joblib's ``parallel_config`` for ``backend`` with one BLAS thread per worker.

    ``"dask"`` connects to ``address`` (a scheduler) or the current client, or starts a local cluster
    of ``jobs`` single-threaded worker processes; ``"ray"`` connects to ``address`` or starts ray locally.

    Raises
    ------
    BackendUnavailable
        If the backend's package is missing (``pip install "privbandit[dist]"``).
    """
    from joblib import parallel_config

    check_choice("backend", backend, BACKENDS)
    if backend == "loky":
        with _quiet_resource_tracker(), parallel_config(backend="loky", n_jobs=jobs, inner_max_num_threads=1):
            yield
        return
    if backend == "dask":
        try:
            import dask
            from dask.distributed import Client, LocalCluster, get_client
        except ImportError as exc:
            raise BackendUnavailable('backend "dask" needs dask and distributed: pip install "privbandit[dist]" '
                                     f"({exc})") from None
        with contextlib.ExitStack() as stack:
            if address is not None:
                stack.enter_context(Client(address))
            else:
                try:
                    get_client()
                except ValueError:
                    environ = {**dask.config.get("distributed.nanny.pre-spawn-environ", {}), **THREAD_ENV}
                    with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
                        cluster = stack.enter_context(LocalCluster(n_workers=jobs, threads_per_worker=1,
                                                                   processes=True, dashboard_address=None))
                    stack.enter_context(Client(cluster))
            with parallel_config(backend="dask"):
                yield
        return
    try:
        import ray
        from ray.util.joblib import register_ray
    except ImportError as exc:
        raise BackendUnavailable(f'backend "ray" needs ray: pip install "privbandit[dist]" ({exc})') from None
    register_ray()
    started = False
    if not ray.is_initialized():
        ray.init(address=address, runtime_env={"env_vars": THREAD_ENV}, include_dashboard=False)
        started = True
    try:
        with parallel_config(backend="ray", n_jobs=jobs):
            yield
    finally:
        if started:
            ray.shutdown()


def _plugin_names(cells: Sequence[Cell]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The agent, oracle and family names the cells look up (oracles and families given by name)."""
    agents, oracles, families = {}, {}, {}
    for c in cells:
        agents[c.agent.name] = None
        oracle = dict(c.agent.kwargs).get("oracle")
        if isinstance(oracle, str):
            oracles[oracle] = None
        family = dict(c.env.kwargs).get("family")
        if isinstance(family, str):
            families[family] = None
    return tuple(agents), tuple(oracles), tuple(families)


def plugin_refs(cells: Sequence[Cell]) -> tuple[Any, ...]:
    """What a worker needs to find the cells' plugins: a :class:`~privbandit.plugins.PluginRef` for each
    agent registered from user code and each import path ``"pkg.module:attr"`` among the agents, oracles
    and families (built-in names and entry points need none: every worker finds them by name)."""
    from ..plugins import agent_ref, is_import_path, ref_for_path

    agents, oracles, families = _plugin_names(cells)
    refs = [agent_ref(a) for a in agents]
    refs += [ref_for_path("oracle", o) for o in oracles if is_import_path(o)]
    refs += [ref_for_path("family", f) for f in families if is_import_path(f)]
    return tuple(r for r in refs if r is not None)


def _check_plugins(cells: Sequence[Cell], refs: tuple[Any, ...], n_jobs: int, backend: str | None) -> None:
    """Before any cell runs: every worker (or this process, ``backend=None``) can find the cells' agents,
    oracles and families; else a :class:`~privbandit.plugins.PluginError` that says which and why."""
    from ..plugins import PluginError, probe

    names = _plugin_names(cells)
    if backend is None:
        problems = probe(refs, *names)
    else:
        from joblib import Parallel, delayed

        try:
            found = Parallel(n_jobs=n_jobs)(delayed(probe)(refs, *names) for _ in range(n_jobs))
        except Exception as exc:  # e.g. a factory the workers cannot unpickle
            raise PluginError(f"the {backend} workers cannot load this sweep's plugins ({type(exc).__name__}: "
                              f"{exc}); no cell was run") from None
        problems = list(dict.fromkeys(p for worker in found for p in worker))
    if problems:
        where = "this process" if backend is None else f"a {backend} worker"
        raise PluginError(f"{where} cannot find what the sweep needs, so no cell was run: "
                          + "; ".join(problems))


def _return_as() -> str:
    """``"generator_unordered"`` (progress as cells finish) where the active joblib backend supports it,
    else ``"list"`` (ray's backend does not support generators)."""
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    return "generator_unordered" if getattr(backend, "supports_return_generator", False) else "list"


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


def _planned(groups: Mapping[tuple, set]) -> pd.DataFrame:
    rows = [(*k, len(v)) for k, v in groups.items()]
    return pd.DataFrame(rows, columns=list(PLANNED_COLUMNS))


def _worker_lost_errors() -> tuple[type[BaseException], ...]:
    """The exceptions joblib raises when a worker process dies (loky) or is lost too often (dask)."""
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    errors: list[type[BaseException]] = [TerminatedWorkerError]
    with contextlib.suppress(ImportError):
        from distributed import KilledWorker

        errors.append(KilledWorker)
    return tuple(errors)


@dataclass
class SweepResult:
    """What a sweep did: the combined table and which cells ran now or were found finished.

    ``table`` is ``<out>/results.csv``: the sweep's cells, then ``others``, the cells that earlier sweeps
    left in the same folder (their keys). ``rejected`` lists the cell files that failed :func:`load_cell`
    (file name, reason), moved to ``<out>/cells/rejected/``; ``lost`` the keys of cells whose worker died
    (not finished: a rerun runs them); ``planned`` the number of seeds planned per group (env, agent,
    epsilon, horizon) by this sweep and by the footers of the other cells, for
    :func:`~privbandit.sim.report.final_regret`'s completeness columns.
    """

    table: pd.DataFrame
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    out: Path | None = None
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
            _move_aside(path)
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
            _move_aside(path)
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
    >>> from privbandit.sim import AgentEntry, EnvEntry, Grid, sweep
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
    jobs = check_int("jobs", jobs, low=-1)
    if jobs == 0:
        raise ValueError("jobs must be -1 (all cores) or an integer >= 1, got 0")
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
        try:
            if n_jobs == 1 and backend == "loky":
                _check_plugins(todo, refs, 1, None)
                results: Iterable[tuple[str, bool]] = (run_cell(c, cells_dir, (), planned_seeds[_group(c)])
                                                       for c in todo)
                for key, did in results:
                    (ran if did else skipped).append(key)
                    bar.update()
            else:
                with backend_context(backend, n_jobs, address):
                    _check_plugins(todo, refs, n_jobs, backend)
                    gen = Parallel(return_as=_return_as())(
                        delayed(run_cell)(c, str(cells_dir), refs, planned_seeds[_group(c)]) for c in todo)
                    try:
                        for key, did in gen:
                            (ran if did else skipped).append(key)
                            bar.update()
                    except _worker_lost_errors():
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
    return SweepResult(table=table, ran=ran, skipped=skipped, out=out, others=others, rejected=rejected, lost=lost,
                       planned=_planned(groups))


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
    """
    out = Path(out)
    frames = []
    for c in cells:
        with contextlib.suppress(CellFileError):
            frames.append(load_cell(cell_path(out / "cells", c), c)[0])
    for p in other_cells(cells, out):
        with contextlib.suppress(CellFileError):
            frames.append(load_cell(p)[0])
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(COLUMNS))
    atomic_write(out / "results.csv", table.to_csv(index=False, lineterminator="\n"))
    return table
