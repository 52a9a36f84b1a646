"""LanceDB tables of the cortex (seed 001 §5): blocks, RAPTOR clusters, antechamber, archive.

- cortex_blocks: migrated holographic blocks; live zones verbatim, dead zones summarised,
  universal and native vectors as float32 (seed 001 §5.3, §6.4).
- cortex_clusters: RAPTOR nodes, level 1 branch, 2 trunk, 3 canopy (seed 001 §5.4).
- antechamber: coherent-but-orthogonal questions (seed 001 §5.6.3).
- archive: blocks untouched for a long time; still searchable by universal vector, and
  promoted back to cortex_blocks when accessed (seed 001 §5.5.1).

The location is a LanceDB URI (a local path, or s3:// and friends), never assumed local.
A write the storage refuses (read-only, full, not permitted, past the process's file-size
limit) raises CortexWriteError, whose one line names the location, the cause and what to
do; a table whose creation was cut short (no committed version) is created again on next
use.
"""

from __future__ import annotations

import errno
import json
import os
import re
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from agent.config import Settings
from agent.errors import CogdError, InputError

if TYPE_CHECKING:
    import pyarrow as pa

BLOCKS = "cortex_blocks"
CLUSTERS = "cortex_clusters"
ANTECHAMBER = "antechamber"
ARCHIVE = "archive"
TABLES = (BLOCKS, CLUSTERS, ANTECHAMBER, ARCHIVE)
# pyarrow (about a second to import) is imported where a schema or a table is built: a
# process that only checks whether the cortex exists (`cogd recall`, `cogd hook` before the
# first night cycle) never loads it


def _ts() -> pa.DataType:
    import pyarrow as pa

    return pa.timestamp("us", tz="UTC")


def cortex_uri(settings: Settings) -> str:
    """[cortex] uri, or DATA_DIR/cortex."""
    return settings.cortex.uri or str(Path(settings.data_dir) / "cortex")


# What to do when the cortex cannot be written, by the OS error behind it. Other errors
# pass through unchanged: they are not the storage's fault.
REMEDIES = {
    errno.EROFS: "make it writable (remount its filesystem read-write)",
    errno.ENOSPC: "free space on its filesystem",
    errno.EDQUOT: "free space or raise the disk quota",
    errno.EFBIG: "raise the file-size limit cogd runs under (ulimit -f)",
    errno.EACCES: "give the user cogd runs as write access to it",
    errno.EPERM: "give the user cogd runs as write access to it",
    errno.EIO: "check the disk it is on",
}
# LanceDB raises RuntimeError/ValueError("lance error: LanceError(IO): Read-only file system
# (os error 30), ...") for the Rust side's I/O errors, and OSError for its own mkdir
_OS_ERROR = re.compile(r"\(os error (\d+)\)")


def os_error_code(exc: BaseException) -> int | None:
    """The errno behind a failed LanceDB call (an OSError, or lance's "(os error N)")."""
    seen: BaseException | None = exc
    for _ in range(8):  # the exception and what it was raised from
        if seen is None:
            break
        if isinstance(seen, OSError) and seen.errno:
            return int(seen.errno)
        found = _OS_ERROR.search(str(seen))
        if found:
            return int(found.group(1))
        seen = seen.__cause__ or seen.__context__
    return None


class CortexWriteError(CogdError):
    """The cortex cannot be written: read-only, full, not permitted, failing disk."""

    def __init__(self, uri: str, code: int, *, during: str = "", then: str = "") -> None:
        self.uri, self.code, self.during, self.then = uri, code, during, then
        remedy = REMEDIES.get(code, "check the storage it is on")
        super().__init__(
            (f"{during}: " if during else "")
            + f"cannot write the LanceDB cortex at {uri}: {os.strerror(code).lower()} "
            f"(errno {code}). {remedy[0].upper()}{remedy[1:]}"
            + (f", then {then}" if then else "") + ".")

    def within(self, during: str, then: str) -> CortexWriteError:
        """The same error, saying what was being done and how to carry on."""
        return CortexWriteError(self.uri, self.code, during=during, then=then)


class CortexOpenError(CogdError):
    """The cortex's store cannot be opened: a missing bucket, a wrong endpoint or keys."""

    def __init__(self, uri: str, exc: BaseException) -> None:
        text = " ".join(str(exc).split())
        code = re.search(r"<Code>([^<]+)</Code>", text)  # an S3 error reply's code
        reason = code.group(1) if code else text[:240]
        super().__init__(
            f"cannot open the LanceDB cortex at {uri}: {reason}. Check [cortex] uri and "
            "[cortex] storage_options (endpoint, region, allow_http) and the store's "
            "credentials (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or the like)")


