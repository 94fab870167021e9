"""A real OTLP/HTTP trace receiver for the tests of all three languages.

Listens on 127.0.0.1 (a free port), prints ``listening on http://HOST:PORT``,
then for every POST /v1/traces decodes the body (protobuf, gzip or not) with
the OpenTelemetry protos (``opentelemetry-proto``, the project's own generated
classes) and prints each span as one JSON line: trace_id, span_id,
parent_span_id (hex, "" for a root), name, kind, status_code, service,
attributes. A body that does not decode is answered 400 and printed as
``{"error": ...}``. Stops on SIGTERM or when stdin closes.
"""

import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

print_lock = threading.Lock()


def emit(record: dict) -> None:
    with print_lock:
        print(json.dumps(record), flush=True)


def value_of(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as exporters expect

    def body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length", "0")))
        chunks = []
        while True:  # RFC 9112 chunked coding: SIZE-IN-HEX CRLF DATA CRLF ... 0 CRLF CRLF
            size = int(self.rfile.readline().split(b";")[0], 16)
            chunks.append(self.rfile.read(size))
            self.rfile.readline()
            if size == 0:
                return b"".join(chunks)

    def do_POST(self) -> None:
        body = self.body()
        if self.path != "/v1/traces":
            self.answer(404)
            return
        try:
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            request = ExportTraceServiceRequest.FromString(body)
        except Exception as error:  # the test fails on it: any decode error is reported
            emit({"error": f"{type(error).__name__}: {error}"})
            self.answer(400)
            return
        for resource_spans in request.resource_spans:
            resource = {a.key: value_of(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    emit(
                        {
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_span_id": span.parent_span_id.hex(),
                            "name": span.name,
                            "kind": span.kind,
                            "status_code": span.status.code,
                            "service": resource.get("service.name"),
                            "service_version": resource.get("service.version"),
                            "attributes": {a.key: value_of(a.value) for a in span.attributes},
                        }
                    )
        self.answer(200, ExportTraceServiceResponse().SerializeToString())

    def answer(self, code: int, body: bytes = b"") -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # stdout carries spans only
        pass


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # the test closes stdin (or ends the process) to stop it
    server.shutdown()


if __name__ == "__main__":
    main()
