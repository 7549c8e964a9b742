"""The long-running worker's client: run a solving command in the warm worker (``copter worker start``)
instead of paying the numerical stack's imports and numba's cache loads in this process.

Imported by the console script (``copter_cli.entry.main``) before typer or anything numerical, so it uses
the standard library only (``python -X importtime -m copter_cli step ...`` shows socket, json, zlib and
``solver.clock``, whose imports are stdlib). :func:`run_or_return` sends the command to the worker when one
is running for this install and exits with the command's exit code; in every other case it returns, and the
command runs in this process as it always did, silently (``COPTER_WORKER_DEBUG=1`` prints why on stderr).

Where the worker lives: its folder is ``$COPTER_WORKER_DIR``, else ``~/.cache/copter/worker`` (mode 0700,
owned by this user, else unused; :func:`worker_dir`); in it ``worker-<key>.sock`` (the Unix socket, mode 0600), ``.log`` (the worker's stdout and stderr) and ``.lock`` (held by the worker while it
lives). ``<key>`` hashes this install's identity (:func:`install_identity`: ``sys.executable``, copter's
version and the folder its packages are imported from), so another virtualenv or version never reaches this
worker. The worker also refuses a request whose identity, source files (:func:`source_fingerprint`: a file
edited or reinstalled since the worker started; the worker then exits, its code is stale) or import-time
environment (:data:`IMPORT_ENV`: numba, OpenMP/BLAS threads, ``PYTHON*``) differ from its own; the command
then runs here.

Protocol, one Unix stream connection per command, frames of a 4-byte big-endian length and UTF-8 JSON:
client ``{"op": "run", identity...}``; worker ``{"accepted": true}`` or ``{"refused": why}``; client
``{"op": "go", argv, env, cwd, umask, start, stdio}`` with its standard input, output, error and working
directory passed as file descriptors (``SCM_RIGHTS``), so the command writes to this process's own stdout and
stderr (a terminal stays a terminal, a closed pipe is a closed pipe) and ``copter step -`` reads its stdin;
then the worker's child ``{"started": pid}`` (a connection that ends before it: nothing ran, the command
runs here) and ``{"exit": code}`` (the worker repeats it when it reaps the child), or the worker
``{"killed": signal}`` when the child died by a signal. SIGINT, SIGTERM and SIGHUP received here are forwarded to the child, which
handles them as the in-process command does (SIGINT: exit 130, state unchanged): straight to it through a pidfd
once it started (so they reach it when the worker process is gone), else as ``{"signal": n}`` frames the worker
passes on. The child tells this process its exit code itself too, and ends its command as an interrupt when this
process dies (``copter_cli.worker_child``). A child killed by a signal
this process did not forward exits :data:`ENVIRONMENT` with a message; a checkpoint is written atomically, so
the state holds the previous round or the complete new one.
"""

from __future__ import annotations

import os
import signal
import sys

#: commands sent to a running worker: the ones whose imports (numpy, scipy, numba, pyarrow, HiGHS) and
#: kernel loads dominate a short run. ``show``, ``history``, ``rollback`` and ``--help`` start in a few
#: tenths of a second on their own; ``prepare`` and ``report`` are not sent (prepare compiles, with numba's
#: threads; report imports matplotlib).
ROUTED = frozenset({"init", "step", "solve", "compare", "diff", "convert", "export", "demo"})
#: environment variables read when the numerical stack is imported (their value then sticks): a request
#: whose values differ from the worker's runs in-process. Exact names and prefixes.
IMPORT_ENV = ("NUMBA_", "OMP_", "OPENBLAS_", "MKL_", "KMP_", "GOTO_NUM_THREADS", "PYTHONPATH", "PYTHONHASHSEED",
              "PYTHONUTF8", "PYTHONOPTIMIZE", "LD_PRELOAD", "LD_LIBRARY_PATH", "ARROW_", "TYPER_")
ENVIRONMENT = 7  #: exit code for a command whose worker process died by a signal (copter_cli.exit_codes)
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  #: signals passed on to the command's process
HANDSHAKE_SECONDS = 10.0  #: the worker must answer a request within this (else: in-process)
PACKAGES = ("copter_cli", "formats", "solver")


