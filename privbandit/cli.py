"""The ``privbandit`` command (``privbandit COMMAND --help`` lists each one's options): parsing, then calls.

``bench`` is :func:`privbandit.bench.run_bench`, ``run`` :func:`~privbandit.bench.workflow.run_agent`, ``plot``
:func:`~privbandit.bench.workflow.replot`, ``store-reference`` :func:`~privbandit.bench.workflow.store_suite`,
``audit`` :func:`privbandit.agents.audit.audit_agent`, ``leaderboard``
:func:`privbandit.report.leaderboard.ranked_boards` and ``board`` :func:`privbandit.report.write_board`. Errors are
one line; :data:`EXIT_CODES` lists the exit codes.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import __version__
from .agents import agent_descriptions
from .agents.workers import BACKENDS, BackendUnavailable
from .bench.cells import FolderLocked, cell_path
from .bench.stored import stored_results, stored_source
from .bench.suites import SUITES
from .bench.workflow import EXIT_INCOMPLETE, BenchError, replot, run_agent, run_bench, store_suite
from .envs import family_names
from .envs.registration import ENV_IDS
from .oracles import ContractError, oracle_class, oracle_names
from .privacy import check_delta, check_epsilon
from .registry import PluginError, first_doc_line
from .report import write_board
from .report.leaderboard import leaderboard_markdown, ranked_boards, read_results


class UsageError(Exception):
    """A bad argument found after parsing (reported like argparse's errors, exit code 2)."""


WRITE_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR, errno.EEXIST})
"""OSError numbers that mean "this path cannot be written": reported in one line, exit code 2."""

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""OSError numbers that mean "the disk is full": reported in one line, exit code 2."""

EXIT_LEDGER = 4
"""Exit code of ``audit`` when the agent's ledger is missing or shows a user above the claim (unless refuted)."""

EXIT_CONTRACT = 5
"""Exit code of ``audit`` when a check of the agent contract that is not about privacy fails (unless refuted or
:data:`EXIT_LEDGER`): the agent breaks the interface the runner and the audit rely on."""

EXIT_CODES = ("exit codes: 0 done; 1 audit refuted (a privacy check of the contract or the empirical bound); 2 bad "
              f"arguments, a full disk or a folder in use by another command; {EXIT_INCOMPLETE} incomplete (some "
              f"group has fewer seeds than planned: rerun to finish); {EXIT_LEDGER} audit: ledger missing or above the "
              f"claim; {EXIT_CONTRACT} audit: contract failure, not a privacy finding; 130 interrupted")


def _argument(parse: Callable[[str], Any], allowed: str, accept: Callable[[Any], bool] = lambda v: True,
              check: Callable[[Any], Any] = lambda v: v) -> Callable[[str], Any]:
    """An argparse ``type``: ``parse(text)`` when ``accept`` takes it, else "must be ALLOWED, got TEXT"; then
    ``check``, the library's own check, whose message names the range."""
    def convert(text: str) -> Any:
        try:
            value = parse(text)
        except ValueError:
            value = None
        if value is None or not accept(value):
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text!r}")
        try:
            return check(value)
        except (TypeError, ValueError) as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return convert


_positive_int = _argument(int, "an integer >= 1", lambda v: v >= 1)
_jobs = _argument(int, "-1 (all cores) or an integer >= 1", lambda v: v == -1 or v >= 1)
_epsilon, _delta = _argument(float, "a number", check=check_epsilon), _argument(float, "a number", check=check_delta)
_labels = _argument(lambda text: tuple(t.strip() for t in text.split(",")), "a comma list of labels", all)
_epsilons = _argument(lambda text: tuple(float(t) for t in text.split(",")), "a comma list of numbers",
                      check=lambda values: tuple(check_epsilon(v) for v in values))


