"""What a worker process needs: joblib backends with one BLAS thread per worker, and the references that let a
worker find a user's plugins. The sweep (:mod:`privbandit.bench.sweep`) and the audit (:mod:`privbandit.agents.audit`)
run their work through them.

Parallelism
-----------
joblib runs the work: ``backend="loky"`` (local processes, the default), ``"dask"`` or ``"ray"`` (a
cluster; the optional extra ``pip install "privbandit[dist]"``) through ``joblib.parallel_config``
(:func:`backend_context`). BLAS threads are limited to one per worker: loky's ``inner_max_num_threads=1``
sets the thread variables in its workers, dask workers we start get them through
``distributed.nanny.pre-spawn-environ``, ray workers through ``runtime_env``, and every cell also runs under
``threadpoolctl.threadpool_limits(1)`` (:func:`limit_blas`).

Plugins in workers
------------------
A worker starts without the user's registrations. The work carries a :class:`PluginRef` for each plugin
that a worker could not find by name alone (an agent registered with ``register_agent`` in a user module,
an import path). :func:`prepare` makes each one known in the worker.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validation import check_choice, check_int
from ..envs.contexts import FAMILY_REGISTRY
from ..oracles.registry import ORACLE_REGISTRY
from ..registry import first_doc_line, is_import_path, load_import_path
from .registry import AGENT_REGISTRY, factory_is_private, register_agent

__all__ = ["BACKENDS", "THREAD_ENV", "TRACKER_FILTER", "BackendUnavailable", "PluginRef", "agent_ref",
           "backend_context", "check_jobs", "limit_blas", "prepare", "ref_for_path"]

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
    privacy : str, optional
        The registration's privacy model (``"any"`` or None: not declared).
    """

    kind: str
    name: str
    path: str | None = None
    folder: str | None = None
    factory: Any = None
    private: bool | None = None
    privacy: str | None = None

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
    facts = dict(private=entry.info["private"], privacy=entry.info["privacy"])
    if module == "__main__" or "<locals>" in qualname or not qualname:
        return PluginRef("agent", name, factory=entry.obj, **facts)
    return PluginRef("agent", name, f"{module}:{qualname}", _source_folder(module), **facts)


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
        register_agent(ref.name, ref.factory, description=first_doc_line(ref.factory), private=ref.private,
                       privacy=ref.privacy)
    elif ref.path is not None:
        obj = load_import_path(ref.path)
        if ref.name not in AGENT_REGISTRY:  # importing the module may have registered it
            private = ref.private if ref.private is not None else factory_is_private(obj)
            register_agent(ref.name, obj, description=first_doc_line(obj), private=private, privacy=ref.privacy)


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


def check_jobs(jobs: Any) -> int:
    """``jobs``, checked: -1 (all cores) or an integer >= 1 (the sweep's and the audit's worker count)."""
    jobs = check_int("jobs", jobs, low=-1)
    if jobs == 0:
        raise ValueError("jobs must be -1 (all cores) or an integer >= 1, got 0")
    return jobs
