"""The long-running worker (``copter worker start``): one process per user and install that imports the
numerical stack and loads the cached numba kernels once, then runs each command a client sends it
(``copter_cli.worker_client``) in a forked child (``copter_cli.worker_child``), so a cron job's
``copter step`` pays neither the imports (~0.7 s) nor the cache loads (~1.1 s) again.

Lifecycle: started detached by ``copter worker start`` (new session; stdin /dev/null; stdout and stderr to
``worker-<key>.log``), it takes the install's ``.lock`` (``flock``, held while it lives: a second worker of
the same install exits at once, and a crashed one never blocks the next), imports, loads the kernels
(:func:`preload`), and only then binds its socket (mode 0600 in a 0700 folder), so a client either finds a
ready worker or none. It ends on ``copter worker stop``, SIGTERM/SIGINT/SIGHUP, after ``--idle-timeout``
seconds without a command (0: never), or when a client's sources differ from the ones it loaded (edited or
reinstalled: its code is stale); it stops accepting at once, lets running commands finish, removes its
socket and exits.

Fork safety: the parent never runs a kernel, HiGHS or a thread pool; it is single-threaded in Python, and
the native threads imports leave (OpenBLAS, jemalloc) handle fork themselves. Parallel (``parallel=True``)
kernels are not loaded here: loading one starts numba's threading layer, and GNU OpenMP (the layer numba
picks without TBB) terminates a forked child on its first parallel loop; each child loads it on first use.
Before every fork the worker checks that numba's threading layer is still not running and that no other
Python thread exists; otherwise it refuses (the client runs in-process) and exits.
"""

from __future__ import annotations

import argparse
import errno
import os
import selectors
import signal
import socket
import sys
import threading
import time

from copter_cli import worker_client as wc
from copter_cli import worker_peer, worker_phase
from solver.clock import os_wait

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
ORPHAN_GRACE = 1.0  #: seconds a command's process may keep exiting after its client went away; then SIGTERM
ORPHAN_TERM_GRACE = 10.0  #: seconds it may take to end on that SIGTERM (its undo actions); then SIGKILL
BLOCKED_AT_FORK = (*wc.FORWARDED, signal.SIGCHLD)  #: held pending until the child has its own handlers


def log(text: str) -> None:
    """One timestamped line on stdout (the worker's log file)."""
    sys.stdout.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} [{os.getpid()}] {text}\n")
    sys.stdout.flush()


def preload() -> dict:
    """Import what the routed commands import (typer, rich, numpy, scipy, numba, pyarrow, HiGHS, every module
    of ``solver`` and ``formats``, the CLI's app: 0.1 s a command less) and load every cached non-parallel
    kernel (``solver.prepare.load_cached``). The child builds the CLI's console again for its client.

    Returns:
        {"seconds": import seconds, "modules": modules imported, "failed": {module: error}, "kernels":
        load_cached's result}.
    """
    import importlib
    import pkgutil

    from formats import no_pandas

    no_pandas.keep_pandas_out()
    t0 = time.perf_counter()
    for name in ("typer", "rich.console", "rich.table", "rich.text", "rich.markup", "rich.box",
                 "numpy", "scipy.sparse", "pyarrow", "pyarrow.parquet", "pyarrow.compute", "highspy"):
        importlib.import_module(name)
    failed = {}
    count = 0
    for pkg_name in ("solver", "formats"):
        pkg = importlib.import_module(pkg_name)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{pkg_name}."):
            try:
                importlib.import_module(info.name)
                count += 1
            except Exception as err:  # noqa: BLE001 - an optional extra's module: the child imports it if used
                failed[info.name] = f"{type(err).__name__}: {err}"
    importlib.import_module("copter_cli.app").build()  # every command module (a command imports only its own)
    seconds = time.perf_counter() - t0
    from solver.prepare import load_cached

    return {"seconds": seconds, "modules": count, "failed": failed, "kernels": load_cached()}


def fork_hazard() -> str | None:
    """Why forking now would be unsafe (numba's threading layer running, another Python thread), or None."""
    parallel = sys.modules.get("numba.np.ufunc.parallel")
    if parallel is not None and getattr(parallel, "_is_initialized", False):
        return "numba's threading layer was started in the worker"
    if threading.active_count() > 1:
        return f"the worker runs {threading.active_count()} Python threads"
    return None