def _add_bench_parser(sub) -> argparse.ArgumentParser:
    """The ``bench`` subcommand's parser, added to ``sub``."""
    b = sub.add_parser("bench", help="run a benchmark suite: results, figures and report.md", epilog=EXIT_CODES)
    b.add_argument("--suite", choices=sorted(SUITES), default="quick", help="the suite (default: quick)")
    b.add_argument("--out", type=Path, default=None, help="results folder (default: results/SUITE)")
    b.add_argument("--jobs", type=_jobs, default=-1, help="parallel workers (default -1: all cores)")
    b.add_argument("--backend", choices=BACKENDS, default="loky", help="joblib backend (dask/ray: the dist extra)")
    b.add_argument("--address", default=None, help="dask or ray scheduler address (default: a local cluster)")
    b.add_argument("--agent", default=None, help="a challenger: an agent name, entry point or import path "
                   "pkg.module:factory, run beside the baselines of every block its privacy model fits")
    b.add_argument("--private", choices=("jdp", "ldp"), default=None,
                   help="the challenger's privacy model (checked against its privacy spec)")
    b.add_argument("--reference", default=None, help="the baseline the challenger is compared with first")
    b.add_argument("--agent-kwargs", default=None, help='keyword arguments of the challenger as JSON, e.g. '
                   '\'{"radius": "practical"}\'')
    b.add_argument("--label", default=None,
                   help="the challenger's label in the tables (default: its registered name or its name attribute)")
    b.add_argument("--baselines", choices=("auto", "stored", "rerun"), default="auto",
                   help="the suite's cells (a challenger's baselines): taken from the stored reference results of "
                   "the suite where they match this version and these round streams, the others run (auto, stored: "
                   "the default, said in one line), or every one run again (rerun)")
    b.add_argument("--seeds", type=_positive_int, default=None, help="override the suite's number of seeds")
    b.add_argument("--horizon", type=_positive_int, default=None, help="override the suite's horizon T")
    b.add_argument("--delta", type=_delta, default=None,
                   help="override the suite's privacy delta of the private agents (the paper suite's is 1e-6)")
    b.add_argument("--agents", type=_labels, default=None,
                   help="run only these agents of the suite (comma list of labels, e.g. elim-jdp,linucb-practical)")
    b.add_argument("--envs", type=_labels, default=None,
                   help="run only these envs of the suite (comma list of labels, e.g. heavy-tailed-d10k10)")
    b.add_argument("--epsilons", type=_epsilons, default=None,
                   help="override the suite's epsilons of the private agents (comma list, e.g. 0.3,1)")
    b.add_argument("--env-kwargs", default=None,
                   help='keyword arguments added to every env of the run as JSON, e.g. \'{"reward": "linear-fit"}\' '
                   'for the real-data envs (their labels get the arguments as a suffix)')
    b.add_argument("--estimate", action="store_true",
                   help="only estimate the wall time on --jobs workers (one timed run per agent, env and horizon)")
    b.add_argument("--no-progress", action="store_true", help="no progress bar")
    return b


def _add_run_parser(sub) -> argparse.ArgumentParser:
    """The ``run`` subcommand's parser, added to ``sub``."""
    r = sub.add_parser("run", help="one agent on one env for several seeds", epilog=EXIT_CODES)
    r.add_argument("--env", required=True, help="a registered env id, e.g. PrivLinCB-v0 (see: privbandit list envs)")
    r.add_argument("--agent", required=True, help="an agent name (see: privbandit list agents), a label of a report "
                   "(e.g. linucb-practical) or an import path pkg.module:factory")
    r.add_argument("--agent-kwargs", default=None, help='keyword arguments of the agent as JSON, e.g. '
                   '\'{"radius": "practical"}\'')
    r.add_argument("--label", default=None, help="the agent's label in the tables (default: its name and kwargs)")
    r.add_argument("--epsilon", type=_epsilon, default=None,
                   help="privacy epsilon of a private agent (required for private agents)")
    r.add_argument("--delta", type=_delta, default=1e-5, help="privacy delta of a private agent (default 1e-5)")
    r.add_argument("--horizon", type=_positive_int, required=True, help="rounds T")
    r.add_argument("--seeds", type=_positive_int, default=1, help="number of seeds (default 1)")
    r.add_argument("--family", default=None, help="context family (see: privbandit list families)")
    r.add_argument("--dim", type=_positive_int, default=None, help="feature dimension d")
    r.add_argument("--arms", type=_positive_int, default=None, help="number of arms K")
    r.add_argument("--out", type=Path, default=None, help="results folder (cells, results.csv, figures, report.md)")
    r.add_argument("--jobs", type=_jobs, default=1, help="parallel workers (default 1)")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    return r


