"""The README and docs/ check themselves: every block that shows output is executed and compared.

Parsed with Sybil (its Markdown fence lexer and doctest parser) from ``README.md`` and
``docs/*.md``:

* a ``text``/``console`` block whose first line is ``$ dpaudit ...`` (continued by a trailing
  backslash) runs that command in-process and must print exactly the rest of the block;
* a ``python`` block followed by a ``text`` block runs the code and must print that text;
* a ``python`` block of ``>>>`` examples is a doctest (one namespace per document).

Comparison: trailing spaces and surrounding blank lines are ignored, every duration (``0.5 s``)
is masked, and a line ``...`` in the shown output stands for any number of lines. A comment
``<!-- docs-test: slow -->`` right before a block marks it ``slow`` (the quick subset
``-m "not slow"`` leaves it out); ``<!-- docs-test: skip -->`` leaves it out altogether.

``python tests/test_docs.py --update FILE.md ...`` rewrites the shown output of every console
and python-with-output block of those files with what it prints now (durations included), the
way stale numbers are fixed: by running the commands, not by editing them.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import re
import shlex
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sybil import Document, Example, Region
from sybil.evaluators.doctest import DocTestEvaluator
from sybil.parsers.abstract.doctest import DocTestStringParser
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
LEXER = RawFencedCodeBlockLexer(info_pattern=re.compile(r"(?P<language>[\w-]*)[^\n]*\n"))
DURATION = re.compile(r"\b\d+(?:\.\d+)? s\b")
DIRECTIVE = re.compile(r"<!-- docs-test: (slow|skip) -->\s*$")
OUTPUT_LANGUAGES = ("text", "console")


# ---------------------------------------------------------------------------------------
# running and comparing


def normalise(text: str) -> list[str]:
    """Lines without trailing spaces or surrounding blank lines, durations masked."""
    lines = [DURATION.sub("<duration> s", line.rstrip()) for line in text.strip("\n").splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def matches(shown: str, actual: str) -> bool:
    """Whether ``actual`` is what ``shown`` shows (:func:`normalise`; a line ``...`` matches any
    number of lines)."""
    pattern = "".join(r"(?:.*\n)*?" if x == "..." else re.escape(x) + r"\n" for x in normalise(shown))
    return re.fullmatch(pattern, "".join(line + "\n" for line in normalise(actual))) is not None


def _diff(shown: str, actual: str, what: str) -> str:
    diff = difflib.unified_diff(normalise(shown), normalise(actual), "shown", "printed", lineterm="")
    return f"{what} prints something else than the docs show:\n" + "\n".join(diff)


_PRINTED: dict[tuple[str, ...], str] = {}
"""What each command printed in this process: a command shown in two documents (the main job, in
the README and in docs/bandits-results.md) runs once; its output depends only on its arguments
(seeded), its timings are masked."""


def run_command(argv: list[str]) -> str:
    """stdout of ``dpaudit ARGV`` run in-process (errors go to stderr and fail the example); a
    command already run in this process is not run again (:data:`_PRINTED`)."""
    if tuple(argv) not in _PRINTED:
        _PRINTED[tuple(argv)] = _run_command(argv)
    return _PRINTED[tuple(argv)]


def _run_command(argv: list[str]) -> str:
    from dpaudit.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    reps = os.environ.pop("DPAUDIT_FLOOR_REPS", None)  # the docs show the default floors
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        if reps is not None:
            os.environ["DPAUDIT_FLOOR_REPS"] = reps
    if code not in (0, 1):
        raise AssertionError(f"dpaudit {shlex.join(argv)} exited {code}: {err.getvalue().strip()}")
    return out.getvalue()


def run_python(code: str, namespace: dict[str, Any]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<docs>", "exec"), namespace)  # noqa: S102 - the docs' own example
    return out.getvalue()


def command_and_output(source: str) -> tuple[list[str], str]:
    """(argv after ``dpaudit``, shown output) of a console block."""
    lines = source.splitlines()
    command = lines[0][2:]
    i = 1
    while command.endswith("\\"):
        command = command[:-1] + " " + lines[i].strip()
        i += 1
    argv = shlex.split(command)
    if argv[0] != "dpaudit":
        raise ValueError(f"a console block must run dpaudit, got {command!r}")
    return argv[1:], "\n".join(lines[i:])


def evaluate_console(example: Example) -> str | None:
    argv, shown = example.parsed
    actual = run_command(argv)
    return None if matches(shown, actual) else _diff(shown, actual, "dpaudit " + shlex.join(argv))


def evaluate_python_output(example: Example) -> str | None:
    code, shown = example.parsed
    actual = run_python(code, example.namespace)
    return None if matches(shown, actual) else _diff(shown, actual, "the python block")


# ---------------------------------------------------------------------------------------
# parsing (Sybil)


def _directive(document: Document, start: int) -> str | None:
    before = document.text[max(0, start - 200) : start].rstrip("\n")
    m = DIRECTIVE.search(before.splitlines()[-1] if before else "")
    return m.group(1) if m else None


def _blocks(document: Document) -> list[tuple[Region, str, str]]:
    return [(r, r.lexemes["language"], str(r.lexemes["source"])) for r in LEXER(document)]


def parse(document: Document) -> Iterator[Region]:
    """The regions of one document (module docstring), each with ``directive`` set."""
    doctests = DocTestStringParser(DocTestEvaluator())
    blocks = _blocks(document)
    skip_next = False
    for i, (region, language, source) in enumerate(blocks):
        if skip_next:
            skip_next = False
            continue
        directive = _directive(document, region.start)
        if language in OUTPUT_LANGUAGES and source.startswith("$ "):
            region.parsed, region.evaluator = command_and_output(source), evaluate_console
            yield _mark(region, directive)
        elif language == "python" and source.lstrip().startswith(">>>"):
            lexeme = region.lexemes["source"]
            for sub in doctests(lexeme, document.path):
                sub.adjust(region, lexeme)
                yield _mark(sub, directive)
        elif language == "python" and i + 1 < len(blocks):
            nxt, nxt_language, nxt_source = blocks[i + 1]
            between = document.text[region.end : nxt.start]
            if nxt_language in OUTPUT_LANGUAGES and not between.strip() and not nxt_source.startswith("$ "):
                both = Region(region.start, nxt.end, (source, nxt_source), evaluate_python_output)
                skip_next = True
                yield _mark(both, directive)


def _mark(region: Region, directive: str | None) -> Region:
    region.lexemes["directive"] = directive
    return region


_PYTHON: dict[str, list[Example]] = {}
"""The Python examples of each document in order (they share the document's namespace)."""
_RUN: set[tuple[str, int]] = set()
"""The examples this process has evaluated."""


def examples(paths: Iterable[Path] = DOCUMENTS) -> list[Any]:
    """One pytest parameter per example, ids ``FILE:LINE``, marked ``slow`` or skipped by their
    directive."""
    out = []
    for path in paths:
        document = Document.parse(str(path), parse)
        for example in document.examples():
            directive = example.region.lexemes.get("directive")
            if directive == "skip":
                continue
            if example.region.evaluator is not evaluate_console:
                _PYTHON.setdefault(str(path), []).append(example)
            marks = [pytest.mark.slow] if directive == "slow" else []
            out.append(pytest.param(example, id=f"{path.name}:{example.line}", marks=marks))
    return out


@pytest.mark.parametrize("example", examples())
def test_docs_example(example: Example) -> None:
    # A Python example sees the names its document's earlier examples defined. Under pytest-xdist
    # they may have run in another process: run here, first, those this process has not run.
    for earlier in _PYTHON.get(str(example.path), []):
        if earlier.line >= example.line:
            break
        if (str(earlier.path), earlier.line) not in _RUN:
            _RUN.add((str(earlier.path), earlier.line))
            earlier.evaluate()
    _RUN.add((str(example.path), example.line))
    example.evaluate()


def test_every_document_with_output_has_examples() -> None:
    """The parser sees the README's console blocks (a broken lexer must not pass silently)."""
    ids = [p.id for p in examples((ROOT / "README.md",))]
    assert sum(i.startswith("README.md:") for i in ids) >= 4, ids


def test_matching_rules() -> None:
    assert matches("a\n...\nd", "a\nb\nc\nd\n") and matches("x 1.5 s", "x 20.0 s")
    assert not matches("a\nd", "a\nb\nd") and not matches("4.886554", "4.886555")


# ---------------------------------------------------------------------------------------
# rewriting the shown output


def update(path: Path) -> int:
    """Rewrite the shown output of every console and python-with-output block of ``path`` with
    what it prints now; the number of blocks that changed."""
    document = Document.parse(str(path), parse)
    text, changed, offset = document.text, 0, 0
    for example in document.examples():
        region = example.region
        if region.evaluator is evaluate_console:
            argv, shown = region.parsed
            actual = run_command(argv).rstrip("\n")
        elif region.evaluator is evaluate_python_output:
            code, shown = region.parsed
            actual = run_python(code, example.namespace).rstrip("\n")
        else:
            continue
        if matches(shown, actual) and "..." not in normalise(shown):
            continue
        if "..." in normalise(shown):
            continue  # an elided block is kept as written
        start = text.index(shown.rstrip("\n"), region.start + offset)
        text = text[:start] + actual + text[start + len(shown.rstrip("\n")) :]
        offset += len(actual) - len(shown.rstrip("\n"))
        changed += 1
    if changed:
        path.write_text(text)
    return changed


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "--update":
        raise SystemExit("usage: python tests/test_docs.py --update FILE.md ...")
    for name in sys.argv[2:]:
        print(f"{name}: {update(Path(name).resolve())} block(s) rewritten")
