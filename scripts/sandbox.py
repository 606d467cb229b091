"""A Jupyter kernel for a student's code, shut in a throw-away sandbox (bubblewrap).

scripts/grade.py runs each submission in such a kernel. The kernel is started by
`bubblewrap <https://github.com/containers/bubblewrap>`_ (``bwrap``, the sandbox of Flatpak;
``apt-get install bubblewrap``) and sees:

- a filesystem made of the system's programs and libraries, Python, the virtual environment and
  the book's package, all **read-only**; a private, empty ``/tmp``; and one **writable** folder, the
  submission's throw-away directory, which is also its home and working directory. Nothing else
  exists for it: not the instructor's home, not the repository (its hidden test cases), not the
  other submissions;
- **no network** (a network namespace of its own, with no interface but loopback);
- its own **process tree** (a PID namespace): when the kernel is stopped, at the end or at the
  timeout, every process it started goes with it, even one that left its session;
- **uid 65534** ("nobody") in a user namespace of its own, with **no capability**, and a new
  session (it cannot reach the grader's terminal);
- resource limits: file size, open files, processes, CPU seconds.

The kernel talks to the grader through Unix sockets in the throw-away directory (the ``ipc``
transport of Jupyter), since it has no network.
"""

import os
import pathlib
import shutil
import subprocess
import sys

# Limits of the kernel process and of everything it starts (prlimit, util-linux).
LIMITS = {
    "fsize": 256 * 2**20,  # no file over 256 MiB
    "nofile": 4096,  # open files
    "nproc": 4096,  # processes and threads (TensorFlow's thread pools need hundreds)
    "core": 0,  # no core dumps
}


def bwrap():
    """The bubblewrap binary, or None."""
    return shutil.which("bwrap")


def _readonly_paths():
    """What the kernel needs to read: the system, Python, the environment and the package."""
    import mintransformer

    package_root = pathlib.Path(mintransformer.__file__).resolve().parents[1]
    paths = ["/usr", "/etc", sys.base_prefix, sys.prefix, str(package_root)]
    seen, unique = set(), []
    for path in map(os.path.realpath, paths):
        if path not in seen:
            seen.add(path)
            unique.append(path)
    return unique


def _tmpfs_size():
    """bubblewrap 0.8 and later bound the private /tmp (it lives in memory): 512 MiB."""
    help_text = subprocess.run([bwrap(), "--help"], capture_output=True, text=True).stdout
    return ["--size", str(512 * 2**20)] if "--size" in help_text else []


def exposed(path):
    """The read-only path of the sandbox under which ``path`` lies, or None."""
    path = os.path.realpath(path)
    for root in _readonly_paths():
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return root
    return None


def command(workdir, cpu_seconds):
    """The argv prefix that runs a program in the sandbox, with ``workdir`` writable."""
    if not bwrap():
        raise RuntimeError("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    workdir = str(pathlib.Path(workdir).resolve())
    args = [shutil.which("prlimit") or "prlimit",
            *(f"--{name}={value}" for name, value in LIMITS.items()),
            f"--cpu={int(cpu_seconds)}", "--",
            bwrap(), "--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            # The private /tmp first: what is mounted next may lie under /tmp (a checkout there).
            *_tmpfs_size(), "--tmpfs", "/tmp"]
    for path in _readonly_paths():
        args += ["--ro-bind", path, path]
    for link in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    args += ["--dev", "/dev", "--proc", "/proc",
             "--bind", workdir, workdir, "--chdir", workdir,
             "--setenv", "HOME", workdir, "--setenv", "TMPDIR", "/tmp",
             "--setenv", "MPLCONFIGDIR", workdir + "/.matplotlib",
             "--setenv", "KERAS_HOME", workdir + "/.keras",
             # The kernel's parent is the sandbox's init: its check of the grader's pid would fail.
             "--unsetenv", "JPY_PARENT_PID", "--"]
    return args


def works():
    """(True, "") if a program runs in the sandbox here; else (False, why)."""
    if not bwrap():
        return False, "bubblewrap (bwrap) is not installed"
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        try:
            run = subprocess.run(command(tmp, 10) + [sys.executable, "-c", "import os; print(os.getuid())"],
                                 capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as error:
            return False, f"bwrap failed: {error}"
    if run.returncode != 0 or run.stdout.strip() != "65534":
        return False, f"bwrap failed: {(run.stderr.strip().splitlines() or ['?'])[-1]}"
    return True, ""


def kernel_manager(workdir, cpu_seconds, sandboxed=True):
    """A jupyter_client (async) KernelManager, as nbclient needs, whose kernel runs in the sandbox (or not, if not ``sandboxed``)."""
    from jupyter_client import AsyncKernelManager
    from jupyter_client.kernelspec import KernelSpec

    workdir = pathlib.Path(workdir).resolve()
    kernel = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    manager = AsyncKernelManager(transport="ipc", connection_file=str(workdir / ".kernel.json"))
    manager.ip = str(workdir / ".kernel")  # the sockets: .kernel-1, .kernel-2, ...
    # The kernel's own chatter goes to a log in the throw-away folder, not to the grader's terminal.
    quiet = ["/bin/sh", "-c", 'exec "$@" > "$0" 2>&1', str(workdir / ".kernel.log")]
    argv = (command(workdir, cpu_seconds) if sandboxed else []) + quiet + kernel
    manager._kernel_spec = KernelSpec(argv=argv, display_name="sandbox", language="python")
    return manager
