"""The ``dpaudit`` command: ``epsilon``, ``audit``, ``run``, ``tune``.

Every failure caused by the input prints one line ``dpaudit: error: ...`` and exits with
status 2, without a traceback.
"""

from __future__ import annotations

import importlib
import sys

from dpaudit.cli.common import Parser, UsageError

# subcommand modules, each with register(subparsers); a module that is not installed yet is skipped
SUBCOMMANDS = ["dpaudit.cli.epsilon", "dpaudit.cli.audit", "dpaudit.cli.run"]


def build_parser() -> Parser:
    parser = Parser(prog="dpaudit", description="Certified privacy accounting and empirical auditing.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return int(args.handler(args) or 0)
    except (UsageError, ValueError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"dpaudit: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dpaudit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