def _vec(dim: int) -> pa.DataType:
    import pyarrow as pa

    return pa.list_(pa.float32(), dim)


def block_schema(universal_dim: int, native_dim: int, archive: bool = False) -> pa.Schema:
    import pyarrow as pa

    ts = _ts()
    fields = [
        ("block_id", pa.string()), ("kind", pa.string()), ("session_id", pa.string()),
        ("user_id", pa.string()), ("user_tier", pa.string()), ("run_id", pa.int64()),
        ("prose_text", pa.string()), ("live_zones_text", pa.string()), ("prose", pa.string()),
        ("universal", _vec(universal_dim)), ("native", _vec(native_dim)),
        ("native_model", pa.string()), ("flux_metrics", pa.string()),
        ("salience_scores", pa.string()), ("composite", pa.float64()),
        ("coherence_gain", pa.float64()), ("ties_merge_weight", pa.float64()),
        ("citations", pa.string()), ("preoccupation_centroid_id", pa.string()),
        ("parent_metablock_id", pa.string()), ("continues_from", pa.string()),
        ("continued_by", pa.string()), ("session_continuity_flag", pa.bool_()),
        ("arc_start_time", ts), ("arc_end_time", ts), ("created_at", ts),
        ("migrated_at", ts), ("last_accessed", ts), ("vector_history", pa.string()),
    ]
    if archive:
        fields.append(("archived_at", ts))
    return pa.schema(fields)


def cluster_schema(universal_dim: int) -> pa.Schema:
    import pyarrow as pa

    ts = _ts()
    return pa.schema([
        ("cluster_id", pa.string()), ("level", pa.int32()), ("parent_cluster_id", pa.string()),
        ("centroid", _vec(universal_dim)), ("summary_vector", _vec(universal_dim)),
        ("summary_text", pa.string()), ("summarizer", pa.string()),
        ("member_ids", pa.string()), ("member_count", pa.int32()), ("leaf_count", pa.int32()),
        ("run_id", pa.int64()), ("created_at", ts),
    ])


def antechamber_schema(universal_dim: int) -> pa.Schema:
    import pyarrow as pa

    ts = _ts()
    return pa.schema([
        ("entry_id", pa.string()), ("implicit_question_embedding", _vec(universal_dim)),
        ("question_text", pa.string()), ("source_content_summary", pa.string()),
        ("source_session_id", pa.string()), ("source_block_id", pa.string()),
        ("source_timestamp", ts), ("cluster_id", pa.string()),
        ("cluster_density", pa.float64()), ("created_at", ts),
        ("promoted_to_centroid", pa.bool_()), ("promotion_date", ts),
        ("centroid_id", pa.string()),
    ])


def _ids_sql(ids: Iterable[str]) -> str:
    """A SQL IN list of uuids (validated: the filter string is never built from free text)."""
    checked = []
    for i in ids:
        try:
            checked.append(str(uuid.UUID(str(i))))
        except ValueError:
            raise InputError(f"not a block id: {i!r}") from None
    return ", ".join(f"'{c}'" for c in checked) or "''"


@dataclass(frozen=True)
class Hit:
    id: str
    content: str
    similarity: float
    archived: bool


