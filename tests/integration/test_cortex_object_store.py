"""The cortex on object storage (issue 43 item 4): `[cortex] uri = "s3://bucket/prefix"`
against a real S3-compatible server (moto's server mode, tests/objectstore.py). The night
cycle writes its blocks there, recall reads them back from there, and nothing of the
cortex lands in the local data directory."""

from __future__ import annotations

import psycopg
import pytest

from agent.config import Settings
from agent.cortex.lance import BLOCKS, CortexOpenError, LanceCortex
from agent.runtime import Runtime
from tests.integration.test_cortex import QUESTION, _hawking_block, _night
from tests.objectstore import s3_server


@pytest.mark.slow  # the local embedder, a night or two processes: 30-60 s
def test_the_night_cycle_writes_the_cortex_to_s3_and_recall_reads_it_back(
    settings: Settings, db_url: str,
) -> None:
    with s3_server() as s3:
        settings.cortex.uri = s3.uri("agent/cortex")
        settings.cortex.storage_options = s3.storage_options
        result = _night(settings, db_url)
        migrated = result["stages"]["7"]["migrated"]
        assert migrated > 0

        # the tables are objects in the bucket, under the prefix; none on local disk
        keys = s3.keys("agent/cortex")
        assert any(k.startswith(f"agent/cortex/{BLOCKS}.lance/_versions/") for k in keys)
        assert any(k.startswith(f"agent/cortex/{BLOCKS}.lance/data/") for k in keys)
        assert not (settings.data_dir / "cortex").exists()

        # a second handle (as another process would open it) reads what the night wrote
        cortex = LanceCortex.from_settings(settings)
        assert cortex.count(BLOCKS) == migrated
        block = _hawking_block(cortex)

        # recall (the runtime's recaller, as `cogd recall` and the loop build it) finds the
        # block through the object store, and reconsolidation writes back to it
        recaller = Runtime(settings).recaller()
        with psycopg.connect(db_url, autocommit=True) as conn:
            out = recaller.recall(conn, QUESTION, log=False)
        assert f"cortex:{block['block_id']}" in [i.id for i in out.result.items]
        assert block["block_id"] in {e["block_id"] for e in out.cortex_events}
        healed = LanceCortex.from_settings(settings).get_blocks([block["block_id"]])[0][0]
        assert healed["last_accessed"] is not None  # written through S3 by recall

        # a missing bucket: one line naming it for the writer, and recall goes on without
        # the cortex (never a silent local directory instead)
        settings.cortex.uri = "s3://no-such-bucket/cortex"
        with pytest.raises(CortexOpenError, match=r"s3://no-such-bucket/cortex: NoSuchBucket"):
            LanceCortex.from_settings(settings)
        assert Runtime(settings).cortex.search([0.1] * 384, 5) == []
        assert not (settings.data_dir / "cortex").exists()
