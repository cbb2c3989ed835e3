"""Execution backends of a sweep: joblib on local processes (loky), a dask or a ray cluster, and what the
workers need to find the sweep's plugins.

Parallelism
-----------
joblib runs the cells: ``backend="loky"`` (local processes, the default), ``"dask"`` or ``"ray"`` (a
cluster; the optional extra ``pip install "privbandit[dist]"``) through ``joblib.parallel_config``
(:func:`backend_context`). BLAS threads are limited to one per worker: loky's ``inner_max_num_threads=1``
sets the thread variables in its workers, dask workers we start get them through
``distributed.nanny.pre-spawn-environ``, ray workers through ``runtime_env``, and every cell also runs under
``threadpoolctl.threadpool_limits(1)`` (:func:`limit_blas`).

Plugins in workers
------------------
A worker starts without the user's registrations. The cells carry a :class:`PluginRef` for each plugin
that a worker could not find by name alone (an agent registered with ``register_agent`` in a user module,
an import path). :func:`prepare` makes each one known in the worker, and :func:`check_plugins` runs
:func:`probe` in the workers before any cell runs.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validation import check_choice
from ..agents.registry import AGENT_REGISTRY, agent_is_private, factory_is_private, register_agent
from ..envs.contexts import FAMILY_REGISTRY, family_class
from ..oracles.registry import ORACLE_REGISTRY, oracle_class
from ..registry import PluginError, first_doc_line, is_import_path, load_import_path
from .grid import Cell

__all__ = ["BACKENDS", "THREAD_ENV", "TRACKER_FILTER", "BackendUnavailable", "PluginRef", "agent_ref",
           "backend_context", "check_plugins", "limit_blas", "plugin_refs", "prepare", "probe", "ref_for_path"]

BACKENDS: tuple[str, ...] = ("loky", "dask", "ray")

THREAD_ENV: dict[str, str] = {k: "1" for k in (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS")}
"""Environment variables that limit BLAS and OpenMP to one thread in a worker."""


class BackendUnavailable(ImportError):
    """Raised when the dask or ray backend is asked for but its package is not installed."""


@dataclass(frozen=True)
class PluginRef:
    """How a worker finds one plugin: an import path, the folder its module came from, and, for a
    factory defined in ``__main__`` (a script or a notebook), the factory itself (sent by value).

    Parameters
    ----------
    kind : {"agent", "oracle", "family"}
    name : str
        The name the registry knows it by.
    path : str, optional
        ``"module:attr"`` of the object.
    folder : str, optional
        The ``sys.path`` folder the module was imported from (added to the worker's ``sys.path`` if the
        module is not importable there otherwise); None for installed packages.
    factory : callable, optional
        A ``__main__`` factory (cloudpickle sends it by value to loky, dask and ray workers).
    private : bool, optional
        The registration's privacy flag (for an agent registered again in a worker).
    """

    kind: str
    name: str
    path: str | None = None
    folder: str | None = None
    factory: Any = None
    private: bool | None = None

    def describe(self) -> str:
        """``kind 'name'`` and where it comes from."""
        where = f" from {self.path}" if self.path and self.path != self.name else ""
        where += " (defined in __main__, sent by value)" if self.factory is not None else ""
        return f"{self.kind} {self.name!r}{where}"


def _source_folder(module_name: str) -> str | None:
    """The ``sys.path`` entry a user module was imported from (None for site-packages or built-ins)."""
    mod = sys.modules.get(module_name)
    file = getattr(mod, "__file__", None)
    if not file:
        return None
    path = Path(file).resolve()
    depth = module_name.count(".") + (2 if path.name == "__init__.py" else 1)
    root = path.parents[depth - 1]
    if any(part in ("site-packages", "dist-packages") for part in root.parts):
        return None
    return str(root)


def ref_for_path(kind: str, path: str) -> PluginRef:
    """The :class:`PluginRef` of an import path (its module must be importable here)."""
    load_import_path(path)
    return PluginRef(kind, path, path, _source_folder(path.partition(":")[0]))


def agent_ref(name: str) -> PluginRef | None:
    """What a worker needs to find agent ``name``: None for built-in agents and entry points (every worker
    finds those by name), else a :class:`PluginRef`."""
    if is_import_path(name):
        return ref_for_path("agent", name)
    if name not in AGENT_REGISTRY:
        return None  # an entry point (or unknown: make_agent says so)
    entry = AGENT_REGISTRY.get(name)
    module = getattr(entry.obj, "__module__", None) or ""
    qualname = getattr(entry.obj, "__qualname__", "")
    if module == "privbandit" or module.startswith("privbandit."):
        return None
    private = entry.info["private"]
    if module == "__main__" or "<locals>" in qualname or not qualname:
        return PluginRef("agent", name, factory=entry.obj, private=private)
    return PluginRef("agent", name, f"{module}:{qualname}", _source_folder(module), private=private)


def prepare(ref: PluginRef) -> None:
    """Make ``ref`` known in this process: import its module (from its folder if needed) and register it.

    Raises
    ------
    PluginError
        If it cannot be imported here (the message says why).
    """
    if ref.path is not None:
        module = ref.path.partition(":")[0]
        try:
            importlib.import_module(module)
        except ImportError:
            if ref.folder and os.path.isdir(ref.folder) and ref.folder not in sys.path:
                sys.path.append(ref.folder)
                importlib.invalidate_caches()
    if ref.kind != "agent":
        if ref.path is not None:
            (ORACLE_REGISTRY if ref.kind == "oracle" else FAMILY_REGISTRY).get(ref.name)
        return
    if ref.name in AGENT_REGISTRY:
        return
    if ref.factory is not None:
        register_agent(ref.name, ref.factory, description=first_doc_line(ref.factory), private=ref.private)
    elif ref.path is not None:
        obj = load_import_path(ref.path)
        if ref.name not in AGENT_REGISTRY:  # importing the module may have registered it
            private = ref.private if ref.private is not None else factory_is_private(obj)
            register_agent(ref.name, obj, description=first_doc_line(obj), private=private)


def probe(refs: tuple[PluginRef, ...], agents: tuple[str, ...] = (), oracles: tuple[str, ...] = (),
          families: tuple[str, ...] = ()) -> list[str]:
    """Prepare every ref and look up every name in this process; the problems found, one line each.

    Runs in a worker before a sweep's cells (a factory the worker cannot import fails the sweep early).
    """
    problems = []
    for ref in refs:
        try:
            prepare(ref)
        except Exception as exc:  # report every failure, whatever it is
            problems.append(f"{ref.describe()}: {exc}")
    for lookup, names in ((agent_is_private, agents), (oracle_class, oracles), (family_class, families)):
        for name in names:
            try:
                lookup(name)
            except Exception as exc:  # noqa: PERF203 - one message per name
                problems.append(str(exc))
    return problems


def limit_blas():
    """``threadpoolctl.threadpool_limits(1)``: one BLAS thread."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


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
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, runtime_env={"env_vars": THREAD_ENV}, include_dashboard=False)
    try:
        with parallel_config(backend="ray", n_jobs=jobs):
            yield
    finally:
        if started:
            ray.shutdown()


