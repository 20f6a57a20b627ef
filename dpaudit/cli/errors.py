"""Exit statuses and the one line every failure of ``dpaudit`` is reported as (standard library
only: the top level imports it before anything else).

=====  ==========================================================================================
exit   meaning
=====  ==========================================================================================
0      done
1      a privacy check failed (an audit's verdict is ``violated`` or ``model-mismatch``, or a run
       recorded releases its declaration does not cover)
2      bad input: one line naming the option and its valid range (:class:`UsageError`, or a
       ``ValueError`` from a library call the options were handed to)
3      the environment failed, not the input: an output could not be written (full disk,
       read-only or vanished file system), memory ran out, the terminal's encoding refused a
       character
4      an internal error: a numerical failure (overflow, division by zero) or any other exception
       the command should have answered — a bug; the line names the exception (set
       ``DPAUDIT_TRACEBACK=1`` for the traceback)
130    interrupted (Ctrl-C)
=====  ==========================================================================================

Output that cannot be encoded is transliterated instead of failing (``±`` → ``+/-``, ``μ`` →
``mu``, ``≥`` → ``>=``, superscripts → ``^``):

>>> "4270.1 ± 21.5, μ ≥ 0.04, 10⁻⁶".encode("ascii", errors=ASCII_FALLBACK)
b'4270.1 +/- 21.5, mu >= 0.04, 10^-6'
>>> failure_line(ZeroDivisionError("float division by zero"))
('internal error (a bug: please report the command line): ZeroDivisionError: float division by zero', 4)
>>> failure_line(OSError(28, "No space left on device"))
('input/output failed: No space left on device', 3)
"""

from __future__ import annotations

import codecs
import os
import sys
import unicodedata

__all__ = [
    "EXIT_OK",
    "EXIT_PRIVACY",
    "EXIT_USAGE",
    "EXIT_ENVIRONMENT",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "ASCII_FALLBACK",
    "UsageError",
    "failure_line",
    "readable_output",
    "stdout_problem",
]

EXIT_OK = 0
EXIT_PRIVACY = 1
EXIT_USAGE = 2
EXIT_ENVIRONMENT = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad command-line input: printed as one line, exit status 2."""


ASCII_FALLBACK = "dpaudit-transliterate"
_WORDS = {
    "±": "+/-", "≥": ">=", "≤": "<=", "≈": "~", "≠": "!=", "→": "->", "←": "<-", "×": "x", "·": "*",
    "−": "-", "–": "-", "—": "--", "…": "...", "′": "'", "″": "''", "‘": "'", "’": "'", "“": '"',
    "”": '"', "√": "sqrt", "∞": "inf", "§": "section ", "°": " deg", "µ": "mu", "μ": "mu",
    "ε": "eps", "δ": "delta", "σ": "sigma", "Δ": "Delta", "α": "alpha", "β": "beta", "γ": "gamma",
    "η": "eta", "θ": "theta", "λ": "lambda", "ρ": "rho", "τ": "tau", "Σ": "Sum", "ℓ": "l",
}  # fmt: skip
_SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+"))


def _transliterate(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out, superscript = [], False
    for ch in exc.object[exc.start : exc.end]:
        if ch in _SUPERSCRIPTS:
            out.append(("" if superscript else "^") + _SUPERSCRIPTS[ch])
            superscript = True
            continue
        superscript = False
        plain = _WORDS.get(ch)
        if plain is None:
            plain = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode() or "?"
        out.append(plain)
    return "".join(out), exc.end


codecs.register_error(ASCII_FALLBACK, _transliterate)


def readable_output() -> None:
    """Make stdout and stderr transliterate what their encoding cannot represent (e.g.
    ``PYTHONIOENCODING=ascii``, a C locale) instead of failing after the work is done."""
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        reconfigure = getattr(stream, "reconfigure", None)
        if encoding is None or reconfigure is None:
            continue
        try:
            if codecs.lookup(encoding).name == "utf-8":
                continue
            reconfigure(errors=ASCII_FALLBACK)
        except (LookupError, ValueError, OSError):  # an unknown codec or a detached stream: leave it
            continue


def stdout_problem() -> str | None:
    """Why stdout cannot take the output, found before any work (None: no sign of a problem):
    redirected to ``/dev/full``, or to a file on a file system without a free block. A write can
    still fail later (the disk fills during the run): that is reported as exit status 3."""
    try:
        fd = sys.stdout.fileno()
        st = os.fstat(fd)
    except (AttributeError, OSError, ValueError):  # captured in-process, or no descriptor
        return None
    import stat

    if stat.S_ISCHR(st.st_mode):
        try:
            if os.stat("/dev/full").st_rdev == st.st_rdev:
                return "stdout is /dev/full: every write fails"
        except OSError:
            return None
        return None
    if stat.S_ISREG(st.st_mode):
        try:
            if os.fstatvfs(fd).f_bfree == 0:
                return "stdout's file system has no free block"
        except OSError:
            return None
    return None


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def failure_line(exc: BaseException) -> tuple[str, int]:
    """The one line (without the ``dpaudit: error:`` prefix) and the exit status of a failure.

    Bad input (``UsageError``, ``ValueError``) is exit status 2; an environment failure
    (``OSError``, ``MemoryError``, an encoding error) 3; anything else 4, an internal error.
    """
    if isinstance(exc, UnicodeError):  # before ValueError, of which it is a subclass
        why = f"the output cannot be encoded: {_short(str(exc))} (set PYTHONIOENCODING=utf-8)"
        return why, EXIT_ENVIRONMENT
    if isinstance(exc, (UsageError, ValueError)):
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return _short(text, 2000), EXIT_USAGE
    if isinstance(exc, MemoryError):
        return "out of memory: use smaller sizes (docs/cli-limits.md lists the limits)", EXIT_ENVIRONMENT
    if isinstance(exc, OSError):
        what = exc.strerror or str(exc) or type(exc).__name__
        where = f" ({_short(str(exc.filename), 120)})" if exc.filename else ""
        return f"input/output failed: {what}{where}", EXIT_ENVIRONMENT
    if os.environ.get("DPAUDIT_TRACEBACK") == "1":
        raise exc
    return (
        f"internal error (a bug: please report the command line): {type(exc).__name__}: {_short(str(exc))}",
        EXIT_INTERNAL,
    )
