import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Content type of the Prometheus text exposition format. */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
/** How long a scrape waits for the SDK's exporter: well inside Prometheus's default 10 s scrape timeout. */
const SDK_TIMEOUT_MS = 2000;

export interface MetricsServerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** ARGUS's own series, rendered afresh on every scrape. */
  render: () => string;
  /** The SDK's Prometheus exporter (Core's, on loopback), whose text follows ARGUS's; absent: see `sdkAbsent`. */
  sdkUrl?: string;
  /** Why the SDK's series are not there (said in a comment line of every scrape). */
  sdkAbsent?: string;
  sdkTimeoutMs?: number;
}

export interface MetricsServer {
  /** `http://host:port/metrics` as bound (the port resolved). */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The SDK's series as its exporter serves them, or a comment line saying why they are missing from this scrape. */
async function sdkText(o: MetricsServerOptions): Promise<string> {
  if (!o.sdkUrl) return `# temporal SDK metrics not served: ${o.sdkAbsent ?? 'no exporter'}\n`;
  try {
    const res = await fetch(o.sdkUrl, { signal: AbortSignal.timeout(o.sdkTimeoutMs ?? SDK_TIMEOUT_MS) });
    if (!res.ok) return `# temporal SDK metrics unavailable this scrape: its exporter answered HTTP ${res.status}\n`;
    const text = await res.text();
    return text.endsWith('\n') || text === '' ? text : `${text}\n`;
  } catch (e) {
    // fetch's own message is "fetch failed"; what went wrong (ECONNREFUSED, a timeout) is in its cause.
    const err = e as { message?: unknown; cause?: { message?: unknown } } | undefined;
    const why = String(err?.cause?.message ?? err?.message ?? e);
    return `# temporal SDK metrics unavailable this scrape: ${why.replace(/\s+/g, ' ').slice(0, 200)}\n`;
  }
}

/**
 * Serve `/metrics`: ARGUS's series, then the SDK's fetched from Core's exporter, in one Prometheus text
 * exposition. A failed SDK fetch still serves ARGUS's series, with a comment line. Rejects when the port cannot
 * be bound (in use, not permitted, no such address).
 */
export async function startMetricsServer(o: MetricsServerOptions): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('GET /metrics\n');
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('ARGUS worker metrics: GET /metrics\n');
      return;
    }
    void (async () => {
      let body: string;
      try {
        body = o.render() + (await sdkText(o));
      } catch (e) {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`metrics failed: ${String(e)}\n`);
        return;
      }
      res.writeHead(200, { 'content-type': EXPOSITION_CONTENT_TYPE, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shown = o.host.includes(':') && !o.host.startsWith('[') ? `[${o.host}]` : o.host;
  return {
    url: `http://${shown}:${port}/metrics`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