class Connection:
    """One client connection: ``new`` (waiting for its first frame), ``accepted`` (waiting for "go"),
    ``running`` (its child's pid), ``stopping`` (a ``stop`` caller waiting for the worker to end)."""

    def __init__(self, sock: socket.socket):
        self.sock, self.reader, self.state, self.pid = sock, wc.Reader(sock), "new", None
        self.limits = None  #: the run request's nice value and limits (``copter_cli.worker_limits``), for the child
        self.peer = -1  #: the connecting process's pid (``SO_PEERCRED``; -1 where the platform has none)

    def reply(self, obj) -> bool:
        try:
            wc.send(self.sock, obj)
            return True
        except OSError:
            return False


class Worker:
    """The accept loop (one thread, a selector over the listening socket, the connections and a signal
    wake-up pipe). See the module docstring."""

    def __init__(self, idle_timeout: float, info: dict, lock_fd: int):
        # 0 and inf both mean "never exits idle": one value, so status shows one ("inf"), not 0.0 for one of them
        self.idle_timeout = wc.idle_seconds(idle_timeout)
        self.info, self.lock_fd = info, lock_fd
        self.paths = wc.paths()
        self.identity = wc.install_identity()
        self.sources = wc.source_fingerprint()
        self.import_env = wc.import_env()
        self.started_at = time.time()
        self.last_activity = time.monotonic()
        self.served = 0
        self.children: dict[int, Connection] = {}
        self.orphans: dict[int, float] = {}  # running children whose client went away: pid -> next signal's time
        self.terminated: set[int] = set()  # orphans sent SIGTERM (the next signal is SIGKILL)
        self.conns: dict[int, Connection] = {}
        self.stopping: str | None = None
        self.sel = selectors.DefaultSelector()
        self.listener: socket.socket | None = None
        self.socket_ino: int | None = None
        self.wake_r, self.wake_w = os.pipe()

    # ---------------------------------------------------------------------------------------- set-up

    def bind(self) -> None:
        """Listen on the socket path (a leftover file there is stale: this process holds the lock)."""
        path = self.paths["socket"]
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        mask = os.umask(0o177)
        try:
            sock.bind(path)
        finally:
            os.umask(mask)
        os.chmod(path, 0o600)
        sock.listen(64)
        sock.setblocking(False)
        self.listener, self.socket_ino = sock, os.stat(path).st_ino
        self.sel.register(sock, selectors.EVENT_READ, "listen")

    def install_signals(self) -> None:
        for fd in (self.wake_r, self.wake_w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda s, f: None)  # a handler, so the wake-up pipe hears it
        for s in STOP_SIGNALS:
            signal.signal(s, self._on_stop_signal)
        self.sel.register(self.wake_r, selectors.EVENT_READ, "wake")

    def _on_stop_signal(self, signum, frame) -> None:
        self.begin_stop(f"signal {signal.Signals(signum).name}")

    # ------------------------------------------------------------------------------------------ loop

    def serve(self) -> None:
        """Run until stopped and no command is running."""
        while not (self.stopping and not self.children):
            timeout = None
            if 0 < self.idle_timeout < float("inf") and not self.children and not self.stopping:  # inf: never
                timeout = max(0.0, self.last_activity + self.idle_timeout - time.monotonic())
            if self.orphans:
                timeout = max(0.0, min(self.orphans.values()) - time.monotonic())
            for key, _ in self.sel.select(os_wait(timeout)):  # a longer idle timeout: the loop checks it again
                if key.data == "listen":
                    self.accept()
                elif key.data == "wake":
                    self.drain_wakeup()
                else:
                    self.readable(key.data)
            self.reap()
            self.kill_orphans()
            if (self.idle_timeout > 0 and not self.children and not self.stopping
                    and time.monotonic() - self.last_activity >= self.idle_timeout):
                self.begin_stop(f"idle for {self.idle_timeout:g} s")

    def accept(self) -> None:
        while self.listener is not None:  # a stop earlier in the same select() pass closed it (helper-229: exit 1)
            try:
                sock, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as err:
                log(f"accept failed: {err}")
                return
            sock.setblocking(True)
            sock.settimeout(wc.HANDSHAKE_SECONDS)  # sends only: frames are small
            peer = self._same_user(sock)
            if peer is None:
                sock.close()
                continue
            conn = Connection(sock)
            conn.peer = peer
            self.conns[sock.fileno()] = conn
            self.sel.register(sock, selectors.EVENT_READ, conn)

    @staticmethod
    def _same_user(sock: socket.socket) -> int | None:
        """The connecting process's pid (-1 where ``SO_PEERCRED`` is missing: the socket's mode 0600 in a 0700
        folder is the guard), or None when it runs as another user (refused)."""
        opt = getattr(socket, "SO_PEERCRED", None)
        if opt is None:
            return -1
        import struct

        pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, opt, struct.calcsize("3i")))
        if uid != os.geteuid():
            log(f"refused a connection from uid {uid}")
            return None
        return pid

    def drain_wakeup(self) -> None:
        try:
            while os.read(self.wake_r, 512):
                pass
        except (BlockingIOError, InterruptedError):
            pass

    def readable(self, conn: Connection) -> None:
        try:
            data, fds, _flags, _addr = socket.recv_fds(conn.sock, 65536, 8)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data, fds = b"", []
        conn.reader.feed(data, fds)
        if not data:
            self.closed(conn)
            return
        while conn.sock.fileno() >= 0:
            try:
                msg = conn.reader.frame()
            except ValueError:
                self.drop(conn)
                return
            if msg is None:
                return
            self.handle(conn, msg)

    def handle(self, conn: Connection, msg: dict) -> None:
        if conn.state == "new":
            self.first_frame(conn, msg)
        elif conn.state == "accepted" and msg.get("op") == "go" and self.stopping:  # accepted before the stop:
            conn.reply({"refused": f"the worker is stopping ({self.stopping})"})  # nothing ran, it runs in-process
            self.drop(conn)
        elif conn.state == "accepted" and msg.get("op") == "go":
            self.start_child(conn, msg)
        elif conn.state == "running" and "signal" in msg:
            sig = int(msg["signal"])
            if sig in wc.FORWARDED and conn.pid is not None:
                try:
                    os.kill(conn.pid, sig)
                except ProcessLookupError:
                    pass
        else:
            self.drop(conn)

    def first_frame(self, conn: Connection, msg: dict) -> None:
        op = msg.get("op")
        if msg.get("identity") != self.identity:
            conn.reply({"refused": "another install (its sys.executable, copter version or source folder differ)"})
            return self.drop(conn)
        if op == "status":
            conn.reply(self.status(msg))
            return self.drop(conn)
        if op == "stop":
            conn.reply({"stopping": True, "pid": os.getpid(), "running": len(self.children)})
            conn.state = "stopping"
            self.begin_stop("copter worker stop")
            return
        if op != "run":
            return self.drop(conn)
        why = self.refusal(msg, conn.peer)
        if why:
            conn.reply({"refused": why})
            return self.drop(conn)
        conn.state, conn.limits = "accepted", msg.get("limits")
        conn.reply({"accepted": True})

    def refusal(self, msg: dict, peer: int = -1) -> str | None:
        """Why a run request from process ``peer`` is refused (the client then runs the command itself), or None."""
        if self.stopping:
            return f"the worker is stopping ({self.stopping})"
        if peer != -1:
            other = worker_peer.refusal(peer)
            if other:
                return other
        if msg.get("sources") != self.sources:
            self.begin_stop("copter's source files changed since the worker started: its code is stale")
            return "copter's source files changed since the worker started (it exits; `copter worker start` again)"
        from copter_cli.worker_limits import unadoptable

        limits = unadoptable(msg.get("limits"))
        if limits:
            return limits
        if msg.get("import_env") != self.import_env:
            theirs, ours = msg.get("import_env") or {}, self.import_env
            names = sorted(k for k in set(theirs) | set(ours) if theirs.get(k) != ours.get(k))
            return "import-time environment differs from the worker's: " + ", ".join(names)
        hazard = fork_hazard()
        if hazard:
            self.begin_stop(hazard)
            return hazard
        return None

    def start_child(self, conn: Connection, msg: dict) -> None:
        fds, conn.reader.fds = conn.reader.fds, []
        if len(fds) != 4:
            for fd in fds:
                os.close(fd)
            conn.reply({"refused": f"expected 4 file descriptors, got {len(fds)}"})
            return self.drop(conn)
        keep = conn.sock.fileno()
        close = [self.listener.fileno(), self.wake_r, self.wake_w, self.lock_fd,  # open: no go frame while stopping
                 *(fd for fd in self.conns if fd != keep)]
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, BLOCKED_AT_FORK)
        try:
            pid = os.fork()
        except OSError as err:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            for fd in fds:
                os.close(fd)
            conn.reply({"refused": f"fork failed: {err}"})
            return self.drop(conn)
        if pid == 0:  # the child: never returns
            try:
                from copter_cli import worker_child

                worker_child.run(conn.sock, msg, fds, close, self.sel, conn.limits)
            finally:
                os._exit(70)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for fd in fds:
            os.close(fd)
        conn.state, conn.pid = "running", pid
        self.children[pid] = conn
        self.served += 1
        self.last_activity = time.monotonic()
        log(f"{pid}: {' '.join(msg.get('argv', [])[1:2])} for client {msg.get('pid')}")

    def closed(self, conn: Connection) -> None:
        """The client went away. A running command's process is stopped unless it ends within
        :data:`ORPHAN_GRACE` seconds (a client leaves as soon as the child has said its exit code, while the
        child is still exiting): in-process, the command would have died with its process (a checkpoint is
        written atomically, the state stays valid). It gets SIGTERM first, which ends a command as it ends one
        in-process, its undo actions run (a demo's temporary folder, multiprocessing's ``pymp-*`` folder: both were
        left behind by the SIGKILL this sent at once, helpers 169 and 170), then SIGKILL after
        :data:`ORPHAN_TERM_GRACE` seconds."""
        if conn.state == "running" and conn.pid in self.children:
            self.orphans[conn.pid] = time.monotonic() + ORPHAN_GRACE
        self.drop(conn)

    def kill_orphans(self) -> None:
        now = time.monotonic()
        for pid, deadline in list(self.orphans.items()):
            if pid not in self.children:
                del self.orphans[pid]
                self.terminated.discard(pid)
            elif now >= deadline:
                last = pid in self.terminated
                if last:
                    del self.orphans[pid]
                    self.terminated.discard(pid)
                else:
                    self.orphans[pid] = now + ORPHAN_TERM_GRACE
                    self.terminated.add(pid)
                log(f"{pid}: its client went away: {'killed' if last else 'sent SIGTERM'}")
                try:
                    os.kill(pid, signal.SIGKILL if last else signal.SIGTERM)
                except ProcessLookupError:
                    pass

    def drop(self, conn: Connection) -> None:
        fd = conn.sock.fileno()
        if fd >= 0:
            try:
                self.sel.unregister(conn.sock)
            except (KeyError, ValueError):
                pass
            self.conns.pop(fd, None)
            conn.sock.close()
        for fd in conn.reader.fds:
            os.close(fd)
        conn.reader.fds = []

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is None:
                continue
            self.last_activity = time.monotonic()
            if os.WIFSIGNALED(status):
                sig = os.WTERMSIG(status)
                log(f"{pid}: killed by signal {sig}")
                if conn.sock.fileno() >= 0:
                    conn.reply({"killed": sig})
            else:
                code = os.waitstatus_to_exitcode(status)
                log(f"{pid}: exit {code}")
                if conn.sock.fileno() >= 0:  # the child says it too, unless it ended by os._exit (SIGINT: 130)
                    conn.reply({"exit": code})
            self.drop(conn)
            if self.stopping:
                worker_phase.record(self.lock_fd, "stopping", len(self.children))

    # ------------------------------------------------------------------------------------ stop, status

    def begin_stop(self, why: str) -> None:
        """Stop accepting (the socket goes at once: new clients run in-process); exit when no command runs."""
        if self.stopping:
            return
        self.stopping = why
        log(f"stopping: {why} ({len(self.children)} command(s) still running)")
        worker_phase.record(self.lock_fd, "stopping", len(self.children))
        self.remove_socket()

    def remove_socket(self) -> None:
        if self.listener is None:
            return
        try:
            self.sel.unregister(self.listener)
        except (KeyError, ValueError):
            pass
        self.listener.close()
        self.listener = None
        try:
            if os.stat(self.paths["socket"]).st_ino == self.socket_ino:
                os.unlink(self.paths["socket"])
        except OSError:
            pass

    def status(self, msg: dict) -> dict:
        return {"running": True, "pid": os.getpid(), "socket": self.paths["socket"], "log": self.paths["log"],
                "identity": self.identity, "key": wc.install_key(self.identity),
                "started_at": self.started_at, "uptime_seconds": time.time() - self.started_at,
                "idle_timeout_seconds": self.idle_timeout,
                "idle_seconds": 0.0 if self.children else time.monotonic() - self.last_activity,
                "served": self.served, "active": len(self.children),
                "stale": msg.get("sources") != self.sources,
                "import_env_matches": msg.get("import_env") == self.import_env, "import_env": self.import_env,
                "preload_seconds": self.info["seconds"], "kernels_loaded": self.info["kernels"]["loaded"],
                "kernel_load_seconds": self.info["kernels"]["seconds"]}


