// A loopback HTTP proxy in front of the test S3 server that injects faults:
// for each request, `fault` decides whether it passes ("pass"), is answered
// 503 without reaching the server ("unavailable"), or reaches the server and
// has its answer dropped by resetting the connection ("drop-answer": the
// write happened, the client never hears of it).
import http from "node:http";

export type Fault = "pass" | "unavailable" | "drop-answer";

export interface S3FaultProxy {
  /** http://127.0.0.1:PORT, for --s3-endpoint. */
  endpoint: string;
  close(): void;
}

export async function startS3FaultProxy(upstreamPort: number, fault: (req: http.IncomingMessage) => Fault): Promise<S3FaultProxy> {
  const server = http.createServer((req, res) => {
    const what = fault(req);
    if (what === "unavailable") {
      res.writeHead(503, { "content-type": "application/xml" });
      res.end("<Error><Code>SlowDown</Code><Message>injected</Message></Error>");
      return;
    }
    const upstream = http.request({ host: "127.0.0.1", port: upstreamPort, method: req.method, path: req.url, headers: req.headers }, (up) => {
      if (what === "drop-answer") {
        up.resume();
        up.on("end", () => res.socket?.destroy());
        return;
      }
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return { endpoint: `http://127.0.0.1:${port}`, close: () => void server.close() };
}
