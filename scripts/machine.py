"""What the training scripts record about the machine that ran them (no TensorFlow import here)."""

import platform


def cpu_name():
    """The CPU's model name as /proc/cpuinfo gives it (Linux), else what ``platform`` knows."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
