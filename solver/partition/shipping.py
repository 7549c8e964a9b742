"""A part's arrays travel to its process-pool worker through shared memory instead of the pool's pipe.

``concurrent.futures.ProcessPoolExecutor`` pickles every call in one feeder thread of this process (holding
the GIL, so the round's own threads wait) and writes the bytes through a pipe that the worker reads in 64 KiB
pieces, then unpickles them into fresh arrays: three copies, one part after another. Measured in session 26 on
TE Kdl with K = 4 (a part: 7.7M nonzeros, 113 MB pickled; the machine loaded): 0.67 s to pickle, 0.6-1.1 s
through the pipe, 0.10 s to unpickle, per part; a worker that finished a part began its next one 0.73-0.91 s
later. None of it was in the report's ``slowest_part`` (the worker's own solve seconds).

:func:`pack` pickles with protocol 5 (PEP 574) and keeps every buffer of at least :data:`MIN_SHARED_BYTES`
(numpy arrays' data) out of the pickle: they are copied once, 64-byte aligned, into one anonymous memory file
(``os.memfd_create``) that this process holds open; the pipe carries the :class:`Shipment` (the pickle of the
rest, this process's pid, the file's descriptor, the buffers' offsets and lengths). :func:`unpack`, in the
worker, opens ``/proc/<pid>/fd/<fd>``, maps it copy-on-write (``mmap.ACCESS_COPY``: the worker's writes stay its
own, the coordinator's arrays are never touched) and unpickles with the mapped buffers, so the arrays are
views of the mapping: writable, aligned, C-contiguous as before (numba's kernel signatures are unchanged), no
copy. The file lives while this process holds it (:func:`release`, after the parts returned, retries
included) or a worker's arrays map it; it has no name in any file system, so nothing is left behind when a
process is killed.

A part's largest arrays (its matrix's row indices and values: 93 of a Kdl part's 113 MB) need not be copied at
all: :func:`shared_empty` gives the part's builder (``solver.partition.split.build_part_problems``) arrays that
live in a memory file of their own from the start, and :func:`pack` ships a buffer inside such a file as a
reference to it (the file and the offset), writing only the other buffers. The copy it saves was the
coordinator's ``ship`` phase, serial, on the critical path: TE Kdl K = 4 0.7-1.5 s a round on the 2-core machine
(pwrite into fresh shared pages, while the first parts and the workers' start share the cores).

Where ``os.memfd_create`` or ``/proc/self/fd`` is missing (macOS, Windows), :func:`available` is False,
:func:`shared_empty` gives plain arrays and the pool's pipe carries the pickled call as before. Ray keeps its own
object store (zero-copy for numpy arrays).
"""

from __future__ import annotations

import ctypes
import io
import mmap
import os
import pickle
import threading
import time
import weakref
from dataclasses import dataclass

import numpy as np

MIN_SHARED_BYTES = 1 << 16  #: buffers below this stay in the pickle (a copy is cheaper than a page)
NAMES_AS_ARROW = 1024  #: object arrays of str of at least this many entries go as Arrow strings (:class:`_Pickler`)
ALIGN = 64  #: byte alignment of each shared buffer (numba types an unaligned array differently)


MIN_ARENA_BYTES = 1 << 20  #: :func:`shared_empty` below this gives plain arrays (a memory file is not worth it)


@dataclass(frozen=True)
class Shipment:
    """What the pipe carries for one packed object: ``data`` (the protocol-5 pickle without its large buffers),
    ``pid`` and ``fd`` (the memory file :func:`pack` wrote the large buffers into, open in process ``pid``; -1
    when there are none), ``size`` (that file's bytes), ``spans`` ((file, offset, length) per out-of-band buffer,
    in pickling order: ``file`` -1 is that file, ``i >= 0`` is ``shared[i]``) and ``shared`` ((fd, size) of the
    :func:`shared_empty` files holding the other buffers, open in process ``pid``; :func:`release` leaves them
    open: they belong to the arrays)."""

    data: bytes
    pid: int
    fd: int
    size: int
    spans: tuple[tuple[int, int, int], ...]
    shared: tuple[tuple[int, int], ...] = ()


#: id of each live shared_empty mapping -> (its start address, bytes, the file's descriptor). Keyed by the mapping
#: object, which :func:`_in_arena` reaches from the buffer itself (and so holds while it looks): an address alone
#: could, in the instant between a mapping's unmapping and its finalizer, belong to fresh memory
_ARENAS: dict[int, tuple[int, int, int]] = {}
_ARENA_LOCK = threading.Lock()  # the parts are built in threads