def _add_audit_parser(sub) -> argparse.ArgumentParser:
    """The ``audit`` subcommand's parser, added to ``sub``."""
    au = sub.add_parser("audit", help="privacy audit of a private agent: the contract's privacy checks, then an "
                        "empirical lower bound on its epsilon",
                        epilog=EXIT_CODES)
    au.add_argument("--agent", required=True, help="an agent name, entry point or import path pkg.module:factory")
    au.add_argument("--epsilon", type=_epsilon, required=True, help="the claimed epsilon the agent is built with")
    au.add_argument("--delta", type=_delta, default=1e-5, help="the claimed delta (default 1e-5)")
    au.add_argument("--agent-kwargs", default=None,
                    help='public hyperparameters of the agent as JSON, e.g. \'{"first_epoch": 1}\'')
    au.add_argument("--horizon", type=_positive_int, default=512,
                    help="the longest stream: target users whose first release comes later are left out (default 512)")
    au.add_argument("--draws", type=_positive_int, default=None, help="runs per stream of the test the pilot runs "
                    "choose, >= 100 (default 6000: enough to refute elim-jdp-ucb with a quarter of its noise at "
                    "epsilon 1; they stop early once the rest could refute the claim only with chance below 0.001); "
                    "the report says the largest epsilon these can detect")
    au.add_argument("--pilot-draws", type=_positive_int, default=None, help="runs per bisection step of the pilots, "
                    ">= 16 (default 64; the selection pilots run 4 times as many per stream; a deterministic agent "
                    "needs no more than 16)")
    au.add_argument("--quick", action="store_true", help="fewer runs (--draws 1500 --pilot-draws 32 unless given): "
                    "less power, which the report states (the largest epsilon it can refute)")
    au.add_argument("--jobs", type=_jobs, default=-1, help="parallel workers of the runs (default -1: all cores; "
                    "the results do not depend on it)")
    au.add_argument("--no-progress", action="store_true", help="no progress bar")
    au.add_argument("--seed", type=int, default=0, help="seed of the audit (default 0)")
    return au


def _add_results_parser(sub, name: str, help: str) -> argparse.ArgumentParser:
    """The parser of ``leaderboard`` or ``board``, with the results they read: folders (``DIR...``) and
    ``--stored SUITE``."""
    parser = sub.add_parser(name, help=help, epilog=EXIT_CODES)
    parser.add_argument("dirs", type=Path, nargs="*", metavar="DIR", help="folders with results.csv")
    parser.add_argument("--stored", choices=sorted(SUITES), action="append", default=[],
                        help="add the stored reference results of a suite (repeatable)")
    return parser


def _add_store_reference_parser(sub) -> argparse.ArgumentParser:
    """The ``store-reference`` subcommand's parser."""
    sr = sub.add_parser("store-reference", help="run a suite's baseline cells and pack them as its stored reference "
                        "results (privbandit/data/reference/SUITE.tar.xz and SUITE.json)", epilog=EXIT_CODES)
    sr.add_argument("--suite", choices=sorted(SUITES), required=True, help="the suite")
    sr.add_argument("--out", type=Path, default=None,
                    help="results folder of the cells (a rerun resumes); required unless --streams-only")
    sr.add_argument("--jobs", type=_jobs, default=-1, help="parallel workers (default -1: all cores)")
    sr.add_argument("--dest", type=Path, default=None,
                    help="folder of the archive and manifest (default: the package's data/reference)")
    sr.add_argument("--streams-only", action="store_true",
                    help="rewrite only the manifest's round-stream summaries from this install's envs (the stored "
                    "cells are kept byte for byte; nothing runs)")
    sr.add_argument("--no-progress", action="store_true", help="no progress bar")
    return sr


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``privbandit``."""
    p = argparse.ArgumentParser(prog="privbandit", description="Differentially private contextual bandits: "
                                "benchmarks, runs, plots.", epilog=EXIT_CODES)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True,
                           metavar="{bench,run,plot,audit,leaderboard,board,store-reference,list}")
    bench, run = _add_bench_parser(sub), _add_run_parser(sub)
    plot = sub.add_parser("plot", help="redraw the figures and report.md of a results folder", epilog=EXIT_CODES)
    plot.add_argument("dir", type=Path, help="a folder with results.csv (from bench or run --out)")
    audit = _add_audit_parser(sub)
    lb = _add_results_parser(sub, "leaderboard", "agents ranked by regret per env, privacy model and epsilon, "
                             "across results folders and stored reference results")
    lb.add_argument("--reference", default=None,
                    help="the agent each board is paired against (default: its best non-private agent)")
    bo = _add_results_parser(sub, "board", "the results board: one self-contained HTML page (regret curves, the "
                             "price of privacy, the leaderboard) of results folders and stored reference results")
    bo.add_argument("--out", type=Path, required=True, help="the HTML file to write")
    store = _add_store_reference_parser(sub)
    listing = sub.add_parser("list", help="list what is registered")
    listing.add_argument("what", choices=("envs", "agents", "oracles", "families"))
    for parser in (bench, run, plot, audit, lb, bo, store, listing):  # errors after parsing: "privbandit CMD: error"
        parser.set_defaults(subparser=parser)
    return p


def cmd_bench(args: argparse.Namespace) -> int:
    """``privbandit bench``: :func:`privbandit.bench.run_bench` with the command's options."""
    env_kwargs = _json_object("--env-kwargs", args.env_kwargs, '{"reward": "linear-fit"}')
    res = run_bench(args.suite, args.out, jobs=args.jobs, backend=args.backend, address=args.address,
                    agent=args.agent, private=args.private, reference=args.reference, agent_kwargs=_agent_kwargs(args),
                    label=args.label, baselines=args.baselines, seeds=args.seeds, horizon=args.horizon,
                    delta=args.delta, agents=args.agents, envs=args.envs, epsilons=args.epsilons, env_kwargs=env_kwargs,
                    estimate_only=args.estimate, progress=not args.no_progress, prog=args.subparser.prog,
                    command=_command(args), started=_watch(args))
    return res.exit_code


