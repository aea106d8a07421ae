"""The response store: every generated sample, appended as Parquet shards, keyed for resuming.

Layout: ``<root>/model=<escaped model name>/shard-<UTC timestamp>-<uuid>.parquet``; the name is escaped by
:func:`kgprobe.warehouse.safe_value` (``openai/gpt-4o`` is ``model=openai%2Fgpt-4o``), so two names never share a
folder, and the exact name is in every row: reads never take a column from a folder name (no hive partitioning)
and always filter on the stored ``model``. (Shards an older version wrote under ``model=<name with _ for every
unsafe character>`` are read too, filtered the same way.) A shard is written to a hidden temporary file beside it
and renamed into place (``os.replace``), so a reader never sees half a shard and a run killed at any moment loses
only the rows it had not written yet. A shard that cannot be decoded (cut short, or with damaged pages) is set aside
as ``damaged-<name>`` and the read retried without it; an I/O error (``EIO``, NFS's ``ESTALE``, a timeout) is not
damage: the read is tried again (:data:`IO_ATTEMPTS` times, with backoff) and then fails with
:class:`StoreIOError`, the shard left where it is. Shards are never modified; the logical view keeps,
per key ``(model, prompt_sha256, params_sha256, sample_index)``, the latest success, or the latest failure when no
success exists. Parallel runs (for example two perturbation partitions of one model) write their own shards, and
a run takes the lock of each prompt's bucket while it generates it (:meth:`ResponseStore.claim`), so runs whose
prompts overlap never send one prompt twice.

    >>> store = ResponseStore("warehouse/responses")
    >>> store.done_keys("smollm2-135m", SamplingParams().sha256())      # {(prompt_sha256, sample_index), ...}
    >>> store.rows_for("smollm2-135m", prompts, SamplingParams())       # one row per (item, sample)

Queries run in DuckDB over the shards' rows. A process keeps the shards it has read in memory (Arrow tables, up to
:data:`CACHE_BYTES` in all, least recently used dropped first), keyed by path, size, modification time and inode:
shards are never modified, so a cached shard is the file's content, and a changed or replaced file is read again.
A run that reads a model's responses for each of its partitions reads each shard from disk once.
:meth:`ResponseStore.compact` folds a model's shards into one when there are many.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from kgprobe.errors import KGProbeError

if TYPE_CHECKING:
    from kgprobe.generation.records import Prompt, SamplingParams

__all__ = ["IO_ATTEMPTS", "LOCK_BUCKETS", "MISSING_ERROR", "ROW_SCHEMA", "STORE_SCHEMA", "ResponseStore",
           "StoreIOError", "response_id"]

_LEGACY = re.compile(r"[^A-Za-z0-9_.+-]")
_TS = pa.timestamp("us", tz="UTC")

#: Columns of a stored response (one per model, prompt text, sampling parameters and sample index).
STORE_SCHEMA = pa.schema([
    ("model", pa.string()),
    ("backend", pa.string()),
    ("prompt_sha256", pa.string()),
    ("prompt", pa.string()),
    ("sampling_params", pa.string()),
    ("params_sha256", pa.string()),
    ("sample_index", pa.int32()),
    ("text", pa.string()),
    ("finish_reason", pa.string()),
    ("tokens_in", pa.int64()),
    ("tokens_out", pa.int64()),
    ("latency_s", pa.float64()),
    ("cost", pa.float64()),
    ("error", pa.string()),
    ("retries", pa.int32()),
    ("run_id", pa.string()),
    ("created_at", _TS),
    ("logprobs", pa.string()),
])

#: Columns of :meth:`ResponseStore.rows_for`: one row per (item, sample), what the generation assets write. The
#: stored response's columns, with the response id (:func:`response_id`), the item id and the prompt template id in
#: front.
ROW_SCHEMA = pa.schema([
    pa.field("response_id", pa.string()),
    pa.field("item_id", pa.string()),
    STORE_SCHEMA.field("model"),
    STORE_SCHEMA.field("backend"),
    pa.field("prompt_template_id", pa.string()),
    STORE_SCHEMA.field("prompt"),
    STORE_SCHEMA.field("prompt_sha256"),
    *(STORE_SCHEMA.field(name) for name in STORE_SCHEMA.names[STORE_SCHEMA.get_field_index("sampling_params"):]),
])

#: The error of a row that :meth:`ResponseStore.rows_for` could not find at all (never generated nor attempted).
MISSING_ERROR = "missing: no stored response; run run_generation for this model first"

# The latest success per key, else the latest failure.
_LATEST = """
    SELECT * FROM {src}
    WHERE model = $model {extra}
    QUALIFY row_number() OVER (
        PARTITION BY prompt_sha256, params_sha256, sample_index
        ORDER BY (error IS NULL) DESC, created_at DESC) = 1