def return_as() -> str:
    """``"generator_unordered"`` (progress as cells finish) where the active joblib backend supports it,
    else ``"list"`` (ray's backend does not support generators)."""
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    return "generator_unordered" if getattr(backend, "supports_return_generator", False) else "list"


def worker_lost_errors() -> tuple[type[BaseException], ...]:
    """The exceptions joblib raises when a worker process dies (loky) or is lost too often (dask)."""
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    errors: list[type[BaseException]] = [TerminatedWorkerError]
    with contextlib.suppress(ImportError):
        from distributed import KilledWorker

        errors.append(KilledWorker)
    return tuple(errors)


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


def plugin_refs(cells: Sequence[Cell]) -> tuple[PluginRef, ...]:
    """What a worker needs to find the cells' plugins: a :class:`PluginRef` for each
    agent registered from user code and each import path ``"pkg.module:attr"`` among the agents, oracles
    and families (built-in names and entry points need none: every worker finds them by name)."""
    agents, oracles, families = _plugin_names(cells)
    refs = [agent_ref(a) for a in agents]
    refs += [ref_for_path("oracle", o) for o in oracles if is_import_path(o)]
    refs += [ref_for_path("family", f) for f in families if is_import_path(f)]
    return tuple(r for r in refs if r is not None)


def check_plugins(cells: Sequence[Cell], refs: tuple[PluginRef, ...], n_jobs: int, backend: str | None) -> None:
    """Before any cell runs: every worker (or this process, ``backend=None``) can find the cells' agents,
    oracles and families; else a :class:`~privbandit.registry.PluginError` that says which and why."""
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
