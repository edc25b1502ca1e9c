"""A process that skips Python's teardown still runs its atexit handlers, flushes what it
printed and exits with the code it was given."""
import subprocess
import sys

from minifier.workers.pool import PROJECT_ROOT


def test_quick_exit_runs_atexit_flushes_and_keeps_the_code():
    code = ("import atexit, sys\nfrom compiler.quick_exit import quick_exit\n"
            "atexit.register(lambda: print('atexit ran'))\nsys.stdout.write('unflushed')\nquick_exit(3)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3
    assert proc.stdout == "unflushedatexit ran\n"


def test_quick_exit_of_none_is_success():
    code = "from compiler.quick_exit import quick_exit\nquick_exit(None)\n"
    proc = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
