"""The S3 calls of an S3 state: get, conditional put, list and delete, each counted, and the
one place botocore's errors are translated into state errors."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from schemas.text import folded
from state.errors import StateError, StateForbidden, StateUnavailable

# What credentials need, told with every request S3 refuses.
S3_NEEDS = (
    "reading the state takes s3:GetObject and s3:ListBucket on its prefix; changing it, "
    "s3:PutObject and s3:DeleteObject too"
)

# A conditional write S3 refused: another writer got there first (or the condition no longer
# holds). Codes and HTTP statuses both, as S3-compatible stores answer either.
_REFUSED = {"PreconditionFailed", "ConditionalRequestConflict", "412", "409"}


class S3Objects:
    """The objects of one bucket, through one boto3 client (standard retry mode)."""

    def __init__(
        self, bucket: str, where: str, *, region: str | None, endpoint_url: str | None
    ) -> None:
        import boto3
        import botocore.config
        import botocore.exceptions

        self._errors = botocore.exceptions
        config = botocore.config.Config(
            retries={"mode": "standard", "max_attempts": 5}, connect_timeout=10, read_timeout=60
        )
        self._client = boto3.client(
            "s3", region_name=region, endpoint_url=endpoint_url, config=config
        )
        self.bucket, self._where = bucket, where
        self.bytes_written = 0
        self.requests: Counter[str] = Counter()

    @contextmanager
    def calling(self, what: str, *, writes: bool = False) -> Iterator[None]:
        """S3's errors as state errors. Only a call that `writes` may leave a change made but
        unrecorded; a read (`show`, `state list`, a plan's look) says only to run it again."""
        try:
            yield
        except self._errors.ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code == "NoSuchBucket":
                raise StateError(f"the S3 bucket {self.bucket} does not exist ({what})") from None
            if code in ("AccessDenied", "Forbidden", "403"):
                raise StateForbidden(
                    f"S3 state at {self._where}: {what}: {folded(str(exc))}", S3_NEEDS
                ) from None
            raise StateError(f"S3 state at {self._where}: {what}: {folded(str(exc))}") from None
        except self._errors.BotoCoreError as exc:
            then = "the change in flight may not be recorded. Run" if writes else "run"
            raise StateUnavailable(
                f"cannot reach the S3 state at {self._where} ({what}): {folded(str(exc))}; {then} the "
                "command again once S3 answers"
            ) from None

    def _refused(self, exc: Exception) -> bool:
        if not isinstance(exc, self._errors.ClientError):
            return False
        error = exc.response.get("Error", {})
        status = str(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", ""))
        return str(error.get("Code", "")) in _REFUSED or status in _REFUSED

    def get(self, key: str, *, writing: bool = False) -> tuple[bytes, str] | None:
        """The object's bytes and ETag, None when there is no such key (`writing`: read to
        settle a write of it)."""
        self.requests["GET"] += 1
        with self.calling(f"reading {key}", writes=writing):
            try:
                answer = self._client.get_object(Bucket=self.bucket, Key=key)
            except self._errors.ClientError as exc:
                if str(exc.response.get("Error", {}).get("Code", "")) in ("NoSuchKey", "404"):
                    return None
                raise
            return answer["Body"].read(), str(answer["ETag"])

    def put(
        self, key: str, body: bytes, *, if_none_match: bool = False, if_match: str | None = None
    ) -> str | None:
        """Write ``key``; its new ETag, or None when the condition failed (412/409) and the
        key holds something else."""
        conditions: dict[str, str] = {}
        if if_none_match:
            conditions["IfNoneMatch"] = "*"
        if if_match is not None:
            conditions["IfMatch"] = if_match
        self.requests["PUT"] += 1
        self.bytes_written += len(body)
        with self.calling(f"writing {key}", writes=True):
            try:
                answer = self._client.put_object(
                    Bucket=self.bucket, Key=key, Body=body, **conditions
                )
            except self._errors.ClientError as exc:
                if not self._refused(exc):
                    raise
            else:
                return str(answer["ETag"])
        # Refused: another writer, or this very write whose answer was lost (a 500 or a cut
        # connection after S3 wrote it) and which botocore sent again. The key holding exactly
        # these bytes is that write: S3 has it, and what it holds is what this writer meant.
        found = self.get(key, writing=True)
        return found[1] if found is not None and found[0] == body else None

    def keys(self, prefix: str, after: str = "", *, first: bool = False) -> list[str]:
        """The keys under ``prefix`` after ``after``, in order; ``first``: only the first."""
        keys: list[str] = []
        bounds: dict[str, Any] = {"MaxKeys": 1} if first else {}
        if after:  # (an empty StartAfter is not sent)
            bounds["StartAfter"] = after
        token: dict[str, str] = {}
        while True:
            self.requests["LIST"] += 1
            with self.calling(f"listing {prefix}"):
                page = self._client.list_objects_v2(
                    Bucket=self.bucket, Prefix=prefix, **bounds, **token
                )
            keys += [item["Key"] for item in page.get("Contents", [])]
            if first or not page.get("IsTruncated"):
                return keys
            token = {"ContinuationToken": page["NextContinuationToken"]}

    def delete(self, keys: list[str]) -> None:
        for start in range(0, len(keys), 1000):
            self.requests["DELETE"] += 1
            with self.calling("removing folded journal entries"):
                self._client.delete_objects(
                    Bucket=self.bucket,
                    Delete={"Objects": [{"Key": k} for k in keys[start : start + 1000]]},
                )

    def close(self) -> None:
        self._client.close()


__all__ = ["S3Objects"]
