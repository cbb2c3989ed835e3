"""The ``privbandit`` command.

::

    privbandit bench --suite quick|paper [--out DIR] [--jobs N] [--backend loky|dask|ray]
    privbandit run --env ID --agent NAME [--epsilon E] --horizon T --seeds S [--out DIR]
    privbandit plot DIR
    privbandit list envs|agents|oracles|families

``bench`` runs a named suite (:mod:`privbandit.sim.suites`) cell by cell into ``DIR/cells`` (a rerun
skips finished cells), then writes ``DIR/results.csv``, the figures ``DIR/figures/*.png`` and
``DIR/report.md``. ``run`` plays one agent on one env for S seeds. ``plot`` redraws the figures and the
report of a results folder. Bad arguments exit with code 2 and a one-line message.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from pathlib import Path
from typing import Sequence

FAMILIES_FALLBACK = ("isotropic", "spiky", "rare-direction", "heavy-tailed", "heavy-tailed-direction", "low-rank")


class UsageError(Exception):
    """A bad argument found after parsing (reported like argparse's errors, exit code 2)."""


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {v}")
    return v


def _jobs(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be -1 (all cores) or an integer >= 1, got {text!r}") from None
    if v == 0 or v < -1:
        raise argparse.ArgumentTypeError(f"must be -1 (all cores) or an integer >= 1, got {v}")
    return v


def _epsilon(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return v


def _delta(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), got {text!r}") from None
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text!r}")
    return v


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``privbandit``."""
    from .sim.suites import SUITES
    from .sim.sweep import BACKENDS

    p = argparse.ArgumentParser(prog="privbandit", description="Differentially private contextual bandits: "
                                "benchmarks, runs, plots.")
    sub = p.add_subparsers(dest="command", required=True, metavar="{bench,run,plot,list}")

    b = sub.add_parser("bench", help="run a benchmark suite: results, figures and report.md")
    b.add_argument("--suite", choices=sorted(SUITES), default="quick", help="the suite (default: quick)")
    b.add_argument("--out", type=Path, default=None, help="results folder (default: results/SUITE)")
    b.add_argument("--jobs", type=_jobs, default=-1, help="parallel workers (default -1: all cores)")
    b.add_argument("--backend", choices=BACKENDS, default="loky", help="joblib backend (dask/ray: the dist extra)")
    b.add_argument("--address", default=None, help="dask or ray scheduler address (default: a local cluster)")
    b.add_argument("--seeds", type=_positive_int, default=None, help="override the suite's number of seeds")
    b.add_argument("--horizon", type=_positive_int, default=None, help="override the suite's horizon T")
    b.add_argument("--no-progress", action="store_true", help="no progress bar")

    r = sub.add_parser("run", help="one agent on one env for several seeds")
    r.add_argument("--env", required=True, help="a registered env id, e.g. PrivLinCB-v0 (see: privbandit list envs)")
    r.add_argument("--agent", required=True, help="an agent name (see: privbandit list agents)")
    r.add_argument("--epsilon", type=_epsilon, default=None, help="privacy epsilon of a private agent (default 1)")
    r.add_argument("--delta", type=_delta, default=1e-5, help="privacy delta of a private agent (default 1e-5)")
    r.add_argument("--horizon", type=_positive_int, required=True, help="rounds T")
    r.add_argument("--seeds", type=_positive_int, default=1, help="number of seeds (default 1)")
    r.add_argument("--family", default=None, help="context family (see: privbandit list families)")
    r.add_argument("--dim", type=_positive_int, default=None, help="feature dimension d")
    r.add_argument("--arms", type=_positive_int, default=None, help="number of arms K")
    r.add_argument("--out", type=Path, default=None, help="results folder (cells, results.csv, figures, report.md)")
    r.add_argument("--jobs", type=_jobs, default=1, help="parallel workers (default 1)")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")

    pl = sub.add_parser("plot", help="redraw the figures and report.md of a results folder")
    pl.add_argument("dir", type=Path, help="a folder with results.csv (from bench or run --out)")

    ls = sub.add_parser("list", help="list what is registered")
    ls.add_argument("what", choices=("envs", "agents", "oracles", "families"))
    return p


def _use_agg() -> None:
    import matplotlib

    matplotlib.use("Agg")


def _finish(table, out: Path, *, title: str, references: dict, notes: list[str],
            slope_window=(None, None)) -> Path:
    from .plots import save_standard_figures
    from .sim.report import write_report

    _use_agg()
    figures = save_standard_figures(table, out / "figures")
    return write_report(table, out, title=title, references=references, figures=figures, notes=notes,
                        slope_window=slope_window)


def _headline(table) -> str:
    from .sim.report import final_regret, headline_table, markdown_table

    return markdown_table(headline_table(final_regret(table)))


def cmd_bench(args: argparse.Namespace) -> int:
    """``privbandit bench``."""
    from dataclasses import replace

    from .sim.suites import get_suite
    from .sim.sweep import sweep

    suite = get_suite(args.suite)
    grids = suite.available_grids()
    if args.seeds is not None or args.horizon is not None:
        grids = [replace(g, seeds=args.seeds or g.seeds, horizon=args.horizon or g.horizon) for g in grids]
    suite = replace(suite, grids=tuple(grids))
    cells = suite.cells()
    if not cells:
        raise UsageError(f"suite {args.suite!r} has no agent available in this install")
    out = args.out or Path("results") / args.suite
    start = time.perf_counter()
    res = sweep(cells, out, jobs=args.jobs, backend=args.backend, address=args.address,
                progress=not args.no_progress)
    wall = time.perf_counter() - start
    notes = [f"suite `{suite.name}`: {suite.description}",
             f"command: `privbandit {' '.join(shlex.quote(a) for a in args.argv)}`",
             f"{len(cells)} cells ({len(res.ran)} run now, {len(res.skipped)} found finished); "
             f"sweep wall time {wall:.1f} s with --jobs {args.jobs} --backend {args.backend}"]
    missing = get_suite(args.suite).missing()
    if missing:
        notes.append("agents of the suite not available in this install (left out): " + ", ".join(missing))
    report = _finish(res.table, out, title=f"privbandit benchmark: {suite.name}", references=suite.references(),
                     notes=notes, slope_window=suite.slope_window)
    total = time.perf_counter() - start
    print(_headline(res.table))
    print(f"\n{len(cells)} cells ({len(res.ran)} run, {len(res.skipped)} already finished); wall time {total:.1f} s")
    print(f"report: {report}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """``privbandit run``."""
    import gymnasium as gym

    from .agents import agent_names
    from .sim.sweep import AgentEntry, EnvEntry, Grid, sweep

    if args.env not in _env_ids():
        raise UsageError(f"--env must be one of {sorted(_env_ids())}, got {args.env!r}")
    if args.agent not in agent_names():
        raise UsageError(f"--agent must be one of {list(agent_names())}, got {args.agent!r}")
    entry = AgentEntry(args.agent)
    private = entry.is_private()
    if not private and args.epsilon is not None:
        raise UsageError(f"--epsilon applies to private agents only; {args.agent!r} is non-private")
    env_kwargs = {k: v for k, v in dict(family=args.family, dim=args.dim, n_arms=args.arms).items() if v is not None}
    label = "-".join([args.env] + [f"{k}={v}" for k, v in env_kwargs.items()])
    env_entry = EnvEntry(label, args.env, env_kwargs)
    try:  # check the env kwargs now, with the library's message
        env_entry.make(args.horizon).close()
    except (TypeError, ValueError, gym.error.Error) as exc:
        raise UsageError(f"cannot make {args.env} with {env_kwargs}: {exc}") from None
    grid = Grid((AgentEntry(args.agent, private=private),), (env_entry,), epsilons=(args.epsilon or 1.0,),
                seeds=args.seeds, horizon=args.horizon, delta=args.delta)
    cells = grid.cells()
    if args.out is None:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="privbandit-run-") as tmp:
            res = sweep(cells, tmp, jobs=args.jobs, progress=not args.no_progress)
    else:
        res = sweep(cells, args.out, jobs=args.jobs, progress=not args.no_progress)
        _finish(res.table, args.out, title=f"privbandit run: {args.agent} on {label}", references={},
                notes=[f"command: `privbandit {' '.join(shlex.quote(a) for a in args.argv)}`"])
    print(_headline(res.table))
    if args.out is not None:
        print(f"results: {args.out / 'results.csv'}")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    """``privbandit plot DIR``."""
    from .sim.sweep import read_cell

    path = args.dir / "results.csv"
    if not path.is_file():
        raise UsageError(f"{args.dir} has no results.csv (make one with privbandit bench or run --out)")
    table = read_cell(path)
    report = _finish(table, args.dir, title=f"privbandit results: {args.dir}", references=_references(table),
                     notes=[f"redrawn by `privbandit plot {shlex.quote(str(args.dir))}`"])
    print(f"figures: {args.dir / 'figures'}\nreport: {report}")
    return 0


def _references(table) -> dict[str, str]:
    from .sim.suites import SUITES

    labels = set(table["agent"])
    refs = {}
    for suite in SUITES.values():
        for k, v in suite.references().items():
            if k in labels and v in labels:
                refs[k] = v
    return refs


def _env_ids() -> list[str]:
    import gymnasium as gym

    import privbandit  # noqa: F401 - registers the envs

    return sorted(k for k, spec in gym.registry.items()
                  if isinstance(spec.entry_point, str) and spec.entry_point.startswith("privbandit"))


def cmd_list(args: argparse.Namespace) -> int:
    """``privbandit list envs|agents|oracles|families``."""
    if args.what == "envs":
        for name in _env_ids():
            print(name)
    elif args.what == "agents":
        from .agents import agent_descriptions

        for name, text in agent_descriptions().items():
            print(f"{name:24s} {text}")
    elif args.what == "oracles":
        from .oracles import oracle_class, oracle_names

        for name in oracle_names():
            doc = (oracle_class(name).__doc__ or "").strip().splitlines()
            print(f"{name:24s} {doc[0] if doc else ''}")
    else:
        for name in _family_names():
            print(name)
    return 0


def _family_names() -> list[str]:
    try:
        from . import envs
    except ImportError:  # pragma: no cover - envs not installed yet
        return list(FAMILIES_FALLBACK)
    for attr in ("family_names", "FAMILIES"):
        obj = getattr(envs, attr, None)
        if callable(obj):
            return list(obj())
        if obj is not None:
            return list(obj)
    return list(FAMILIES_FALLBACK)


COMMANDS = {"bench": cmd_bench, "run": cmd_run, "plot": cmd_plot, "list": cmd_list}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privbandit`` console script; returns the exit code (2 on bad arguments)."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)  # exits with code 2 on a parse error
    args.argv = argv
    try:
        return COMMANDS[args.command](args)
    except UsageError as exc:
        parser.error(str(exc))
    except ImportError as exc:  # an optional backend that is not installed
        from .sim.sweep import BackendUnavailable

        if isinstance(exc, BackendUnavailable):
            parser.error(str(exc))
        raise
    return 1  # pragma: no cover - parser.error exits


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
