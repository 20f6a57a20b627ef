"""How the ``dpaudit`` console command ends (:func:`dpaudit.cli.main.console`).

When nothing but freeing memory is left for the interpreter's shutdown, the command flushes its
output and ends the process at once; whenever something else is (an ``atexit`` callback, a live
thread), it exits normally. Either way the output and the exit status are those of
:func:`dpaudit.cli.main.main`.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TINY = ["run", "ts", "-T", "30", "-R", "1", "--audit-trials", "0", "--seed", "3"]


def _console(args: list[str], before: str = "") -> subprocess.CompletedProcess[str]:
    code = f"{before}\nfrom dpaudit.cli.main import console\nconsole({args!r})"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)


def _in_process(args: list[str]) -> str:
    from dpaudit.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(args) == 0
    return out.getvalue()


def _timing_free(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("time:")]


def test_a_tiny_run_registers_no_exit_work_of_its_own() -> None:
    # The interpreter may start with exit work that is not ours (a ``.pth`` file of the machine's,
    # importing certifi, registers an ``atexit`` callback): the run must add none and start no thread.
    code = ("import atexit, contextlib, io, threading\nfrom dpaudit.cli.main import main\n"
            "before = (atexit._ncallbacks(), threading.active_count())\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    main({TINY!r})\n"
            "print(before == (atexit._ncallbacks(), threading.active_count()))")
    check = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert check.stdout.strip() == "True", check.stderr


def test_a_tiny_run_takes_the_fast_exit_and_keeps_its_whole_output() -> None:
    clean = "import atexit\natexit._clear()  # whatever the interpreter registered before the run\n"
    code = (clean + "import contextlib, io\nfrom dpaudit.cli.main import _only_memory_left, main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    main({TINY!r})\n"
            "print(_only_memory_left())")
    check = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert check.stdout.strip() == "True", check.stderr  # so console() ends it with os._exit
    proc = _console(TINY, clean)
    assert proc.returncode == 0 and proc.stderr == ""
    assert _timing_free(proc.stdout) == _timing_free(_in_process(TINY))


def test_the_output_reaches_a_file_and_a_pipe_in_full(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    code = f"from dpaudit.cli.main import console\nconsole({TINY + ['--json']!r})"
    with target.open("w") as fh:
        proc = subprocess.run([sys.executable, "-c", code], stdout=fh, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT)
    assert proc.returncode == 0
    text = target.read_text()
    assert text.rstrip().endswith("}") and '"regret"' in text


def test_bad_input_still_exits_2_with_one_line() -> None:
    proc = _console(["run", "ts", "-T", "-5"])
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("dpaudit: error:")


def test_an_atexit_callback_or_a_live_thread_gets_the_normal_exit() -> None:
    registered = _console(TINY, "import atexit\natexit.register(lambda: print('callback ran'))")
    assert registered.returncode == 0 and registered.stdout.rstrip().endswith("callback ran")
    late = "threading.Thread(target=lambda: (time.sleep(0.3), print('thread ran'))).start()"
    threaded = _console(TINY, "import threading, time\n" + late)
    assert threaded.returncode == 0 and "thread ran" in threaded.stdout


def test_the_console_script_is_console() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert 'dpaudit = "dpaudit.cli.main:console"' in text
