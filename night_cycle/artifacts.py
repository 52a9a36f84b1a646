"""One directory per run under DATA_DIR/night_cycle: stage artifacts and the morning brief.

Stages 1-5 compute in memory and hand their output to the next stage through a gzip
JSON artifact in `work/`, whose sha256 the stage's checkpoint records; `--resume` reads
it back instead of recomputing (an LLM summary is not reproducible). An artifact that is
missing or does not match its hash is treated as absent: the run restarts from stage 1,
which is safe because stages 1-5 change nothing that a re-run would duplicate.
The brief is written once and never overwritten; `work/` is removed when the run is done.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

from agent.db.embedded import private_dir


class RunDir:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.work = path / "work"

    @classmethod
    def for_run(cls, data_dir: Path, run_id: int, started_at: datetime) -> RunDir:
        return cls(Path(data_dir) / "night_cycle" / f"{started_at:%Y-%m-%d}_run{run_id:05d}")

    def _artifact(self, stage: int) -> Path:
        return self.work / f"stage{stage}.json.gz"

    def write_artifact(self, stage: int, data: Any) -> str:
        """Write atomically; return the sha256 of the bytes written."""
        _private_dirs(self.path.parent, self.path, self.work)
        raw = gzip.compress(json.dumps(data, separators=(",", ":")).encode(), mtime=0)
        tmp = self._artifact(stage).with_suffix(".tmp")
        tmp.write_bytes(raw)
        os.replace(tmp, self._artifact(stage))
        return hashlib.sha256(raw).hexdigest()

    def read_artifact(self, stage: int, sha256: str | None) -> Any | None:
        path = self._artifact(stage)
        if sha256 is None or not path.is_file():
            return None
        raw = path.read_bytes()
        if hashlib.sha256(raw).hexdigest() != sha256:
            return None
        return json.loads(gzip.decompress(raw))

    def write_once(self, name: str, text: str) -> Path | None:
        """Create `name` in the run directory; None if it already exists (never overwrite)."""
        _private_dirs(self.path.parent, self.path)
        target = self.path / name
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # conversation text
        except FileExistsError:
            return None
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        return target

    def drop_work(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)


def _private_dirs(*dirs: Path) -> None:
    """night_cycle/ and its runs hold conversation text (artifacts, morning briefs)."""
    for d in dirs:
        private_dir(d)
