"""The README stays true: every ```python block of README.md runs, as written, in a fresh interpreter.

Each block is self-contained (it defines every name it uses) and small enough to run in a few seconds,
so a README edit that breaks a block fails this test. Fences must be tagged ``python`` (run here),
``bash`` (commands, checked by the CLI and script tests) or ``text`` (diagrams, usage, output); any
other tag, or none, fails, so no Python block can hide from the test under another tag.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
ALLOWED_TAGS = ("python", "bash", "text")
BLOCK_TIMEOUT = 60.0


def fenced_blocks(text: str) -> list[tuple[int, str, str]]:
    """(line number of the opening fence, tag, body) of every ``` fenced block of a Markdown text.

    Raises
    ------
    ValueError
        If a fence is left open at the end of the text.
    """
    blocks: list[tuple[int, str, str]] = []
    start, tag, body = 0, "", []
    inside = False
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped.startswith("```"):
            if inside:
                body.append(line)
            continue
        if inside:
            if stripped != "```":
                raise ValueError(f"line {number}: a fence opens inside the block opened on line {start}")
            blocks.append((start, tag, "\n".join(body) + "\n"))
            inside = False
        else:
            start, tag, body, inside = number, stripped[3:].strip(), [], True
    if inside:
        raise ValueError(f"the block opened on line {start} is never closed")
    return blocks


def run_block(code: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter in ``cwd``, importing this checkout's ``privbandit``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env["MPLBACKEND"] = "Agg"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False, timeout=BLOCK_TIMEOUT)


BLOCKS = fenced_blocks(README.read_text(encoding="utf-8"))
PYTHON = [(line, body) for line, tag, body in BLOCKS if tag == "python"]


def test_every_fence_has_a_known_tag():
    bad = [(line, tag) for line, tag, _ in BLOCKS if tag not in ALLOWED_TAGS]
    assert not bad, f"README.md fences must be tagged one of {ALLOWED_TAGS}; found (line, tag) {bad}"
    assert len(PYTHON) >= 3, ("the README's Python examples (an RL loop, benchmarking an agent, the cost of privacy) "
                              "went missing")


@pytest.mark.parametrize("line, code", PYTHON, ids=[f"line{line}" for line, _ in PYTHON])
def test_python_block_runs(line, code, tmp_path):
    proc = run_block(code, tmp_path)
    assert proc.returncode == 0, f"README.md block at line {line} failed:\n{proc.stderr[-3000:]}"


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
