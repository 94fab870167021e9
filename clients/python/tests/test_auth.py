"""Bearer tokens and TLS against a daemon started with --tokens and --tls-* (each test once per client kind)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from filetools import errors

from conftest import start_daemon

TOKENS = {"tokens": [{"name": "crew-a", "token": "s3cret", "workspaces": ["reports", "team-*"]}]}


def test_a_token_reaches_its_workspaces_only(tmp_path: Path, client_kind: Any) -> None:
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    with start_daemon(tmp_path, "--tokens", str(tokens)) as daemon:
        with client_kind(daemon.address, token="s3cret") as crew:
            crew.create_workspace("team-blue")
            crew.write_text("team-blue", "notes.md", "hello\n")
            assert crew.read_text("team-blue", "notes.md").text == "hello\n"
            with pytest.raises(errors.WorkspaceNotAllowed) as denied:
                crew.create_workspace("finance")
            assert denied.value.code.name == "PERMISSION_DENIED"
            assert isinstance(denied.value, errors.PermissionDenied)

        for token in (None, "wrong"):
            with client_kind(daemon.address, token=token) as stranger:
                with pytest.raises(errors.Unauthenticated) as refused:
                    stranger.list_workspaces()
                assert refused.value.reason == "UNAUTHENTICATED"


def _self_signed(directory: Path, name: str) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that is its own CA, and its key (openssl, ECDSA P-256)."""
    cert, key = directory / f"{name}.pem", directory / f"{name}.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", f"/CN={name}",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def test_mutual_tls(tmp_path: Path, client_kind: Any) -> None:
    server_cert, server_key = _self_signed(tmp_path, "server")
    client_cert, client_key = _self_signed(tmp_path, "client")
    flags = ("--tls-cert", str(server_cert), "--tls-key", str(server_key), "--tls-client-ca", str(client_cert))
    with start_daemon(tmp_path, *flags) as daemon:
        pems = {
            "root_certificates": server_cert.read_bytes(),
            "certificate_chain": client_cert.read_bytes(),
            "private_key": client_key.read_bytes(),
        }
        with client_kind(daemon.address, **pems) as trusted:
            assert trusted.create_workspace("secure").id == "secure"

        without_certificate = {"root_certificates": pems["root_certificates"]}
        with client_kind(daemon.address, **without_certificate) as anonymous:
            with pytest.raises(errors.Unavailable):
                anonymous.list_workspaces(timeout=10)
        with client_kind(daemon.address) as plaintext:
            with pytest.raises(errors.Unavailable):
                plaintext.list_workspaces(timeout=10)
