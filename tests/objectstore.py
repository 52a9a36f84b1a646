"""A local S3-compatible server for the object-store cortex tests: moto's server mode
(`moto[server]`, the dev extra), on 127.0.0.1 and a free port, with one bucket.

LanceDB talks to it as to any S3 endpoint: `storage_options` carry the endpoint, the
region, allow_http and the (moto-accepted, fake) keys; `env` gives the same as the AWS_*
variables LanceDB also reads, for a cogd process started by a test.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tests.conftest import free_port

REGION = "us-east-1"
KEY_ID, SECRET = "cogd-test", "cogd-test-secret"  # moto accepts any


@dataclass(frozen=True)
class S3:
    endpoint: str
    bucket: str

    def uri(self, prefix: str) -> str:
        return f"s3://{self.bucket}/{prefix}"

    @property
    def storage_options(self) -> dict[str, str]:
        """[cortex] storage_options for this server."""
        return {"endpoint": self.endpoint, "region": REGION, "allow_http": "true",
                "aws_access_key_id": KEY_ID, "aws_secret_access_key": SECRET}

    @property
    def env(self) -> dict[str, str]:
        """The same, as a cogd process's environment (COGD_CORTEX__STORAGE_OPTIONS__*)."""
        return {f"COGD_CORTEX__STORAGE_OPTIONS__{k.upper()}": v
                for k, v in self.storage_options.items()}

    def client(self) -> Any:
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name=REGION,
                            aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET)

    def keys(self, prefix: str) -> list[str]:
        """Every object under `prefix/` in the bucket."""
        pages = self.client().get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=prefix + "/")
        return [o["Key"] for page in pages for o in page.get("Contents", [])]


@contextmanager
def s3_server(bucket: str = "cogd-cortex") -> Iterator[S3]:
    """moto's S3 server in a thread of this process, with `bucket` created."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        s3 = S3(f"http://127.0.0.1:{port}", bucket)
        s3.client().create_bucket(Bucket=bucket)
        yield s3
    finally:
        server.stop()
