"""Advisory locks that exclude both the processes and the threads working on one store: POSIX byte-range locks
(``fcntl.lockf``), the kind NFS and other shared file systems implement (NFSv4 in the protocol, v3 through NLM).

A lock is a byte range of a lock file: the response store locks one byte per prompt bucket of a (model, sampling
parameters) file, the spend ledger the whole of its file. POSIX locks belong to a process, not to a thread or a file
descriptor, so two threads of one process would both get the same lock, and closing *any* descriptor of a file drops
every lock the process holds on it. Therefore this module opens each lock file once per process (and keeps it open),
never hands the file to anyone else to close, and keeps a table of the ranges its threads hold, so threads exclude
each other as processes do. The operating system releases a dead process's locks (on NFS when the client's lease
ends, about 90 seconds), so a killed run never leaves a lock behind. On a platform without ``fcntl`` (Windows) only
the threads of one process exclude each other.

    >>> if try_lock(path, 42):          # the byte 42 of path: no other thread or process holds it now
    ...     try: ...
    ...     finally: unlock(path, 42)
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["HAVE_FILE_LOCKS", "descriptor", "held_elsewhere", "lock", "try_lock", "unlock"]

#: Whether locks exclude other processes (False where the platform has no ``fcntl``: threads only).
HAVE_FILE_LOCKS = fcntl is not None

_BUSY = frozenset({errno.EACCES, errno.EAGAIN})
_MUTEX = threading.Lock()
# the process these tables belong to: a child made by fork inherits the descriptors but none of the locks
_STATE: dict = {"pid": None, "fds": {}, "held": set()}


def _tables() -> tuple[dict[str, int], set[tuple[str, int, int]]]:
    # (call under _MUTEX)
    if _STATE["pid"] != os.getpid():
        _STATE.update(pid=os.getpid(), fds={}, held=set())
    return _STATE["fds"], _STATE["held"]


def _open(path: Path) -> int:
    fds, _ = _tables()
    key = str(path)
    fd = fds.get(key)
    if fd is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = fds[key] = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    return fd


def descriptor(path: Path) -> int:
    """The process's one descriptor of lock file ``path`` (opened, and the file made, on first use). Read and write
    the file's content through it while holding a lock; never close it."""
    with _MUTEX:
        return _open(path)


def try_lock(path: Path, start: int = 0, length: int = 1) -> bool:
    """Take the exclusive lock of bytes ``start`` to ``start + length`` of ``path`` (``length`` 0: to the end of any
    file) if no other thread or process holds it; True when taken. Never waits."""
    key = (str(path), start, length)
    with _MUTEX:
        fd = _open(path)
        _, held = _tables()
        if key in held:
            return False
        if fcntl is not None:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, length, start, os.SEEK_SET)
            except OSError as exc:
                if exc.errno in _BUSY:
                    return False
                raise
        held.add(key)
        return True


def lock(path: Path, start: int = 0, length: int = 1, *, poll_s: float = 0.5,
         on_wait: Callable[[], None] | None = None) -> None:
    """Take the lock of :func:`try_lock`, waiting (polling, at most ``poll_s`` apart) while another holds it;
    ``on_wait`` is called once when it has to wait. Ctrl-C interrupts the wait."""
    delay = min(0.01, poll_s)
    while not try_lock(path, start, length):
        if on_wait is not None:
            on_wait()
            on_wait = None
        time.sleep(delay)
        delay = min(delay * 2, poll_s)


def unlock(path: Path, start: int = 0, length: int = 1) -> None:
    """Release a lock this process took with :func:`try_lock` or :func:`lock`."""
    key = (str(path), start, length)
    with _MUTEX:
        fds, held = _tables()
        if key not in held:
            return
        held.discard(key)
        if fcntl is not None and key[0] in fds:
            fcntl.lockf(fds[key[0]], fcntl.LOCK_UN, length, start, os.SEEK_SET)


def held_elsewhere(path: Path) -> bool:
    """Whether another thread or process holds byte 0 of ``path`` (a liveness mark: a process that holds it is
    alive). A file nobody holds is closed again, so it can be removed."""
    if not try_lock(path, 0, 1):
        return True
    unlock(path, 0, 1)
    with _MUTEX:
        fds, held = _tables()
        key = str(path)
        if key in fds and not any(h[0] == key for h in held):
            os.close(fds.pop(key))
    return False
