"""Keep TensorFlow's C++ start-up log lines out of notebook outputs."""

import contextlib
import os
import sys


@contextlib.contextmanager
def quiet_stderr():
    """Send file descriptor 2 to /dev/null for the duration of the block.

    TensorFlow's C++ runtime writes start-up messages (CUDA not found, CPU features)
    straight to file descriptor 2 before ``TF_CPP_MIN_LOG_LEVEL`` is read; Jupyter
    copies them into the stored outputs of whichever cell imported TensorFlow. Some
    messages logged later depend on the CPU (which oneDNN kernels it has), so a chapter
    wraps the calls that log them in ``with mt.quiet_stderr():`` to keep its stored
    outputs the same on every machine. Python exceptions still propagate.
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no real file descriptor 2 (some embedded shells)
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(devnull)
        os.close(saved)