def _watch(args: argparse.Namespace) -> Callable[[Path | None, Sequence], None]:
    """What the workflow calls before its cells run: the folder and the cells, kept for :func:`_interrupted`."""
    return lambda out, cells: setattr(args, "sweep_state", (out, cells))


def _command(args: argparse.Namespace) -> str:
    """The command line, as the report records it."""
    return f"privbandit {' '.join(shlex.quote(a) for a in args.argv)}"


def cmd_run(args: argparse.Namespace) -> int:
    """``privbandit run``: :func:`privbandit.bench.workflow.run_agent` with the command's options."""
    res = run_agent(args.env, args.agent, args.horizon, epsilon=args.epsilon, delta=args.delta, seeds=args.seeds,
                    agent_kwargs=_agent_kwargs(args), label=args.label,
                    family=args.family, dim=args.dim, arms=args.arms, out=args.out, jobs=args.jobs,
                    progress=not args.no_progress, prog=args.subparser.prog, started=_watch(args),
                    command=_command(args))
    return res.exit_code


def cmd_plot(args: argparse.Namespace) -> int:
    """``privbandit plot DIR``: :func:`privbandit.bench.workflow.replot`."""
    return replot(args.dir, command=f"privbandit plot {shlex.quote(str(args.dir))}").exit_code


def cmd_list(args: argparse.Namespace) -> int:
    """``privbandit list envs|agents|oracles|families``."""
    listed = {"envs": lambda: sorted(ENV_IDS), "families": family_names,
              "agents": lambda: [f"{n:24s} {text}" for n, text in agent_descriptions().items()],
              "oracles": lambda: [f"{n:24s} {first_doc_line(oracle_class(n))}" for n in oracle_names()]}
    for line in listed[args.what]():
        print(line)
    return 0


def _agent_kwargs(args: argparse.Namespace) -> dict | None:
    """``--agent-kwargs`` as a dict (None if not given), else a :class:`UsageError`."""
    return _json_object("--agent-kwargs", args.agent_kwargs, '{"first_epoch": 1}')


def _json_object(option: str, text: str | None, example: str) -> dict | None:
    """The JSON object ``text`` of ``option`` as a dict (None if not given), else a :class:`UsageError`."""
    if text is None:
        return None
    try:
        kwargs = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{option} must be a JSON object, e.g. '{example}' ({exc})") from None
    if not isinstance(kwargs, dict):
        raise UsageError(f"{option} must be a JSON object, got {text!r}")
    return kwargs


def cmd_audit(args: argparse.Namespace) -> int:
    """``privbandit audit``: the contract stage, the empirical lower bound and the agent's own ledger; exit code 1 if
    refuted (by a privacy check of the contract or by the bound), else :data:`EXIT_LEDGER` if the ledger is missing
    or above the claim (whatever the bound says), else :data:`EXIT_CONTRACT` if a check not about privacy failed."""
    from .agents.audit import CONTRACT_NOT_PRIVACY, FULL, QUICK, audit_agent

    kwargs = _agent_kwargs(args)
    sizes = dict(QUICK if args.quick else FULL)
    sizes.update({k: v for k, v in (("n_draws", args.draws), ("pilot_draws", args.pilot_draws)) if v is not None})
    try:
        res = audit_agent(args.agent, args.epsilon, args.delta, agent_kwargs=kwargs, max_horizon=args.horizon,
                          seed=args.seed, progress=not args.no_progress, jobs=args.jobs, **sizes)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--agent {args.agent}: {str(exc).splitlines()[0]}") from None
    except ContractError as exc:  # the agent cannot be played through its interface: no claim to test
        print(f"privbandit audit: {CONTRACT_NOT_PRIVACY}: {str(exc).splitlines()[0]}", file=sys.stderr)
        return EXIT_CONTRACT
    print("\n".join(res.lines()))
    return 1 if res.refuted else EXIT_LEDGER if not res.ledger_ok else EXIT_CONTRACT if not res.contract_ok else 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    """``privbandit leaderboard DIR...``: the ranked boards of :mod:`privbandit.report.leaderboard`."""
    try:  # a folder without results.csv, a table that does not parse, no results to rank: one line
        tables = [read_results(d) for d in args.dirs]
        for suite in args.stored:
            tables.append(stored_results(suite))
            if tables[-1].empty:
                raise UsageError(f"--stored {suite}: no stored reference results for this suite in this install")
        if not tables:
            raise UsageError("give results folders (DIR...) or --stored SUITE")
        print(leaderboard_markdown(ranked_boards(tables, args.reference)))
    except ValueError as exc:
        raise UsageError(str(exc).splitlines()[0]) from None
    return 0


