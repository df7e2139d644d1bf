import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { EXPOSITION_CONTENT_TYPE, startMetricsServer, type MetricsServer } from '../../worker/metrics-server';
import { ArgusMetrics } from '../../activities/metrics';
import { ConfigError, DEFAULT_METRICS_HOST, loadWorkerConfig, otlpTracesUrl } from '../../worker/config';

const SDK_TEXT =
  '# HELP temporal_worker_task_slots_available Task slots\n# TYPE temporal_worker_task_slots_available gauge\n' +
  'temporal_worker_task_slots_available{worker_type="ActivityWorker"} 100';

/** A stand-in for Core's exporter: serves SDK_TEXT at /metrics (no trailing newline, as some exporters do). */
async function fakeSdkExporter(): Promise<{ url: string; close(): Promise<void> }> {
  const s = http.createServer((req, res) => {
    if (req.url === '/metrics') res.writeHead(200, { 'content-type': 'text/plain' }).end(SDK_TEXT);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/metrics`,
    close: () => new Promise((r) => s.close(() => r())),
  };
}

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

const servers: MetricsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(opts: Omit<Parameters<typeof startMetricsServer>[0], 'host' | 'port' | 'render'>) {
  const m = new ArgusMetrics();
  m.entitiesJudged('demo', 69);
  m.modelCall('fake', 'review', { promptTokens: 10, completionTokens: 2 });
  const s = await startMetricsServer({ host: '127.0.0.1', port: 0, render: () => m.render(), ...opts });
  servers.push(s);
  return { m, s };
}

describe('the /metrics server', () => {
  test("serves ARGUS's series, then the SDK's, as one exposition", async () => {
    const sdk = await fakeSdkExporter();
    try {
      const { s } = await serve({ sdkUrl: sdk.url });
      const res = await fetch(s.url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(EXPOSITION_CONTENT_TYPE);
      const text = await res.text();
      expect(text).toMatch(/^# HELP argus_entities_judged_total /);
      expect(text).toContain('argus_entities_judged_total{catalog_kind="demo"} 69\n');
      expect(text).toContain('argus_model_tokens_total{endpoint="fake",agent="review",type="prompt"} 10\n');
      expect(text.endsWith(`${SDK_TEXT}\n`)).toBe(true);
      expect(text.indexOf('temporal_')).toBeGreaterThan(text.lastIndexOf('argus_'));
    } finally {
      await sdk.close();
    }
  });

  test('counts read at scrape time: a later scrape shows what happened since', async () => {
    const { m, s } = await serve({ sdkAbsent: 'not in this test' });
    m.entitiesJudged('demo', 1);
    expect(await (await fetch(s.url)).text()).toContain('argus_entities_judged_total{catalog_kind="demo"} 70\n');
  });

  test("an SDK exporter that does not answer still leaves ARGUS's series, with a comment saying so", async () => {
    const { s } = await serve({ sdkUrl: `http://127.0.0.1:${await closedPort()}/metrics` });
    const res = await fetch(s.url);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('argus_entities_judged_total{catalog_kind="demo"} 69\n');
    expect(text).toMatch(/\n# temporal SDK metrics unavailable this scrape: .*ECONNREFUSED.*\n$/);
  });

  test('without an SDK exporter it says why in a comment line', async () => {
    const { s } = await serve({ sdkAbsent: 'the runtime was in use' });
    expect(await (await fetch(s.url)).text()).toMatch(/\n# temporal SDK metrics not served: the runtime was in use\n$/);
  });

  test.each([
    ['GET', '/', 404],
    ['GET', '/metrics/x', 404],
    ['POST', '/metrics', 405],
    ['HEAD', '/metrics', 200],
    ['GET', '/metrics?name[]=x', 200],
  ])('%s %s answers %d', async (method, path, status) => {
    const { s } = await serve({ sdkAbsent: 'test' });
    const res = await fetch(new URL(path, s.url), { method });
    expect(res.status).toBe(status);
  });

  test('a port in use is refused at start', async () => {
    const { s } = await serve({ sdkAbsent: 'test' });
    await expect(startMetricsServer({ host: '127.0.0.1', port: s.port, render: () => '' })).rejects.toThrow(
      /EADDRINUSE/,
    );
  });
});

describe('metrics and tracing settings', () => {
  const base = { TEMPORAL_ADDRESS: '127.0.0.1:7233' };

  test('off unless ARGUS_METRICS_PORT is set; every interface by default', () => {
    expect(loadWorkerConfig(base).metrics).toBeUndefined();
    expect(loadWorkerConfig({ ...base, ARGUS_METRICS_PORT: '' }).metrics).toBeUndefined();
    expect(loadWorkerConfig({ ...base, ARGUS_METRICS_PORT: '9464' }).metrics).toEqual({
      port: 9464,
      host: DEFAULT_METRICS_HOST,
    });
    expect(DEFAULT_METRICS_HOST).toBe('0.0.0.0');
    expect(loadWorkerConfig({ ...base, ARGUS_METRICS_PORT: '9464', ARGUS_METRICS_HOST: '127.0.0.1' }).metrics).toEqual({
      port: 9464,
      host: '127.0.0.1',
    });
  });

  test.each([
    [{ ARGUS_METRICS_PORT: '0' }, /ARGUS_METRICS_PORT: /],
    [{ ARGUS_METRICS_PORT: '65536' }, /ARGUS_METRICS_PORT: /],
    [{ ARGUS_METRICS_PORT: '94x' }, /ARGUS_METRICS_PORT: a whole number/],
    [{ ARGUS_METRICS_PORT: '9464', ARGUS_METRICS_HOST: 'a host' }, /ARGUS_METRICS_HOST: a host name or an IP/],
    [{ ARGUS_OTEL_ENDPOINT: 'collector:4318' }, /ARGUS_OTEL_ENDPOINT: /],
    [{ ARGUS_OTEL_ENDPOINT: 'ftp://collector:4318' }, /ARGUS_OTEL_ENDPOINT: /],
  ])('%j fails at start, naming the variable', (env, message) => {
    expect(() => loadWorkerConfig({ ...base, ...env })).toThrow(ConfigError);
    expect(() => loadWorkerConfig({ ...base, ...env })).toThrow(message);
  });

  test('tracing is off by default; the endpoint is an OTLP/HTTP base URL or the traces URL itself', () => {
    expect(loadWorkerConfig(base).tracing).toBeUndefined();
    expect(loadWorkerConfig({ ...base, ARGUS_OTEL_ENDPOINT: 'http://collector:4318' }).tracing).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
    });
    expect(otlpTracesUrl('https://otel.example/base/')).toBe('https://otel.example/base/v1/traces');
    expect(otlpTracesUrl('http://collector:4318/v1/traces')).toBe('http://collector:4318/v1/traces');
  });
});
