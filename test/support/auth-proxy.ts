// A stand-in for an authenticating reverse proxy in front of `argus review serve --trusted-user-header`: it listens
// on 127.0.0.1, connects to the review server from its own loopback address (so the server sees a TCP peer other
// than the browser's), drops any user header a browser sent and sets its own, the way nginx's `proxy_set_header`
// does. Who is "signed in" is whatever `user()` says: the sign-in itself is not what these tests are about.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AuthProxy {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startAuthProxy(opts: {
  /** The review server's port on 127.0.0.1. */
  targetPort: number;
  /** The address the proxy connects from: the one given to --trusted-proxy. */
  localAddress: string;
  header: string;
  /** The signed-in user, or undefined: the proxy then sends no user header. */
  user: () => string | undefined;
}): Promise<AuthProxy> {
  const header = opts.header.toLowerCase();
  const server = http.createServer((req, res) => {
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (k !== header && v !== undefined) headers[k] = v;
    const user = opts.user();
    if (user !== undefined) headers[header] = user;
    headers['x-forwarded-host'] = req.headers.host;
    headers.host = `127.0.0.1:${opts.targetPort}`;
    const upstream = http.request(
      {
        host: '127.0.0.1',
        port: opts.targetPort,
        localAddress: opts.localAddress,
        method: req.method,
        path: req.url,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (e) => {
      if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end(`auth proxy: ${e.message}`);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
