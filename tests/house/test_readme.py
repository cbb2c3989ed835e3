"""The README stays true: every ```python block of README.md runs, as written, in a fresh interpreter.

Each block is self-contained (it defines every name it uses) and small enough to run in a few seconds,
so a README edit that breaks a block fails this test. Fences must be tagged ``python`` (run here),
``bash`` (commands, checked by the CLI and script tests) or ``text`` (diagrams, usage, output); any
other tag, or none, fails, so no Python block can hide from the test under another tag.

The README stays short (at most :data:`MAX_LINES` lines), and its command-line summary and the CLI guide's
(``docs/guide/cli.md``) agree with the parser: every option they name exists, their choice lists are the
parser's, the guide names every option and every exit code.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ALLOWED_TAGS, fenced_blocks, run_block

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_LINES = 200
"""The README's length limit (the docs issue's): detail belongs in docs/."""
CLI_GUIDE = ROOT / "docs" / "guide" / "cli.md"


BLOCKS = fenced_blocks(README.read_text(encoding="utf-8"))
PYTHON = [(line, body) for line, tag, body in BLOCKS if tag == "python"]


def test_every_fence_has_a_known_tag():
    bad = [(line, tag) for line, tag, _ in BLOCKS if tag not in ALLOWED_TAGS]
    assert not bad, f"README.md fences must be tagged one of {ALLOWED_TAGS}; found (line, tag) {bad}"
    assert len(PYTHON) >= 3, ("the README's Python examples (an RL loop, benchmarking an agent, the cost of privacy) "
                              "went missing")


@pytest.mark.slow
@pytest.mark.parametrize("line, code", PYTHON, ids=[f"line{line}" for line, _ in PYTHON])
def test_python_block_runs(line, code, tmp_path):
    proc = run_block(code, tmp_path)
    assert proc.returncode == 0, f"README.md block at line {line} failed:\n{proc.stderr[-3000:]}"


@pytest.mark.slow
def test_the_checks_catch_a_broken_block_and_a_hidden_one(tmp_path):
    """The harness itself: an undefined name fails the run, an untagged or odd fence is reported."""
    text = "intro\n```python\nprint(X_new)\n```\n```\nx = 1\n```\n```py\ny = 2\n```\n"
    blocks = fenced_blocks(text)
    assert [(line, tag) for line, tag, _ in blocks] == [(2, "python"), (5, ""), (8, "py")]
    proc = run_block(blocks[0][2], tmp_path)
    assert proc.returncode != 0 and "NameError" in proc.stderr
    assert run_block("import privbandit\n", tmp_path).returncode == 0
    with pytest.raises(ValueError, match="never closed"):
        fenced_blocks("```python\nx = 1\n")


def test_the_readme_stays_within_its_length():
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"README.md has {n} lines, more than {MAX_LINES}: move detail to docs/"


def usage(text: str) -> dict[str, str]:
    """Subcommand -> its lines of the ``text`` block of ``privbandit SUBCOMMAND ...`` usage lines in a page."""
    block = next(body for _, tag, body in fenced_blocks(text) if tag == "text" and body.startswith("privbandit "))
    out: dict[str, str] = {}
    command = None
    for line in block.splitlines():
        if line.startswith("privbandit "):
            command = line.split()[1]
            out[command] = line
        elif command is not None:
            out[command] += " " + line.strip()
    return out


def documented_choices(line: str) -> dict[str, tuple[str, ...]]:
    """``--option a|b|c`` -> (a, b, c) of a usage line."""
    return {m[0]: tuple(m[1].split("|")) for m in re.findall(r"(--[a-z-]+) ([a-z]+(?:\|[a-z]+)+)", line)}


def _subparsers() -> dict:
    import argparse

    from privbandit.cli import build_parser

    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("page", [README, CLI_GUIDE], ids=["README.md", "docs/guide/cli.md"])
def test_the_command_line_summaries_agree_with_the_parser(page):
    from privbandit.bench.stored import stored_paths
    from privbandit.bench.suites import SUITES

    stored = tuple(sorted(s for s in SUITES if stored_paths(s)[0].is_file()))
    parsers = _subparsers()
    lines = usage(page.read_text(encoding="utf-8"))
    assert set(lines) == set(parsers), f"{page.name} summarizes {sorted(lines)}, the CLI has {sorted(parsers)}"
    for command, line in lines.items():
        options = {o: a for a in parsers[command]._actions for o in a.option_strings}
        named = set(re.findall(r"--[a-z-]+", line))
        assert named <= set(options), (command, sorted(named - set(options)))
        if page == CLI_GUIDE:  # the guide is the reference: every option
            assert set(options) - {"-h", "--help"} <= named, (command, sorted(set(options) - named - {"-h", "--help"}))
        for option, choices in documented_choices(line).items():
            truth = stored if option == "--stored" else tuple(options[option].choices)  # suites that ship results
            assert sorted(choices) == sorted(truth), (page.name, command, option, choices, truth)


def test_the_cli_guide_lists_every_exit_code():
    from privbandit.cli import EXIT_CODES

    codes = re.findall(r"(?:exit codes: |; )(\d+) ", EXIT_CODES)
    after = CLI_GUIDE.read_text(encoding="utf-8").split("Exit codes", 1)[1].split("\n\n- ", 1)[0]  # the first table
    table = re.findall(r"^\| `(\d+)` \|", after, flags=re.MULTILINE)
    assert {"0", "1", "2", "3", "4", "5", "130"} <= set(codes)
    assert codes == table, f"docs/guide/cli.md lists the exit codes {table}; the CLI has {codes}"
