"""The spend ledger: what the runs on one response store have reserved for the requests they are sending, so that a
spending limit holds across processes (the Dagster daemon's concurrent runs, one pod per partition on Kubernetes),
not only within one.

Before a batch of requests is sent, the runner reserves the batch's estimated cost (:meth:`SpendLedger.reserve`): it
is sent only when what the store records as spent, plus every other run's reservation, plus this one, stays within
each limit. When the batch is back its answers, with their real cost, are in the store, and the reservation is
released. A batch that would pass a limit by what the store records alone is refused (the run stops); one that
would pass it only with other runs' reservations waits for them to settle, since their real cost is usually below
their estimate.

The ledger is ``<store>/ledger/spend.json``, read and rewritten under a POSIX lock of the whole file
(:mod:`kgprobe.generation.locks`), the pattern NFS keeps coherent: a client revalidates its cache of a file when it
takes a lock on it and writes it back before it releases it. A reservation names its process's owner mark,
``<store>/ledger/owners/<id>.lock``, whose first byte the process holds while it lives; a reservation whose owner no
longer holds its mark (a killed process, or on NFS one whose client's lease ran out) is dropped by the next reader.

    >>> ledger = SpendLedger(store.root / "ledger")
    >>> ticket = ledger.reserve([("max_cost_usd of model 'm'", "model:m", 5.0)], 0.12, spent=lambda scope: 4.5)
    >>> ...  # send the batch, store its answers
    >>> ledger.release(ticket.id)
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kgprobe.generation import locks

__all__ = ["SpendLedger", "Ticket"]

# (pid, ledger folder) -> this process's owner id there
_OWNERS: dict[tuple[int, str], str] = {}
_OWNERS_LOCK = threading.Lock()
_EPS = 1e-9


@dataclass(frozen=True)
class Ticket:
    """The answer of :meth:`SpendLedger.reserve`: the reservation's ``id`` when it is held, else ``over``, the limit
    the batch would pass by what is recorded as spent alone, as ``(name, max_usd, spent_usd)``."""

    id: str | None
    over: tuple[str, float, float] | None = None


class SpendLedger:
    """Reservations of money for requests in flight, shared by every process that uses one folder."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.path = self.folder / "spend.json"

    def __repr__(self) -> str:
        return f"SpendLedger({str(self.folder)!r})"

    def _owner(self) -> str:
        key = (os.getpid(), str(self.folder))
        with _OWNERS_LOCK:
            owner = _OWNERS.get(key)
            if owner is None:
                owner = uuid.uuid4().hex
                if not locks.try_lock(self._mark(owner), 0, 1):  # a fresh file: nobody else can hold it
                    raise RuntimeError(f"spend ledger: could not take the owner mark {self._mark(owner)}")
                _OWNERS[key] = owner
            return owner

    def _mark(self, owner: str) -> Path:
        return self.folder / "owners" / f"{owner}.lock"

    def _load(self) -> list[dict]:
        fd = locks.descriptor(self.path)
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        try:
            # raw_decode: a save cut short between its write and its truncation leaves the old tail after the JSON
            state, _ = json.JSONDecoder().raw_decode(b"".join(chunks).decode("utf-8") or "{}")
            return [r for r in state.get("reservations", []) if isinstance(r, dict)]
        except (ValueError, AttributeError):
            # a write cut short by a crash; the reservations it held were of runs in flight at that moment
            return []

    def _save(self, reservations: list[dict]) -> None:
        fd = locks.descriptor(self.path)
        data = json.dumps({"reservations": reservations}, separators=(",", ":")).encode("utf-8")
        os.lseek(fd, 0, os.SEEK_SET)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.ftruncate(fd, len(data))
        os.fsync(fd)

    def _live(self, reservations: list[dict], mine: str) -> list[dict]:
        alive: dict[str, bool] = {mine: True}
        kept = []
        for r in reservations:
            owner = str(r.get("owner", ""))
            if owner not in alive:
                alive[owner] = bool(owner) and locks.held_elsewhere(self._mark(owner))
                if not alive[owner] and owner:
                    self._mark(owner).unlink(missing_ok=True)
            if alive[owner]:
                kept.append(r)
        return kept

    def _sweep(self, live: list[dict], mine: str) -> None:
        # the marks of processes that are gone and hold no reservation (they released all of theirs and ended)
        owners = {str(r.get("owner", "")) for r in live} | {mine}
        folder = self.folder / "owners"
        for mark in sorted(folder.glob("*.lock")) if folder.is_dir() else []:
            if mark.stem not in owners and not locks.held_elsewhere(mark):
                mark.unlink(missing_ok=True)

    def _locked(self, update: Callable[[list[dict], str], tuple[list[dict] | None, Ticket | None]]) -> Ticket | None:
        locks.lock(self.path, 0, 0, poll_s=0.05)
        try:
            # under the ledger's lock, so that no reader sees a new mark before its process holds it
            mine = self._owner()
            before = self._load()
            live = self._live(before, mine)
            self._sweep(live, mine)
            after, ticket = update(live, mine)
            if after is None and len(live) != len(before):
                after = live
            if after is not None:
                self._save(after)
            return ticket
        finally:
            locks.unlock(self.path, 0, 0)

    def reserve(self, limits: Sequence[tuple[str, str, float]], usd: float, *, spent: Callable[[str], float],
                log: Callable[[str], None] | None = None, poll_s: float = 0.2) -> Ticket:
        """Reserve ``usd`` against ``limits`` (``(name, scope, max_usd)``; ``scope`` names what is counted, e.g.
        ``model:<name>`` or ``run:<id>``, and ``spent(scope)`` reads what the store records for it). Returns a
        held :class:`Ticket` once ``spent + reserved by others + usd`` is within every limit, waiting (polling every
        ``poll_s``) while other runs' reservations are what stands in the way; returns a ticket with ``over`` set,
        and reserves nothing, when ``spent + usd`` alone passes a limit."""
        usd = max(float(usd), 0.0)

        def update(live: list[dict], mine: str) -> tuple[list[dict] | None, Ticket | None]:
            spent_now = {scope: spent(scope) for _, scope, _ in limits}
            for name, scope, most in limits:
                if spent_now[scope] + usd > most + _EPS:
                    return None, Ticket(None, (name, most, spent_now[scope]))
            for _, scope, most in limits:
                others = sum(float(r.get("usd", 0.0)) for r in live if scope in r.get("scopes", ()))
                if spent_now[scope] + others + usd > most + _EPS:
                    return None, None
            ticket = Ticket(uuid.uuid4().hex)
            return [*live, {"id": ticket.id, "owner": mine, "scopes": [s for _, s, _ in limits], "usd": usd,
                            "at": time.time(), "pid": os.getpid()}], ticket

        said = False
        while True:
            ticket = self._locked(update)
            if ticket is not None:
                return ticket
            if not said and log is not None:
                log(f"spend ledger: other runs' requests in flight hold reservations that leave no room for the next "
                    f"batch (${usd:.4f}); waiting for them to settle")
                said = True
            time.sleep(poll_s)

    def release(self, ticket_id: str | None) -> None:
        """Drop a reservation (its batch's answers and their real cost are in the store now)."""
        if ticket_id is None:
            return
        self._locked(lambda live, mine: ([r for r in live if r.get("id") != ticket_id], None))

    def reserved(self) -> float:
        """Dollars reserved now by live runs (every scope together)."""
        box: list[float] = []

        def update(live: list[dict], mine: str) -> tuple[None, None]:
            box.append(sum(float(r.get("usd", 0.0)) for r in live))
            return None, None

        self._locked(update)
        return box[0]