def take_lock(path: str, seconds: float = 1.0) -> int | None:
    """The install's lock file descriptor, locked; None when another worker still holds it after ``seconds``
    (a ``copter worker status`` looks at the lock for a moment: that is not a worker)."""
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError as err:
            if err.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                os.close(fd)
                raise
        if time.monotonic() > deadline:
            os.close(fd)
            return None
        time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    """Run the worker (``python -c 'from copter_cli.worker_server import main; main()' --idle-timeout S``,
    as ``copter worker start`` does). Exit codes: 0 stopped, 6 another worker of this install holds the lock,
    7 the folder, the lock file or the socket path cannot be used."""
    ap = argparse.ArgumentParser(prog="copter-worker")
    ap.add_argument("--idle-timeout", type=float, default=900.0)
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    p = wc.paths()
    problem = wc.folder_problem(p["dir"])
    if problem:
        log(f"cannot use the worker folder: {problem}")
        return 7
    try:
        lock_fd = take_lock(p["lock"])
    except OSError as err:  # a folder in the way (IsADirectoryError was a traceback, exit 1), or the machine
        log(f"cannot use the lock file {p['lock']}: {err.strerror or err} (a leftover there that is not a file: "
            "remove it)")
        return 7
    if lock_fd is None:
        log(f"another worker of this install holds {p['lock']}")
        return 6
    worker_phase.record(lock_fd, "starting")
    log(f"starting: python {sys.executable}, identity key {wc.install_key()}, idle timeout {args.idle_timeout:g} s")
    info = preload()
    k = info["kernels"]
    log(f"imported {info['modules']} modules in {info['seconds']:.2f} s; loaded {k['loaded']} kernel signatures "
        f"of {k['kernels']} kernels in {k['seconds']:.2f} s (left to first use: {', '.join(k['skipped']) or '-'}"
        f"; stale entries {k['stale']}{'; ' + k['error'] if k['error'] else ''})")
    for name, err in info["failed"].items():
        log(f"not preloaded: {name} ({err})")
    hazard = fork_hazard()
    if hazard:
        log(f"cannot serve: {hazard}")
        return 1
    worker = Worker(args.idle_timeout, info, lock_fd)
    worker.install_signals()
    try:
        try:
            worker.bind()
        except OSError as err:  # a folder in the way (IsADirectoryError was a traceback, exit 1), or the machine
            log(f"cannot listen on {p['socket']}: {err.strerror or err} (a leftover there that is not a socket: "
                "remove it)")
            return 7
        worker_phase.record(lock_fd, "running")
        log(f"ready on {p['socket']}")
        worker.serve()
    finally:
        worker.remove_socket()
        log("stopped")
        os.close(lock_fd)
    return 0
