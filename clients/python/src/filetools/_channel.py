"""How both clients connect: the credentials and the per-call metadata."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import grpc

try:  # The caller's OpenTelemetry API, when its process has one (see with_trace_context).
    from opentelemetry import propagate as _propagate
except ImportError:
    _propagate = None  # type: ignore[assignment]

#: The address used when none is given: $FILETOOLS_ADDRESS, else the daemon's default.
DEFAULT_ADDRESS = "127.0.0.1:7447"

Metadata = tuple[tuple[str, str | bytes], ...]


@dataclass(frozen=True)
class Connection:
    address: str
    #: None for a plaintext channel.
    credentials: grpc.ChannelCredentials | None
    #: Sent with every call (the bearer token, when there is one).
    metadata: Metadata
    options: Sequence[tuple[str, Any]]


def connection(
    address: str | None,
    token: str | None,
    tls: bool,
    root_certificates: bytes | None,
    private_key: bytes | None,
    certificate_chain: bytes | None,
    options: Sequence[tuple[str, Any]],
) -> Connection:
    """TLS when asked for or when any PEM is given (the system roots when no root_certificates)."""
    pems = (root_certificates, private_key, certificate_chain)
    credentials = (
        grpc.ssl_channel_credentials(root_certificates, private_key, certificate_chain)
        if tls or any(pem is not None for pem in pems)
        else None
    )
    metadata: Metadata = (("authorization", f"Bearer {token}"),) if token else ()
    address = address or os.environ.get("FILETOOLS_ADDRESS") or DEFAULT_ADDRESS
    return Connection(address, credentials, metadata, options)


def with_trace_context(metadata: Metadata) -> Metadata:
    """``metadata`` plus the caller's current trace context (W3C ``traceparent``,
    ``tracestate``), injected by the propagator the caller's process set up, when
    it has the OpenTelemetry API and an active span: the daemon's span of the call
    is then its child. Without them, ``metadata`` as it is."""
    if _propagate is None:
        return metadata
    carrier: dict[str, str] = {}
    _propagate.inject(carrier)
    return metadata + tuple(carrier.items()) if carrier else metadata
