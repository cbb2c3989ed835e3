"""A sweep's side of the execution backends: before any cell runs, every worker finds the cells' plugins.

The backends themselves (loky, dask, ray, one BLAS thread per worker) and the references a worker needs to find a
user's plugin are :mod:`privbandit.agents.workers`'s (the audit runs through them too). :func:`plugin_refs` lists
what the cells need, :func:`check_plugins` runs :func:`probe` in the workers; :func:`return_as` and
:func:`worker_lost_errors` are what the sweep asks of the active backend.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from ..agents.registry import agent_is_private
from ..agents.workers import PluginRef, agent_ref, prepare, ref_for_path
from ..envs.contexts import family_class
from ..oracles.registry import oracle_class
from ..registry import PluginError, is_import_path
from .grid import Cell

__all__ = ["check_plugins", "plugin_refs", "probe", "return_as", "worker_lost_errors"]


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
