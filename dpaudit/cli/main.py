"""The ``dpaudit`` command: ``epsilon``, ``calibrate``, ``audit``, ``list``, ``run``, ``tune``, ``compare``.

Every failure prints one line ``dpaudit: error: ...`` on stderr, without a traceback, and exits
with a documented status (:mod:`dpaudit.cli.errors`): 2 for bad input, 3 when the environment
failed (a full disk, memory, an encoding), 4 for an internal error.

Start-up is kept light: this module imports only the standard library and
:mod:`dpaudit.cli.common`. The subcommand modules (and, through their handlers, numpy, scipy,
``mechanisms`` and ``bandits``) are imported only for the command on the command line;
``dpaudit --help``, ``dpaudit --version`` and a bad command list the other commands from
:data:`COMMANDS` without importing them.

Example (the return value is the exit status; errors go to stderr; ``--help`` and
``--version`` exit through ``SystemExit`` as argparse does):
    >>> main(["nosuch"])
    2
    >>> try:
    ...     main(["--version"])
    ... except SystemExit as done:
    ...     print("exit status", done.code)  # doctest: +ELLIPSIS
    dpaudit ...
    exit status 0
"""

from __future__ import annotations

import argparse
import errno
import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from dpaudit.cli.common import Parser
from dpaudit.cli.errors import (
    EXIT_ENVIRONMENT,
    EXIT_INTERRUPTED,
    failure_line,
    readable_output,
    stdout_problem,
)

COMMANDS: dict[str, tuple[str, str]] = {
    "epsilon": ("dpaudit.cli.epsilon", "certified privacy of a configuration under every method"),
    "calibrate": ("dpaudit.cli.calibrate", "the noise, sampling rate or steps that meet a target epsilon"),
    "audit": ("dpaudit.cli.audit", "empirical lower bounds on privacy vs the certified claim"),
    "list": ("dpaudit.cli.run", "every algorithm 'dpaudit run' knows, with its paper and privacy model"),
    "run": ("dpaudit.cli.run", "simulate, certify, check and audit an algorithm from 'dpaudit list'"),
    "tune": ("dpaudit.cli.run", "choose the parameters of a private algorithm at a fixed budget"),
    "compare": ("dpaudit.cli.compare", "several algorithms on one instance and seed, privacy beside regret"),
}
"""command → (module whose ``register(subparsers)`` adds it, one-line help for ``--help``)."""


def _version() -> str:
    from dpaudit import __version__

    return f"dpaudit {__version__}"


def _chosen(argv: Sequence[str]) -> str | None:
    """The command named on the command line: the first token that is not an option (the
    top-level options take no values)."""
    return next((a for a in argv if not a.startswith("-")), None)


def _installed(module_name: str) -> bool:
    """Whether the subcommand module exists (found without importing it)."""
    return importlib.util.find_spec(module_name) is not None


def _register(sub: argparse._SubParsersAction, module_name: str) -> bool:
    """``module.register(sub)``; False if the module is not installed (skipped)."""
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return False
        raise
    module.register(sub)
    return True


def build_parser(argv: Sequence[str] | None = None) -> Parser:
    """The parser for ``argv``: the full parser of the command named in ``argv``, one-line
    stubs (name and help only) for the others. ``argv=None`` registers every command fully.

    >>> p = build_parser(["--help"])
    >>> sorted(p._subparsers._group_actions[0].choices)
    ['audit', 'calibrate', 'compare', 'epsilon', 'list', 'run', 'tune']
    """
    parser = Parser(prog="dpaudit", description="Certified privacy accounting and empirical auditing.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    chosen = None if argv is None else _chosen(argv)
    if argv is None:
        wanted = {m for m, _ in COMMANDS.values()}
    else:
        wanted = {COMMANDS[chosen][0]} if chosen is not None and chosen in COMMANDS else {""}
    installed = {m: _register(sub, m) for m in dict.fromkeys(m for m, _ in COMMANDS.values()) if m in wanted}
    for name, (module_name, help_text) in COMMANDS.items():
        if name not in sub.choices and installed.get(module_name, _installed(module_name)):
            sub.add_parser(name, help=help_text)
    return parser


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush of what could not be written
    does not print a second error."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor (e.g. captured in-process): nothing is flushed later
        pass


def _main(args_list: list[str]) -> int:
    """Parse and run; stdout is flushed here so that a full disk or a closed reader is reported
    as a failure, not lost at interpreter exit (also after ``--help`` and ``--version``)."""
    try:
        parser = build_parser(args_list)
        args = parser.parse_args(args_list)
        problem = stdout_problem()  # before the work: nothing computed is lost to a bad redirection
        if problem is not None:
            raise OSError(errno.ENOSPC, problem)
        code = int(args.handler(args) or 0)
    except SystemExit:  # --help, --version: argparse printed and exits
        sys.stdout.flush()
        raise
    sys.stdout.flush()
    return code


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    readable_output()
    try:
        return _main(args_list)
    except KeyboardInterrupt:
        print("dpaudit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly, as Unix tools do
        _silence_stdout()
        return 0
    except Exception as exc:  # one line for every failure, with its exit status (dpaudit.cli.errors)
        line, code = failure_line(exc)
        if code == EXIT_ENVIRONMENT and argv is None:  # the console command (not a caller's process)
            _silence_stdout()
        print(f"dpaudit: error: {line}", file=sys.stderr)
        return code


def console(argv: Sequence[str] | None = None) -> NoReturn:
    """The ``dpaudit`` console command: :func:`main`, then the process ends with its status.

    When the interpreter's shutdown would only free memory — no ``atexit`` callback registered
    (numba, Dask and logging register some), no other thread alive, no tracer or profiler — the
    output is flushed and the process ends at once (``os._exit``): unwinding a few hundred
    modules costs about 20 ms, a tenth of a small run. Otherwise it exits normally.
    """
    code = main(argv)
    if _only_memory_left():
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):  # the normal exit reports it (dpaudit.cli.errors)
            sys.exit(code)
        os._exit(code)
    sys.exit(code)


def _only_memory_left() -> bool:
    """Whether nothing but freeing memory is left for the interpreter's shutdown."""
    import atexit
    import threading

    count = getattr(atexit, "_ncallbacks", None)  # CPython's; elsewhere always the normal exit
    return (
        count is not None
        and count() == 0
        and threading.active_count() == 1
        and sys.gettrace() is None
        and sys.getprofile() is None
    )


if __name__ == "__main__":
    console()