"""
_STALE_TMP_S = 3600.0

#: How many bytes of shard rows a process keeps in memory (least recently read dropped first).
CACHE_BYTES = 512 * 1024 * 1024
# (path, size, mtime_ns, inode) -> the shard's rows in STORE_SCHEMA; shared by every ResponseStore of the process
_CACHE: OrderedDict[tuple[str, int, int, int], pa.Table] = OrderedDict()
_CACHE_BYTES = [0]
# the last few file sets read, as one contiguous table each (DuckDB scans one chunk several times faster than 100)
_COMBINED: OrderedDict[tuple, pa.Table] = OrderedDict()
_COMBINED_SETS = 4
_CACHE_LOCK = threading.Lock()
_LOCAL = threading.local()
# What reading a shard that is not whole raises: DuckDB's errors, Arrow's (ArrowInvalid is a ValueError) and the
# file system's (a shard removed by a compaction between listing and reading). Transient I/O errors never get here:
# they are retried, then raised as StoreIOError.
_READ_ERRORS = (duckdb.Error, pa.ArrowException, OSError, ValueError)

#: How many times a read that fails with an I/O error is tried before :class:`StoreIOError`; the waits between
#: tries double from :data:`IO_BACKOFF_S` (0.1 + 0.2 + 0.4 + 0.8 + 1.6 s in all).
IO_ATTEMPTS = 6
IO_BACKOFF_S = 0.1
# errno values of a read that the same read may not meet again: a network file system's stale handle, a timeout, a
# lost connection, a device error. Arrow raises OSError with the errno of the system call; a shard that fails to
# decode raises ArrowInvalid, or OSError without an errno.
_TRANSIENT = frozenset(getattr(errno, name) for name in (
    "EIO", "ESTALE", "EAGAIN", "EINTR", "ETIMEDOUT", "EBUSY", "ENOLCK", "ECONNRESET", "ECONNABORTED", "ENETDOWN",
    "ENETUNREACH", "EHOSTUNREACH", "EREMOTEIO") if hasattr(errno, name))

#: Lock buckets per model and sampling parameters (:meth:`ResponseStore.claim`): a prompt's bucket is its SHA-256
#: modulo this; two runs wait for each other only on prompts of one bucket.
LOCK_BUCKETS = 4096

_T = TypeVar("_T")


class StoreIOError(KGProbeError):
    """A shard could not be read for an I/O error that lasted through every retry (the shard is kept as it is)."""


def _retrying(read: Callable[[], _T], path: Path) -> _T:
    """``read()``, tried again after an I/O error that may pass (:data:`_TRANSIENT`); an error of another kind (a
    missing file, a shard that does not decode) is raised at once."""
    attempt = 0
    while True:
        try:
            return read()
        except OSError as exc:
            attempt += 1
            if exc.errno not in _TRANSIENT:
                raise
            if attempt >= IO_ATTEMPTS:
                raise StoreIOError(
                    f"response store: reading {path} failed {IO_ATTEMPTS} times with an I/O error ({exc}). The shard "
                    "is kept as it is and its answers are not asked again: check the file system (the NFS mount, "
                    "the disk) and run again.") from exc
            time.sleep(IO_BACKOFF_S * 2 ** (attempt - 1))


def _shard_key(path: Path) -> tuple[str, int, int, int]:
    st = _retrying(path.stat, path)
    return str(path), st.st_size, st.st_mtime_ns, st.st_ino


def _footer(path: Path) -> Any:
    return pq.ParquetFile(path).metadata


def _read_shard(path: Path) -> pa.Table:
    """Every page of one shard, decoded (so a damaged page raises here), as :data:`STORE_SCHEMA` columns; a column
    an older shard lacks (``logprobs``) reads as null."""
    table = _retrying(lambda: pq.read_table(path), path)
    for field in STORE_SCHEMA:
        if field.name not in table.column_names:
            table = table.append_column(field, pa.nulls(table.num_rows, field.type))
    return table.select(STORE_SCHEMA.names).cast(STORE_SCHEMA)


def _load(files: Sequence[Path]) -> pa.Table:
    """The rows of ``files`` as one table, from the process's cache where it holds them, else read (and cached)."""
    keys = tuple(_shard_key(path) for path in files)
    with _CACHE_LOCK:
        combined = _COMBINED.get(keys)
        if combined is not None:
            _COMBINED.move_to_end(keys)
            return combined
    parts = []
    for path, key in zip(files, keys):
        with _CACHE_LOCK:
            table = _CACHE.get(key)
            if table is not None:
                _CACHE.move_to_end(key)
        if table is None:
            table = _read_shard(path)
            with _CACHE_LOCK:
                if key not in _CACHE:
                    _CACHE[key] = table
                    _CACHE_BYTES[0] += table.nbytes
                while _CACHE_BYTES[0] > CACHE_BYTES and len(_CACHE) > 1:
                    _, dropped = _CACHE.popitem(last=False)
                    _CACHE_BYTES[0] -= dropped.nbytes
        parts.append(table)
    combined = pa.concat_tables(parts).combine_chunks() if parts else STORE_SCHEMA.empty_table()
    if combined.nbytes > CACHE_BYTES // _COMBINED_SETS:  # a copy that large is made again when asked
        return combined
    with _CACHE_LOCK:
        _COMBINED[keys] = combined
        while len(_COMBINED) > _COMBINED_SETS:
            _COMBINED.popitem(last=False)
    return combined