class LanceCortex:
    """One LanceDB database holding the four cortex tables."""

    def __init__(self, uri: str, universal_dim: int, native_dim: int,
                 read_consistency_s: float | None = None,
                 storage_options: dict[str, str] | None = None) -> None:
        # lance logs (Rust) go to stderr at WARN by default: keep the CLI's stderr for cogd
        os.environ.setdefault("LANCEDB_LOG", "error")
        import lancedb

        self.uri = uri
        self.universal_dim = universal_dim
        self.native_dim = native_dim
        interval = None if read_consistency_s is None else timedelta(seconds=read_consistency_s)
        with self._writing():  # a local directory is created if missing
            # storage_options: [cortex] storage_options (an object store's endpoint, region,
            # allow_http, ...); LanceDB also reads AWS_* and the like from the environment
            try:
                self.db = lancedb.connect(uri, read_consistency_interval=interval,
                                          storage_options=storage_options or None)
            except (OSError, RuntimeError, ValueError) as exc:
                if "://" not in uri or os_error_code(exc) in REMEDIES:
                    raise
                raise CortexOpenError(uri, exc) from exc
        self._tables: dict[str, Any] = {}
        self._consistency_s = read_consistency_s
        self._listed: tuple[set[str], float] | None = None  # (_names, when listed)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Turn a storage failure (read-only, full, ...) into CortexWriteError."""
        try:
            yield
        except CortexWriteError:
            raise
        except Exception as exc:
            code = os_error_code(exc)
            if code not in REMEDIES:
                raise
            raise CortexWriteError(self.uri, code) from exc

    @classmethod
    def from_settings(cls, settings: Settings, read_consistency_s: float | None = None
                      ) -> LanceCortex:
        emb = settings.embedding
        return cls(cortex_uri(settings), emb.universal_dim, emb.native_dim, read_consistency_s,
                   dict(settings.cortex.storage_options))

    def schema(self, name: str) -> pa.Schema:
        if name == BLOCKS:
            return block_schema(self.universal_dim, self.native_dim)
        if name == ARCHIVE:
            return block_schema(self.universal_dim, self.native_dim, archive=True)
        if name == CLUSTERS:
            return cluster_schema(self.universal_dim)
        return antechamber_schema(self.universal_dim)

    def _names(self) -> set[str]:
        """The tables in the database. Listed again after read_consistency_s (the interval
        LanceDB re-reads a table's version at): on object storage a listing is a request,
        and every search asks whether the archive exists. Without an interval (None, or 0:
        every read checks), listed each time."""
        now = time.monotonic()
        if (self._listed is not None and self._consistency_s
                and now - self._listed[1] < self._consistency_s):
            return self._listed[0]
        names = set(self.db.list_tables().tables)
        self._listed = (names, now)
        return names

    def exists(self, name: str) -> bool:
        return name in self._tables or name in self._names()

    def table(self, name: str) -> Any:
        """The table, created empty with its schema the first time it is needed."""
        if name not in self._tables:
            tbl = None
            if name in self._names():
                try:
                    tbl = self.db.open_table(name)
                except ValueError as exc:
                    # listed but never committed: its creation was cut short (disk full,
                    # crash); it holds no rows, so it is created again below
                    if "not found" not in str(exc):
                        raise
            if tbl is None:
                with self._writing():
                    tbl = self.db.create_table(name, schema=self.schema(name), exist_ok=True)
            self._tables[name] = tbl
        return self._tables[name]

    def count(self, name: str) -> int:
        return int(self.table(name).count_rows()) if self.exists(name) else 0

    def counts(self) -> dict[str, int]:
        return {name: self.count(name) for name in TABLES}

    def rows(self, name: str, where: str | None = None,
             columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Every row (or those matching `where`), as dicts."""
        if not self.exists(name):
            return []
        tbl = self.table(name)
        n = int(tbl.count_rows())
        if n == 0:
            return []
        q = tbl.search()
        if where:
            q = q.where(where)
        if columns:
            q = q.select(list(columns))
        return list(q.limit(n).to_list())

    # --- writes -------------------------------------------------------------
    def upsert(self, name: str, rows: Sequence[dict[str, Any]], key: str) -> int:
        """Insert or replace rows by key (merge_insert): re-running never duplicates."""
        if not rows:
            return 0
        tbl = self.table(name)
        import pyarrow as pa

        data = pa.Table.from_pylist(list(rows), schema=self.schema(name))
        with self._writing():
            (tbl.merge_insert(key).when_matched_update_all().when_not_matched_insert_all()
             .execute(data))
        return len(rows)

    def replace(self, name: str, rows: Sequence[dict[str, Any]]) -> int:
        """Overwrite a derived table (the RAPTOR tree is rebuilt each night)."""
        import pyarrow as pa

        data = pa.Table.from_pylist(list(rows), schema=self.schema(name))
        with self._writing():
            self._tables[name] = self.db.create_table(name, data=data, mode="overwrite")
        return len(rows)

    def delete(self, name: str, ids: Sequence[str], key: str) -> None:
        if ids and self.exists(name):
            tbl = self.table(name)
            with self._writing():
                tbl.delete(f"{key} IN ({_ids_sql(ids)})")

    def maintain(self, min_index_rows: int) -> dict[str, Any]:
        """Compact (optimize) and, once the blocks table is large enough, index it."""
        done: dict[str, Any] = {"indexed": False}
        for name in TABLES:
            if self.exists(name) and self.count(name):
                tbl = self.table(name)
                with self._writing():
                    tbl.optimize()
        if self.count(BLOCKS) >= min_index_rows:
            from lancedb.index import BTree, IvfHnswSq

            tbl = self.table(BLOCKS)
            have = {getattr(i, "columns", [None])[0] for i in tbl.list_indices()}
            if "universal" not in have:
                with self._writing():
                    tbl.create_index("universal", config=IvfHnswSq(distance_type="cosine"))
                    tbl.create_index("block_id", config=BTree())
                done["indexed"] = True
        return done

    # --- archive (seed 001 §5.5.1) ------------------------------------------
    def archive_untouched(self, before: datetime, now: datetime) -> list[str]:
        """Move blocks whose last access (or end, if never accessed) is before `before`."""
        if not self.exists(BLOCKS):
            return []
        stamp = before.strftime("%Y-%m-%dT%H:%M:%S")
        rows = self.rows(BLOCKS, where=(
            f"(last_accessed IS NOT NULL AND last_accessed < timestamp '{stamp}') OR "
            f"(last_accessed IS NULL AND arc_end_time < timestamp '{stamp}')"))
        if not rows:
            return []
        for r in rows:
            r["archived_at"] = now
        self.upsert(ARCHIVE, rows, "block_id")
        ids = [r["block_id"] for r in rows]
        self.delete(BLOCKS, ids, "block_id")
        return ids

    # --- reads ----------------------------------------------------------------
    def search_blocks(self, vector: Sequence[float], k: int, column: str = "universal",
                      include_archive: bool = True, user_id: str | None = None) -> list[Hit]:
        """Nearest blocks by cosine; the archive is searched by universal vector too.
        `user_id`: only that user's blocks and blocks of no user (a prefilter)."""
        hits: list[Hit] = []
        names = [BLOCKS] + ([ARCHIVE] if include_archive and column == "universal" else [])
        scope = None
        if user_id is not None:
            uid = str(uuid.UUID(str(user_id)))  # a uuid, so it is safe inside the filter
            scope = f"user_id = '{uid}' OR user_id IS NULL"
        for name in names:
            if not self.exists(name) or self.count(name) == 0:
                continue
            search = (self.table(name).search(list(vector), vector_column_name=column)
                      .distance_type("cosine"))
            if scope is not None:
                search = search.where(scope, prefilter=True)
            res = (search.select(["block_id", "prose_text", "_distance"])
                   .limit(k).to_list())
            hits.extend(Hit(r["block_id"], r["prose_text"], 1.0 - float(r["_distance"]),
                            name == ARCHIVE) for r in res)
        hits.sort(key=lambda h: -h.similarity)
        return hits[:k]

    def search_clusters(self, vector: Sequence[float], level: int, k: int) -> list[dict[str, Any]]:
        if not self.exists(CLUSTERS) or self.count(CLUSTERS) == 0:
            return []
        res = (self.table(CLUSTERS).search(list(vector), vector_column_name="centroid")
               .distance_type("cosine").where(f"level = {int(level)}", prefilter=True)
               .select(["cluster_id", "level", "parent_cluster_id", "summary_text",
                        "summarizer", "member_ids", "member_count", "leaf_count",
                        "_distance"])
               .limit(k).to_list())
        out = []
        for r in res:
            r["similarity"] = 1.0 - float(r.pop("_distance"))
            r["member_ids"] = json.loads(r["member_ids"])
            out.append(r)
        return out

    def get_blocks(self, ids: Sequence[str]) -> list[tuple[dict[str, Any], bool]]:
        """(row, archived) for each id found in cortex_blocks or the archive."""
        found: list[tuple[dict[str, Any], bool]] = []
        if not ids:
            return found
        cond = f"block_id IN ({_ids_sql(ids)})"
        for name in (BLOCKS, ARCHIVE):
            found.extend((r, name == ARCHIVE) for r in self.rows(name, where=cond))
        return found

    def vectors(self, name: str, id_col: str, vec_col: str,
                where: str | None = None) -> tuple[list[str], npt.NDArray[np.float32]]:
        rows = self.rows(name, where=where, columns=[id_col, vec_col])
        if not rows:
            return [], np.zeros((0, self.universal_dim), dtype=np.float32)
        return ([r[id_col] for r in rows],
                np.asarray([r[vec_col] for r in rows], dtype=np.float32))
