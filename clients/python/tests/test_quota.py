"""A workspace quota (--quota-bytes, --quota-files) seen through the client: its exception and metadata."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from filetools import errors

from conftest import start_daemon


def test_a_write_past_the_quota_raises_quota_exceeded_with_usage_and_limit(
    tmp_path: Path, client_kind: Any
) -> None:
    with start_daemon(tmp_path, "--quota-bytes", "1KiB", "--quota-files", "3") as daemon:
        with client_kind(daemon.address) as client:
            client.create_workspace("q")
            client.write_text("q", "a.txt", "a" * 1000)
            with pytest.raises(errors.QuotaExceeded) as refused:
                client.write_text("q", "b.txt", "b" * 100)
            assert isinstance(refused.value, errors.ResourceExhausted)
            assert refused.value.reason == "QUOTA_EXCEEDED"
            assert refused.value.metadata["usage_bytes"] == "1000"
            assert refused.value.metadata["limit_bytes"] == "1024"
            assert refused.value.metadata["limit_files"] == "3"
            assert refused.value.metadata["added_bytes"] == "100"
            assert "/b.txt" in str(refused.value)
            # Shrinking is always allowed; then the new file fits.
            client.write_text("q", "a.txt", "a")
            client.write_text("q", "b.txt", "b" * 100)