def _cached(path: Path) -> bool:
    try:
        key = _shard_key(path)
    except OSError:
        return False
    with _CACHE_LOCK:
        return key in _CACHE


def _connection() -> duckdb.DuckDBPyConnection:
    # one in-memory DuckDB per thread (a connection is not shared between threads): opening one per query costs more
    # than most queries
    con = getattr(_LOCAL, "con", None)
    if con is None:
        con = _LOCAL.con = duckdb.connect()
    return con


def response_id(model: str, prompt_sha256: str, params_sha256: str, sample_index: int) -> str:
    """The id of one response: 16 hex digits of the SHA-256 of its store key, ``model|prompt|params|sample``.

    Score rows list the response ids behind them, so a number drills down to the answers; the id is the same in
    every table and every run because it is derived from the key, not assigned.

        >>> response_id("oracle", "ab" * 32, "cd" * 32, 0)  # doctest: +SKIP
        '5d41402abc4b2a76'
    """
    key = f"{model}|{prompt_sha256}|{params_sha256}|{int(sample_index)}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def _legacy_folder(model: str) -> str:
    # the folder name of an older version: every unsafe character as "_", so "a/b" and "a_b" shared one
    return "model=" + (_LEGACY.sub("_", model) or "_")


class ResponseStore:
    """Append-only Parquet shards of responses under ``root``, one folder per model."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"ResponseStore({str(self.root)!r})"

    def model_dir(self, model: str) -> Path:
        """The folder this store writes one model's shards to: ``model=<escaped name>``, a folder of its own (the
        rows keep the exact name)."""
        from kgprobe.warehouse import safe_value

        return self.root / f"model={safe_value(model)}"

    def _own_shards(self, model: str) -> list[Path]:
        folder = self.model_dir(model)
        return sorted(folder.glob("shard-*.parquet")) if folder.is_dir() else []

    def shards(self, model: str) -> list[Path]:
        """The shards that may hold the model's rows, oldest first: its folder's, and those of the folder an older
        version used when that name differs (temporary files of unfinished writes are not listed)."""
        files = self._own_shards(model)
        legacy = self.root / _legacy_folder(model)
        if legacy != self.model_dir(model) and legacy.is_dir():
            files += sorted(legacy.glob("shard-*.parquet"))
        return sorted(files, key=lambda f: f.name)

    def models(self) -> list[str]:
        """Model names that have at least one stored row (as stored in the rows, not as the folders spell them)."""
        files = sorted(self.root.glob("model=*/shard-*.parquet"))
        if not files:
            return []
        table = self._query(files, "SELECT DISTINCT model FROM {src}", {})
        return sorted(m for m in table.column("model").to_pylist() if m is not None)

    # -- writing ------------------------------------------------------------------------------------------------------

    def write_shard(self, model: str, rows: Sequence[Mapping[str, Any]] | pa.Table) -> Path | None:
        """Write ``rows`` (dicts with the :data:`STORE_SCHEMA` columns, or a table) as one new shard, atomically.

        Returns the shard's path, or None when there is nothing to write. Every row must belong to ``model``.
        """
        table = rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(list(rows), schema=STORE_SCHEMA)
        if table.num_rows == 0:
            return None
        table = table.select(STORE_SCHEMA.names).cast(STORE_SCHEMA)
        models = set(table.column("model").unique().to_pylist())
        if models != {model}:
            raise ValueError(f"write_shard({model!r}): rows belong to model(s) {sorted(map(str, models))}")
        folder = self.model_dir(model)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
        final = folder / f"shard-{stamp}-{uuid.uuid4().hex[:12]}.parquet"
        tmp = folder / f".{final.name}.tmp"
        try:
            with open(tmp, "wb") as fh:
                pq.write_table(table, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _fsync_dir(folder)
        return final

    def compact(self, model: str, files: Sequence[Path] | None = None) -> int:
        """Fold the model's shards into one that holds only the logical view (latest success, else latest failure,
        per key), then delete the folded shards and stale temporary files. Returns the number of shards removed.
        ``files``: fold only these shards of the model's folder (a run folds the small shards it wrote itself).

        Safe beside a running writer: shards written after the listing are kept. Superseded failures are dropped.
        """
        folder = self.model_dir(model)
        own = self._own_shards(model)
        files = own if files is None else [f for f in files if f in set(own)]
        for tmp in folder.glob(".shard-*.tmp") if folder.is_dir() else []:
            try:
                if time.time() - tmp.stat().st_mtime > _STALE_TMP_S:
                    tmp.unlink(missing_ok=True)
            except FileNotFoundError:
                pass
        if len(files) <= 1:
            return 0
        table = self._query(files, _LATEST.format(src="{src}", extra=""), {"model": model})
        self.write_shard(model, table.select(STORE_SCHEMA.names).cast(STORE_SCHEMA))
        for f in files:
            f.unlink(missing_ok=True)
        return len(files)

    def _lock_file(self, model: str, params_sha256: str) -> Path:
        from kgprobe.warehouse import safe_value

        return self.root / "locks" / f"model={safe_value(model)}" / f"prompts-{params_sha256[:16]}.lock"

    @contextlib.contextmanager
    def claim(self, model: str, params_sha256: str, prompt_sha256s: Sequence[str], *, wait: bool = False,
              log: Callable[[str], None] | None = None, poll_s: float = 0.5) -> Iterator[set[str]]:
        """Hold the locks of the prompts ``prompt_sha256s`` of ``model`` with these sampling parameters while they
        are generated; yields the ones this caller holds: no other run (process or thread) generates them until it
        leaves the block, so it checks the store for their answers again and asks only what is still missing.

        A prompt's lock is the byte ``int(sha) % LOCK_BUCKETS`` of one file per model and parameters under
        ``<root>/locks/`` (:mod:`kgprobe.generation.locks`: a POSIX byte-range lock, as NFS implements them,
        released by the operating system when its process dies, even by ``kill -9``). Busy buckets are skipped, not
        waited for, so two runs with overlapping prompt sets each go on with what the other is not doing; with
        ``wait`` and nothing free, it waits for the first busy bucket while holding no other (no deadlock), and
        yields at least that one. The caller asks for the rest again later.

            >>> with store.claim("m", params.sha256(), [p.sha256() for p in prompts]) as mine:
            ...     ...  # generate the prompts in mine that the store still lacks
        """
        from kgprobe.generation import locks

        path = self._lock_file(model, params_sha256)
        buckets: dict[int, list[str]] = {}
        for sha in prompt_sha256s:
            buckets.setdefault(int(sha[:12], 16) % LOCK_BUCKETS, []).append(sha)
        held: list[int] = []

        def waiting() -> None:
            if log is not None:
                log(f"{model}: another run is generating some of these prompts now; waiting for it, then its stored "
                    "answers are reused")

        try:
            for bucket in sorted(buckets):
                if locks.try_lock(path, bucket):
                    held.append(bucket)
                elif wait and not held:
                    locks.lock(path, bucket, poll_s=poll_s, on_wait=waiting)
                    held.append(bucket)
            yield {sha for bucket in held for sha in buckets[bucket]}
        finally:
            for bucket in held:
                locks.unlock(path, bucket)

    # -- reading ------------------------------------------------------------------------------------------------------

    def _query(self, files: list[Path], sql: str, params: dict[str, Any], tables: Mapping[str, pa.Table] | None = None) -> pa.Table:
        con = _connection()
        names = []
        try:
            for name, table in {**(tables or {}), "store_rows": _load(files)}.items():
                con.register(name, table)
                names.append(name)
            return con.execute(sql.replace("{src}", "store_rows"), params).to_arrow_table()
        finally:
            for name in names:
                con.unregister(name)

    def _read(self, model: str, sql: str, params: dict[str, Any], tables: Mapping[str, pa.Table] | None = None, *,
              empty_ok: bool = False, only: Sequence[Path] | None = None) -> pa.Table | None:
        # A compaction may delete a listed shard before DuckDB opens it; list again and retry. A damaged shard (cut
        # short by a full disk or a copy, or with a readable footer and damaged pages) is set aside and the read
        # retried without it. ``only``: read these shards, not the model's listing; one of them gone raises
        # FileNotFoundError (its rows may be in a shard the caller has not listed).
        for attempt in range(4):
            files = self.shards(model) if only is None else list(only)
            if not files and not empty_ok:
                return None
            try:
                return self._query(files, sql, {"model": model, **params}, tables)
            except _READ_ERRORS:
                if attempt == 3:
                    raise
                if not all(f.exists() for f in files):
                    if only is not None:
                        raise FileNotFoundError(f"response store: a shard of {model!r} went away while read") from None
                    continue
                moved = self.quarantine_damaged(files, deep=True)
                if not moved:
                    raise
                if only is not None:
                    gone = {m.with_name(m.name.removeprefix("damaged-")) for m in moved}
                    only = [f for f in only if f not in gone]
        return None

    def quarantine_damaged(self, files: Sequence[Path] | None = None, *, deep: bool = False) -> list[Path]:
        """Set aside shards that are not readable Parquet (renamed ``damaged-<name>``, kept for a person to look at),
        with a warning that names each; their responses are missing from then on, so the next run generates exactly
        those again. A shard that meets an I/O error is read again and never set aside (:class:`StoreIOError` once
        the retries are spent). Returns the new paths. ``files``: the shards to check (default: every model's).
        ``deep``: read every page of every shard (what a failed query does), not only the footer."""
        import warnings

        files = list(files) if files is not None else sorted(self.root.glob("model=*/shard-*.parquet"))
        moved = []
        for f in files:
            if _cached(f):  # read whole before, unchanged since
                continue
            try:
                if deep:
                    _load([f])
                else:
                    _retrying(functools.partial(_footer, f), f)  # reading the footer is the check
            except FileNotFoundError:
                continue
            except StoreIOError:  # an I/O error through every retry is no proof of damage: keep the shard
                raise
            except Exception as exc:  # any unreadable footer or page: ArrowInvalid, OSError
                if not f.exists():
                    continue
                target = f.with_name(f"damaged-{f.name}")
                os.replace(f, target)
                moved.append(target)
                warnings.warn(f"response store: shard {f} is damaged ({exc}); set aside as {target.name}. Its "
                              "responses will be generated again by the next run.", RuntimeWarning, stacklevel=2)
        return moved

    def spent(self, model: str | None = None, *, run_id: str | None = None) -> float:
        """Dollars recorded as spent: by ``model`` over every run, or by every model in run ``run_id`` (both: that
        model in that run). Responses without a known cost count 0, and so do negative and NaN ones; a cost above
        :data:`~kgprobe.generation.cost.MAX_REQUEST_COST_USD` (infinity too) counts as that much, as
        :func:`~kgprobe.generation.cost.clamp_cost` records it (a row an older version stored from a provider's false
        usage cannot unlock a budget)."""
        from kgprobe.generation.cost import MAX_REQUEST_COST_USD

        if model is None and run_id is None:
            raise ValueError("spent() needs a model, a run id or both")
        files = self.shards(model) if model is not None else sorted(self.root.glob("model=*/shard-*.parquet"))
        if not files:
            return 0.0
        # always filtered on the stored name: a folder an older version wrote may hold another model's rows too
        conditions, params = ["TRUE"], {}
        if model is not None:
            conditions.append("model = $model")
            params["model"] = model
        if run_id is not None:
            conditions.append("run_id = $run")
            params["run"] = run_id
        params["most"] = MAX_REQUEST_COST_USD
        usd = "CASE WHEN cost IS NULL OR isnan(cost) OR cost <= 0 THEN 0 ELSE least(cost, $most) END"
        where = " AND ".join(conditions)
        table = self._query(files, f"SELECT coalesce(sum({usd}), 0) AS usd FROM {{src}} WHERE {where}", params)
        return float(table.column("usd")[0].as_py())

    def done_keys(self, model: str, params_sha256: str, *, only: Sequence[Path] | None = None
                  ) -> set[tuple[str, int]]:  # fmt: skip
        """``(prompt_sha256, sample_index)`` of every stored success of ``model`` with these sampling parameters.
        ``only``: of these shards alone (a run that has read the store reads what appeared since); FileNotFoundError
        when one of them is gone (a compaction folded it into a shard not in ``only``: read them all again)."""
        # every page of every shard is decoded when it is read, so a shard with a damaged page in any column is found
        # (and set aside) here, before the run decides what to generate, not later when the answers are read
        table = self._read(model, """
            SELECT DISTINCT prompt_sha256, sample_index FROM {src} AS t
            WHERE model = $model AND params_sha256 = $params AND error IS NULL""",
                           {"params": params_sha256}, only=only)
        if table is None:
            return set()
        return set(zip(table.column("prompt_sha256").to_pylist(), table.column("sample_index").to_pylist()))

    def latest(self, model: str, params_sha256: str | None = None) -> pa.Table:
        """The logical view of a model's responses (:data:`STORE_SCHEMA`): one row per key, the latest success or
        else the latest failure; optionally only those made with one set of sampling parameters."""
        extra, params = ("AND params_sha256 = $params", {"params": params_sha256}) if params_sha256 else ("", {})
        table = self._read(model, _LATEST.format(src="{src}", extra=extra), params)
        if table is None:
            return STORE_SCHEMA.empty_table()
        return table.select(STORE_SCHEMA.names).cast(STORE_SCHEMA)

    def rows_for(self, model: str, prompts: Sequence[Prompt], params: SamplingParams) -> pa.Table:
        """One row per (prompt item, sample index) in prompt order (:data:`ROW_SCHEMA`), with the stored response:
        the latest success, else the latest failure (``text`` null, ``error`` set). A sample never attempted gets
        ``error`` = :data:`MISSING_ERROR`, so an item is never dropped silently."""
        items = pa.table({
            "ord": pa.array(range(len(prompts)), pa.int64()),
            "item_id": pa.array([p.item_id for p in prompts], pa.string()),
            "prompt_template_id": pa.array([p.template_id for p in prompts], pa.string()),
            "prompt": pa.array([p.text for p in prompts], pa.string()),
            "prompt_sha256": pa.array([p.sha256() for p in prompts], pa.string()),
        })
        latest = _LATEST.format(src="{src}", extra="AND params_sha256 = $params AND prompt_sha256 IN (SELECT prompt_sha256 FROM items)")
        sql = f"""
            WITH latest AS ({latest}),
            grid AS (SELECT items.*, CAST(s.range AS INTEGER) AS sample_index FROM items CROSS JOIN range($n) s)
            SELECT substr(sha256(concat_ws('|', $model, g.prompt_sha256, $params, CAST(g.sample_index AS VARCHAR))), 1, 16)
                       AS response_id,
                   g.item_id, $model AS model, l.backend, g.prompt_template_id, g.prompt, g.prompt_sha256,
                   $params_json AS sampling_params, $params AS params_sha256, g.sample_index, l.text, l.finish_reason,
                   l.tokens_in, l.tokens_out, l.latency_s, l.cost,
                   CASE WHEN l.prompt_sha256 IS NULL THEN $missing ELSE l.error END AS error,
                   l.retries, l.run_id, l.created_at, l.logprobs
            FROM grid g LEFT JOIN latest l ON l.prompt_sha256 = g.prompt_sha256 AND l.sample_index = g.sample_index
            ORDER BY g.ord, g.sample_index"""
        params_ = {"params": params.sha256(), "params_json": params.to_json(), "n": params.n, "missing": MISSING_ERROR}
        table = self._read(model, sql, params_, {"items": items}, empty_ok=True)
        return table.select(ROW_SCHEMA.names).cast(ROW_SCHEMA)


def _fsync_dir(folder: Path) -> None:
    # Makes the rename durable across a power loss; not possible on every platform, and not needed for a kill.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