def _close_arena(key: int, fd: int) -> None:
    """The last array of a :func:`shared_empty` file is gone: forget it and close its descriptor."""
    with _ARENA_LOCK:  # the mapping is not freed yet, so its id cannot name a newer one
        _ARENAS.pop(key, None)
    os.close(fd)


def shared_empty(specs: list[tuple[int, type]]) -> list[np.ndarray]:
    """Uninitialised 1-D arrays of ``specs`` ((length, dtype) each), placed one after another (64-byte aligned) in
    one new anonymous memory file mapped shared, which :func:`pack` ships by reference instead of copying; the
    arrays are writable, aligned and C-contiguous, as ``np.empty``'s. The file's descriptor stays open while any
    of the arrays lives (then it is closed). Plain ``np.empty`` arrays where :func:`available` is False, when the
    arrays together are below :data:`MIN_ARENA_BYTES`, or when the file cannot be made (an OSError: no memory, a
    descriptor limit): the caller need not care which it got."""
    offsets, size = [], 0
    for n, dtype in specs:
        size = -(-size // ALIGN) * ALIGN
        offsets.append(size)
        size += int(n) * np.dtype(dtype).itemsize
    if not available() or size < MIN_ARENA_BYTES:
        return [np.empty(int(n), dtype=dtype) for n, dtype in specs]
    try:
        fd = os.memfd_create("copter-part-arrays", os.MFD_CLOEXEC)
    except OSError:
        return [np.empty(int(n), dtype=dtype) for n, dtype in specs]
    try:
        os.ftruncate(fd, size)
        mm = mmap.mmap(fd, size)  # MAP_SHARED, read-write: what the builder writes is what a worker maps
    except OSError:
        os.close(fd)
        return [np.empty(int(n), dtype=dtype) for n, dtype in specs]
    except BaseException:
        os.close(fd)
        raise
    probe = ctypes.c_char.from_buffer(mm)
    address = ctypes.addressof(probe)
    del probe  # an exported buffer would keep the mapping from ever being released
    with _ARENA_LOCK:
        _ARENAS[id(mm)] = (address, size, fd)
    weakref.finalize(mm, _close_arena, id(mm), fd)  # the arrays keep mm alive; with the last of them it goes
    return [np.frombuffer(mm, dtype=dtype, count=int(n), offset=off) for (n, dtype), off in zip(specs, offsets,
                                                                                             strict=True)]


def _in_arena(raw: memoryview) -> tuple[int, int, int] | None:
    """(fd, file bytes, offset) of the :func:`shared_empty` file that holds all of ``raw``, or None: the mapping
    is found by following the buffer's owners (an array's ``base``, a memoryview's ``obj``) to it."""
    if not _ARENAS:
        return None
    owner = raw.obj
    for _ in range(16):  # an array's views of views: a few levels
        if owner is None or isinstance(owner, mmap.mmap):
            break
        owner = owner.obj if isinstance(owner, memoryview) else getattr(owner, "base", None)
    if not isinstance(owner, mmap.mmap):
        return None
    with _ARENA_LOCK:
        hit = _ARENAS.get(id(owner))
    if hit is None:
        return None
    address, size, fd = hit
    start = np.frombuffer(raw, dtype=np.uint8).ctypes.data
    if not (address <= start and start + raw.nbytes <= address + size):
        return None
    return fd, size, start - address


def available() -> bool:
    """True where :func:`pack` can share memory with another process: ``os.memfd_create`` and ``/proc/self/fd``
    (Linux)."""
    return hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd")


def pack(obj) -> Shipment:
    """``obj`` as a :class:`Shipment`: its buffers of at least :data:`MIN_SHARED_BYTES` bytes by reference where
    they lie in a :func:`shared_empty` file, the others in one new memory file (held open until :func:`release`),
    the rest pickled (protocol 5).

    Raises:
        OSError: the memory file cannot be made or written (no memory, a file descriptor limit); nothing is
            left open then.
        pickle.PicklingError / TypeError: ``obj`` does not pickle.
    """
    buffers: list[memoryview] = []
    where: list[tuple[int, int, int] | None] = []  # per out-of-band buffer: its shared_empty file, or None

    def keep(buf: pickle.PickleBuffer):
        raw = buf.raw()
        if raw.nbytes < MIN_SHARED_BYTES:
            return True  # in-band
        buffers.append(raw)
        where.append(_in_arena(raw))
        return False

    out = io.BytesIO()
    _Pickler(out, protocol=5, buffer_callback=keep).dump(obj)
    data = out.getvalue()
    if not buffers:
        return Shipment(data, os.getpid(), -1, 0, ())
    shared: list[tuple[int, int]] = []
    spans, size = [], 0
    for raw, hit in zip(buffers, where, strict=True):
        if hit is not None:
            fd, fsize, off = hit
            if (fd, fsize) not in shared:
                shared.append((fd, fsize))
            spans.append((shared.index((fd, fsize)), off, raw.nbytes))
            continue
        size = -(-size // ALIGN) * ALIGN
        spans.append((-1, size, raw.nbytes))
        size += raw.nbytes
    if size == 0:  # every large buffer is in a shared_empty file: nothing to write
        return Shipment(data, os.getpid(), -1, 0, tuple(spans), tuple(shared))
    fd = os.memfd_create("copter-part", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, size)
        # pwrite: half the time of a copy into a fresh mapping (its page faults): a Kdl part's 62 MB of
        # values 0.04-0.08 s against 0.09-0.18 s
        for (f, off, n), raw in zip(spans, buffers, strict=True):
            if f >= 0:
                continue  # in a shared_empty file already
            done = 0
            while done < n:
                done += os.pwrite(fd, raw[done:], off + done)
    except BaseException:
        os.close(fd)
        raise
    return Shipment(data, os.getpid(), fd, size, tuple(spans), tuple(shared))


class _Pickler(pickle.Pickler):
    """Protocol-5 pickling with names shipped as Arrow strings: a numpy object array of ``str`` (a part's column
    and row names) goes as a ``pyarrow.StringArray``, whose two buffers go out of band like any array's, and comes
    back an object array of the same strings (:func:`_names`). Pickled one string at a time, a TE Kdl part's
    410k names were 60-70% of its packing (0.27-0.29 s of 0.38-0.46 s, the machine loaded); as Arrow 0.05 s, and
    the worker, in parallel with the other parts, turns them back (0.06 s)."""

    def reducer_override(self, obj):
        if type(obj) is np.ndarray and obj.dtype == object and obj.ndim == 1 and obj.size >= NAMES_AS_ARROW:
            import pyarrow as pa

            try:
                arr = pa.array(obj, pa.string(), from_pandas=False)
            except (pa.ArrowException, TypeError, ValueError):  # not all str: numpy's own pickling
                return NotImplemented
            if arr.null_count:  # None entries: numpy's own pickling keeps them as they are
                return NotImplemented
            return _names, (arr,)
        return NotImplemented


def _names(arr):
    """The object array of ``str`` that :class:`_Pickler` shipped as the StringArray ``arr``."""
    return arr.to_numpy(zero_copy_only=False)


def unpack(shipment: Shipment):
    """The object :func:`pack` packed, its large arrays views of copy-on-write mappings of the memory files.

    Raises:
        OSError: a file cannot be opened (its process ended or released it) or mapped.
    """
    if not shipment.spans:
        return pickle.loads(shipment.data)
    files = [(shipment.fd, shipment.size)] if shipment.fd >= 0 else []
    views = {}
    for key, (fd_, size) in [(-1, f) for f in files] + list(enumerate(shipment.shared)):
        fd = os.open(f"/proc/{shipment.pid}/fd/{fd_}", os.O_RDONLY)
        try:
            mm = mmap.mmap(fd, size, access=mmap.ACCESS_COPY)
        finally:
            os.close(fd)
        views[key] = memoryview(mm)  # the arrays keep it, and so the mapping, alive; it goes with the last of them
    return pickle.loads(shipment.data, buffers=[views[f][off:off + n] for f, off, n in shipment.spans])


def release(shipments) -> None:
    """Close the memory files :func:`pack` made for ``shipments`` (None entries are skipped) in this process; a
    worker's mapping stays valid. The :func:`shared_empty` files they refer to stay open (their arrays close
    them)."""
    for s in shipments:
        if s is not None and s.fd >= 0 and s.pid == os.getpid():
            os.close(s.fd)


def timed_pack(obj) -> tuple[Shipment | None, float]:
    """(:func:`pack` of ``obj``, the wall seconds it took: this process's share of shipping a part), or (None,
    seconds) when the memory file cannot be made or written (OSError): the pool's pipe then carries ``obj``."""
    t = time.perf_counter()
    try:
        out = pack(obj)
    except OSError:
        out = None
    return out, time.perf_counter() - t