def idle_seconds(seconds: float) -> float:
    """An idle timeout as the worker applies and shows it: 0 and inf both mean "never exits idle", held as inf."""
    return float(seconds) if float(seconds) > 0 else float("inf")


def debug(reason: str) -> None:
    """Say why the command runs in-process or in the worker, on stderr, when ``COPTER_WORKER_DEBUG=1``."""
    if os.environ.get("COPTER_WORKER_DEBUG") == "1":
        os.write(2, f"copter worker: {reason}\n".encode())


# ------------------------------------------------------------------------------- identity and paths


def source_root() -> str:
    """The folder copter's packages are imported from (a checkout for an editable install)."""
    return os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def copter_version() -> str:
    """copter's installed version, from the ``copter-<version>.dist-info`` folder on ``sys.path`` (what
    ``importlib.metadata`` reads, without its 50 ms of imports); ``"unknown"`` when not installed."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith("copter-") and name.endswith(".dist-info"):
                return name[len("copter-"):-len(".dist-info")]
    return "unknown"


def install_identity() -> str:
    """This install's identity: ``sys.executable``, copter's version and :func:`source_root`."""
    return "\n".join((sys.executable, copter_version(), source_root()))


def install_key(identity: str | None = None) -> str:
    """16 hex digits of :func:`install_identity` (two 32-bit checksums): the ``<key>`` in the file names.
    A collision is harmless: the worker compares the whole identity."""
    import zlib

    raw = (identity or install_identity()).encode()
    return f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}"


def worker_dir() -> str:
    """``$COPTER_WORKER_DIR``, else ``~/.cache/copter/worker``. Not ``$XDG_RUNTIME_DIR``: a systemd user unit has it
    and a cron job has not, so the user unit of docs/usage.md "Long-running worker (cron)" (then the README's) started a
    worker the crontab's rounds never found (helper-215); a
    home on a file system without Unix sockets (NFS) sets ``COPTER_WORKER_DIR``."""
    if os.environ.get("COPTER_WORKER_DIR"):
        return os.path.abspath(os.environ["COPTER_WORKER_DIR"])
    return os.path.join(os.path.expanduser("~"), ".cache", "copter", "worker")


def paths(identity: str | None = None) -> dict[str, str]:
    """{"dir", "socket", "log", "lock"} of this install's worker."""
    folder = worker_dir()
    stem = os.path.join(folder, f"worker-{install_key(identity)}")
    return {"dir": folder, "socket": stem + ".sock", "log": stem + ".log", "lock": stem + ".lock"}


def folder_problem(folder: str) -> str | None:
    """Why ``folder`` must not be used (missing, not a directory, another owner, open to group or others),
    or None when it is this user's private folder."""
    import stat

    try:
        st = os.lstat(folder)
    except OSError as err:
        return f"{folder}: {err.strerror}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{folder} is not a directory"
    if st.st_uid != os.geteuid():
        return f"{folder} belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o077:
        return f"{folder} is open to other users (mode {stat.S_IMODE(st.st_mode):o}; copter needs 0700)"
    return None


def source_fingerprint(root: str | None = None) -> str:
    """Checksum of (path, modification time, size) of every ``.py`` file of copter's packages (1-2 ms): it
    changes when a source file is edited or the package reinstalled, which makes a running worker stale."""
    import zlib

    root = root or source_root()
    lines = []
    stack = [os.path.join(root, p) for p in PACKAGES]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            if e.name.endswith(".py"):
                st = e.stat()
                lines.append(f"{e.path}\0{st.st_mtime_ns}\0{st.st_size}")
            elif e.name != "__pycache__" and e.is_dir(follow_symlinks=False):
                stack.append(e.path)
    return f"{zlib.crc32(chr(10).join(sorted(lines)).encode()):08x}:{len(lines)}"


def import_env(environ=None) -> dict[str, str]:
    """The variables of :data:`IMPORT_ENV` set in ``environ`` (default ``os.environ``), ``PYTHONPATH``'s entries
    made absolute from this process's working directory: the worker runs in its own folder, where a relative entry
    (``PYTHONPATH=.`` in a checkout) named another folder, so it imported another copter (or none) and ``worker
    start`` waited its whole ``--timeout``; it is started with these values (``worker_control.start``), and a client
    elsewhere whose relative entry names another folder differs from it (in-process)."""
    environ = os.environ if environ is None else environ
    out = {k: v for k, v in sorted(environ.items()) if k.startswith(IMPORT_ENV)}
    if out.get("PYTHONPATH"):
        out["PYTHONPATH"] = os.pathsep.join(os.path.abspath(e) for e in out["PYTHONPATH"].split(os.pathsep))
    return out


def identity_request(op: str) -> dict:
    """The first frame of a connection: the operation and this install's identity (a run request: this process's
    nice value and resource limits too, ``copter_cli.worker_limits``)."""
    out = {"op": op, "identity": install_identity(), "sources": source_fingerprint(),
           "import_env": import_env(), "uid": os.geteuid()}
    if op == "run":
        from copter_cli.worker_limits import current

        out["limits"] = current()
    return out


# ------------------------------------------------------------------------------------------- frames


def send(sock, obj, fds=()) -> None:
    """Send one frame (and ``fds`` with it)."""
    import json

    body = json.dumps(obj).encode()
    data = len(body).to_bytes(4, "big") + body
    if fds:
        import socket

        sent = socket.send_fds(sock, [data], list(fds))
        if sent < len(data):
            sock.sendall(data[sent:])
    else:
        sock.sendall(data)


class Reader:
    """Frames from a stream socket (blocking reads), with the file descriptors that arrived alongside."""

    def __init__(self, sock):
        self.sock, self.buf, self.fds = sock, b"", []

    def feed(self, data: bytes, fds=()) -> None:
        self.buf += data
        self.fds.extend(fds)

    def frame(self):
        """The next complete frame from the buffer, or None."""
        if len(self.buf) < 4:
            return None
        n = int.from_bytes(self.buf[:4], "big")
        if len(self.buf) < 4 + n:
            return None
        import json

        body, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
        return json.loads(body)

    def read(self):
        """Block until a frame arrives; None at end of stream."""
        while True:
            msg = self.frame()
            if msg is not None:
                return msg
            data = self.sock.recv(65536)
            if not data:
                return None
            self.buf += data


def connect(socket_path: str, timeout: float | None = HANDSHAKE_SECONDS):
    """A connected Unix socket to ``socket_path`` (OSError when nothing listens: missing, stale, refused)."""
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(socket_path)
    except BaseException:
        sock.close()
        raise
    return sock


def call(op: str, timeout: float | None = HANDSHAKE_SECONDS) -> dict | None:
    """Send ``op`` (``"status"`` or ``"stop"``) to this install's worker; its answer, or None when no worker
    answers. For ``"stop"`` the answer comes once the worker has stopped accepting; the caller may then
    wait for :func:`ended` on the connection (see ``copter_cli.cmd_worker``)."""
    p = paths()
    if folder_problem(p["dir"]):
        return None
    try:
        sock = connect(p["socket"], timeout)
    except OSError:
        return None
    try:
        send(sock, identity_request(op))
        reply = Reader(sock).read()
    except (OSError, ValueError):
        sock.close()
        return None
    if op == "stop" and reply is not None:
        reply["_sock"] = sock  # kept open: it closes when the worker has exited
    else:
        sock.close()
    return reply


# ---------------------------------------------------------------------------------- running a command


def _command(argv: list[str]) -> str | None:
    """The subcommand of a ``copter`` argv (its first argument; None for options such as --help)."""
    return argv[1] if len(argv) > 1 and not argv[1].startswith("-") else None


def _stdio() -> list[dict] | None:
    """Encoding, error handler and buffering of sys.stdin/stdout/stderr (the worker's child builds the same
    streams over the passed descriptors); None when one of descriptors 0-2 is not open."""
    out = []
    for fd, stream in ((0, sys.stdin), (1, sys.stdout), (2, sys.stderr)):
        try:
            os.fstat(fd)
        except OSError:
            return None
        out.append({"encoding": getattr(stream, "encoding", None) or "utf-8",
                    "errors": getattr(stream, "errors", None) or "strict",
                    "line_buffering": bool(getattr(stream, "line_buffering", False)),
                    "write_through": bool(getattr(stream, "write_through", False))})
    return out


def _go_request(argv: list[str]) -> dict:
    from solver.clock import process_start

    mask = os.umask(0o077)
    os.umask(mask)
    main = sys.modules.get("__main__")
    return {"op": "go", "argv": list(argv), "env": dict(os.environ), "umask": mask, "start": process_start(),
            "stdio": _stdio(), "main_package": getattr(main, "__package__", None), "sys_path": list(sys.path),
            "pid": os.getpid()}


OFF = ("off", "0", "false", "no")  #: COPTER_WORKER values that keep every command in-process (any case)
ON = ("", "on", "1", "true", "yes")  #: COPTER_WORKER values (and unset) that use a running worker


def _turned_off() -> bool:
    """Whether ``COPTER_WORKER`` keeps this command in-process: one of :data:`OFF`, or a value that is neither
    that nor :data:`ON`, which is also said on stderr (``warning:`` naming it), since ``COPTER_WORKER=disabled``
    would otherwise reach the worker without a word."""
    raw = os.environ.get("COPTER_WORKER", "")
    value = raw.strip().lower()
    if value in OFF:
        return True
    if value in ON:
        return False
    os.write(2, (f"warning: COPTER_WORKER={raw!r} is neither off ({', '.join(OFF)}) nor on "
                 f"({', '.join(v for v in ON if v)}); this command runs in-process\n").encode())
    return True


def run_or_return(argv: list[str] | None = None) -> None:
    """Run ``argv`` (default ``sys.argv``) in this install's worker and exit with its exit code; return
    (having done nothing visible) when the command is not routed, ``COPTER_WORKER=off`` (:func:`_turned_off`), or no worker can
    take it: no folder or socket, a stale socket, a refusal (another identity, edited sources, another
    import-time environment), no answer within :data:`HANDSHAKE_SECONDS`."""
    argv = list(sys.argv if argv is None else argv)
    command = _command(argv)
    if command not in ROUTED:
        return debug(f"in-process ({command or 'this command'} is not handed to the worker)")
    if _turned_off():
        return debug(f"in-process (COPTER_WORKER={os.environ.get('COPTER_WORKER', '')!r})")
    p = paths()
    problem = folder_problem(p["dir"])
    if problem:
        return debug(f"in-process ({problem})")
    if _stdio() is None:
        return debug("in-process (a standard stream is closed)")
    try:
        sock = connect(p["socket"])
    except OSError as err:
        return debug(f"in-process (no worker at {p['socket']}: {err.strerror or err})")
    reader = Reader(sock)
    try:
        send(sock, identity_request("run"))
        reply = reader.read()
    except (OSError, ValueError) as err:
        sock.close()
        return debug(f"in-process (the worker did not answer: {err})")
    if not reply or not reply.get("accepted"):
        sock.close()
        return debug(f"in-process (the worker refused: {(reply or {}).get('refused', 'connection closed')})")
    _run_accepted(sock, reader, argv)


def _run_accepted(sock, reader: Reader, argv: list[str]) -> None:
    """The worker accepted: pass the command and the descriptors, forward signals, exit as the child did."""
    received: list[int] = []
    command: list[int] = []  # a pidfd of the command's process once it started: signals go to it directly

    def forward(signum, frame):
        received.append(signum)
        if command:  # not through the worker, which may be gone (killed while it serves this command)
            try:
                signal.pidfd_send_signal(command[0], signum)
                return
            except ProcessLookupError:  # it has ended: its exit code is on its way
                return
            except OSError:
                pass
        try:
            send(sock, {"signal": int(signum)})
        except OSError:
            pass

    # a signal this process ignores stays ignored, as in-process (``copter_cli.entry.install``: SIGINT is handled
    # always, SIGTERM and SIGHUP unless ignored; hunt 56: under nohup a SIGHUP ended a step the worker served, 129)
    forwarded = [s for s in FORWARDED if s == signal.SIGINT or signal.getsignal(s) != signal.SIG_IGN]
    # blocked until the "go" frame is out: a signal frame never splits it, and an interrupt before it
    # reaches this process's own handlers if the worker went away
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, forwarded)
    previous = {s: signal.signal(s, forward) for s in forwarded}
    try:
        cwd = os.open(".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            sock.settimeout(None)  # a round takes as long as it takes
            send(sock, _go_request(argv), fds=[0, 1, 2, cwd])
        finally:
            os.close(cwd)
    except OSError as err:  # the worker went away (or no cwd) before the command started: nothing ran
        return _back_in_process(sock, previous, mask, received, f"the worker went away: {err}")
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    begun = False
    while True:
        try:
            msg = reader.read()
        except (OSError, ValueError):
            msg = None
        if not begun and (msg is None or "refused" in msg):  # no child was started: nothing ran
            why = (msg or {}).get("refused", "the worker closed the connection")
            return _back_in_process(sock, previous, None, received, why)
        if msg is not None and "started" in msg:
            begun = True
            debug(f"running in the worker (process {msg['started']})")
            if not command and (fd := _pidfd(int(msg["started"]))) is not None:
                command.append(fd)
            continue
        if msg is None or "exit" in msg or "killed" in msg:
            break
    if command:
        _wait_ended(command[0])
    _finish(msg, received, argv)


ENDED_WAIT_SECONDS = 60.0  #: at most this long for the command's process to end once its exit code arrived


def _wait_ended(pidfd: int) -> None:
    """Wait until the command's process has ended (its pidfd turns readable), so this process exits after it, as an
    in-process command's process does: the command tells its exit code just before it ends, still holding the
    state's lock, and a script's next ``solver.rounds.step`` met StateBusyError in the 24-77 ms between
    (helper-229). Bounded by :data:`ENDED_WAIT_SECONDS`."""
    import select

    try:
        select.select([pidfd], [], [], ENDED_WAIT_SECONDS)
    except (OSError, ValueError):
        pass


def _pidfd(pid: int) -> int | None:
    """A pidfd of the worker's child running this command (Linux 5.3+), or None (then signals go through the
    worker). A pidfd names the process, not its number: a signal sent after the command ended fails (ESRCH) and
    never reaches a process that reused the pid. Opened as the ``started`` frame arrives, the command just begun."""
    if not hasattr(os, "pidfd_open") or not hasattr(signal, "pidfd_send_signal") or pid <= 0:
        return None
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None


def _back_in_process(sock, previous: dict, mask, received: list[int], why: str) -> None:
    """The worker started nothing: restore this process's signal handlers, deliver to them what arrived
    meanwhile (an interrupt ends this process as in-process), and return to run the command here."""
    for s, h in previous.items():
        signal.signal(s, h)
    sock.close()
    debug(f"in-process ({why})")
    if mask is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    for s in received:
        os.kill(os.getpid(), s)


def _limit_signal(sig: int) -> bool:
    """Whether a child's death by ``sig`` is this process's CPU or file size limit at work (the child runs under
    them, ``copter_cli.worker_limits``): SIGXCPU, SIGXFSZ, or SIGKILL under a finite CPU limit (its hard limit; the
    kernel's OOM killer would end the command in-process the same way)."""
    from copter_cli.worker_limits import current, limited_cpu

    return sig in (signal.SIGXCPU, signal.SIGXFSZ) or (sig == signal.SIGKILL and limited_cpu(current()))


def _finish(msg: dict | None, received: list[int], argv: list[str]) -> None:
    """Exit as the command did: its exit code, the signal this process forwarded and the child died of (or a
    resource limit's, :func:`_limit_signal`), or :data:`ENVIRONMENT` with a message (child killed by another
    signal, worker gone)."""
    for s in FORWARDED:
        signal.signal(s, signal.SIG_IGN)
    if msg is not None and "exit" in msg:
        os._exit(int(msg["exit"]))
    sig = int(msg["killed"]) if msg is not None else None
    if sig is not None and (sig in received or _limit_signal(sig)):  # as in-process: this process ends by it
        if sig != signal.SIGKILL:  # (SIGKILL has no handler to reset)
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    if sig is None:
        what = "the copter worker ended before the command finished"
    else:
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        what = f"the copter worker's process running this command was killed by signal {sig} ({name})"
    if argv[1:2] == ["init"]:  # no previous round: the state is either not made or made with its round 0
        state = ("an init stores its round 0 atomically, so the state either holds it or was not made (`copter "
                 "show` tells which; `copter init` can run again when it was not)")
    else:
        state = ("a round is stored atomically, so the state holds the previous round or the complete new one "
                 "(`copter show` tells which)")
    message = f"{what}; {state}; the worker's log has details"
    from copter_cli.entry import write_error

    write_error(ENVIRONMENT, "environment", message, "--json" in argv[1:])
    os._exit(ENVIRONMENT)