def cmd_board(args: argparse.Namespace) -> int:
    """``privbandit board DIR... --out FILE``: the results board of :mod:`privbandit.report.board`."""
    if not args.dirs and not args.stored:
        raise UsageError("give results folders (DIR...) or --stored SUITE")
    if args.out.is_dir() or not args.out.parent.is_dir():  # said before the work, not after
        raise UsageError(f"--out {args.out}: " + ("a folder: give a file name, e.g. board.html" if args.out.is_dir()
                                                  else f"no folder {args.out.parent} to write it in"))
    try:  # a folder without results.csv, a table that does not parse, a suite with no stored results: one line
        out = write_board(args.dirs, args.out, stored=[stored_source(s) for s in args.stored])
    except ValueError as exc:
        raise UsageError(str(exc).splitlines()[0]) from None
    print(f"board: {out} ({out.stat().st_size / 1e6:.1f} MB)")
    return 0


def cmd_store_reference(args: argparse.Namespace) -> int:
    """``privbandit store-reference``: :func:`privbandit.bench.workflow.store_suite`."""
    store_suite(args.suite, args.out, jobs=args.jobs, dest=args.dest, streams_only=args.streams_only,
                progress=not args.no_progress, prog=args.subparser.prog, started=_watch(args))
    return 0


COMMANDS = {"bench": cmd_bench, "run": cmd_run, "plot": cmd_plot, "audit": cmd_audit, "leaderboard": cmd_leaderboard,
            "board": cmd_board, "store-reference": cmd_store_reference, "list": cmd_list}


def _interrupted(args: argparse.Namespace | None) -> str:
    """The line printed on Ctrl-C: how many cells of the command are saved, and how to resume."""
    out, cells = getattr(args, "sweep_state", (None, None))
    if cells is None:
        return "interrupted"
    if out is None:
        return "interrupted: nothing saved (run keeps its cells only with --out DIR)"
    done = sum(cell_path(out / "cells", c).exists() for c in cells)
    return f"interrupted: {done} of {len(cells)} cells saved in {out}; run the same command again to resume"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privbandit`` console script; returns the exit code (2 bad arguments, 130 Ctrl-C)."""
    args = None
    try:
        parser = build_parser()
        argv = list(sys.argv[1:] if argv is None else argv)
        args = parser.parse_args(argv)  # exits with code 2 on a parse error
        args.argv = argv
        sub = args.subparser

        def error(message: str) -> None:  # one line, "privbandit run: error: ...", exit code 2
            sub.exit(2, f"{sub.prog}: error: {message}\n")

        try:
            return COMMANDS[args.command](args)
        except (UsageError, BenchError, PluginError, FolderLocked) as exc:  # a plugin that cannot be imported: why
            error(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        except ImportError as exc:  # an optional backend that is not installed
            if isinstance(exc, BackendUnavailable):
                error(str(exc))
            raise
        except OSError as exc:  # a path that cannot be written (read-only, not a folder, ...)
            if exc.errno in WRITE_ERRNOS and exc.filename:
                error(f"cannot write {exc.filename}: {exc.strerror}")
            if exc.errno in FULL_ERRNOS:
                where = f" {exc.filename}" if exc.filename else ""
                error(f"cannot write{where}: {exc.strerror or os.strerror(exc.errno)} (no partial file is kept; "
                      "free some space and run the same command again to finish)")
            raise
    except KeyboardInterrupt:
        print(_interrupted(args), file=sys.stderr)
        return 130
    return 1  # pragma: no cover - parser.error exits


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
