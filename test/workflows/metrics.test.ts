import * as path from 'node:path';
import * as net from 'node:net';
import { DefaultLogger } from '@temporalio/worker';
import type { Client, Connection } from '@temporalio/client';
import { connectTestClient, uniqueId } from '../support/temporal-env';
import {
  bundleOnce,
  copyCatalog,
  readCatalog,
  startTestWorker,
  writeCatalog,
  DEMO_CATALOG,
  type TestWorker,
} from '../support/argus-worker';
import { startFakeProvider, type FakeProvider } from '../../fakes/provider';
import { loadWorkerConfig } from '../../worker/config';
import { startWorkerTelemetry, type WorkerTelemetry } from '../../worker/telemetry';
import type { SweepReport } from '../../domain/report';
import type { EndpointConfig, SweepInput } from '../../domain/sweep';
import { SK } from '../support/fake-secrets';

// A real worker serving /metrics on ARGUS_METRICS_PORT, a model sweep against the loopback fake provider, and
// the counters scraped while it runs and after it, checked against the sweep's own report.
const KEY_ENV = 'ARGUS_TEST_FAKE_KEY';
const KEY = `${SK}metrics-not-a-real-key-123456`;
const workerEnv = { ...process.env, [KEY_ENV]: KEY };

let fp: FakeProvider;
let telemetry: WorkerTelemetry;
let metricsUrl: string;
let client: Client;
let connection: Connection;
let tw: TestWorker;

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

beforeAll(async () => {
  // Slow answers, so the sweep is still running when the first counters show.
  fp = await startFakeProvider({ port: 0, latencyMs: 150 });
  const config = loadWorkerConfig({
    ...process.env,
    ARGUS_METRICS_PORT: String(await freePort()),
    ARGUS_METRICS_HOST: '127.0.0.1',
  });
  // Before any connection of this file: it installs the SDK runtime with Core's exporter.
  telemetry = await startWorkerTelemetry(config, { logger: new DefaultLogger('WARN') });
  metricsUrl = `http://127.0.0.1:${config.metrics!.port}/metrics`;
  ({ client, connection } = await connectTestClient());
  tw = await startTestWorker(await bundleOnce(), uniqueId('tq-metrics'), workerEnv, undefined, telemetry);
});

afterAll(async () => {
  await tw?.stop();
  await connection?.close();
  await telemetry?.close();
  await fp?.close();
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (label values unescaped). */
function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

async function scrape(): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(metricsUrl);
  expect(res.status).toBe(200);
  const text = await res.text();
  return { text, samples: parse(text) };
}

/** The sum of a family's samples whose labels include `where`. */
function sum(samples: Sample[], name: string, where: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((n, s) => n + s.value, 0);
}

function endpoint(id: string, scenario: string): EndpointConfig {
  return {
    id,
    baseUrl: fp.baseUrl(scenario, 'correct'),
    model: 'fake-model',
    apiKeyEnv: KEY_ENV,
    structuredOutput: 'json_schema',
    maxOutputTokens: 900,
    timeoutMs: 10000,
    maxInFlight: 1,
  };
}

test('the counters of a model sweep, scraped while it runs and after, are the report figures', async () => {
  const file = copyCatalog(DEMO_CATALOG, path.join(tw.stateDir, 'metrics'));
  const catalog = readCatalog(file);
  catalog.entities = catalog.entities.slice(0, 16);
  writeCatalog(file, catalog);

  const before = await scrape();
  expect(sum(before.samples, 'argus_entities_judged_total')).toBe(0);
  expect(before.text).toContain('# TYPE argus_verdicts_total counter');

  const input: SweepInput = {
    catalog: { kind: 'file', path: file },
    review: 'model',
    agentBackend: 'model',
    // The first endpoint's daily quota runs out after two answers: it is retired and the work moves on.
    endpoints: [endpoint('spent', 'daily-quota-2'), endpoint('fake', 'ok')],
    modelBatch: { entities: 4, promptTokens: 6000 },
    maxPasses: 1, // one pass: each proposal is judged once, as the report counts it
  };
  const handle = await client.workflow.start('sweepWorkflow', {
    taskQueue: tw.taskQueue,
    workflowId: uniqueId('sweep/metrics'),
    args: [input],
  });

  // During the sweep: poll until model calls show, then make sure the run had not ended when they did.
  let during: Sample[] = [];
  for (const started = Date.now(); Date.now() - started < 60_000;) {
    during = (await scrape()).samples;
    if (sum(during, 'argus_model_calls_total') > 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect((await handle.describe()).status.name).toBe('RUNNING');
  expect(sum(during, 'argus_model_calls_total')).toBeGreaterThan(0);
  expect(sum(during, 'argus_entities_judged_total')).toBeGreaterThan(0);

  const r = (await handle.result()) as SweepReport;
  const { text, samples } = await scrape();

  // Counters never go down between scrapes.
  for (const s of during.filter((x) => x.name.endsWith('_total'))) {
    expect(sum(samples, s.name, s.labels)).toBeGreaterThanOrEqual(s.value);
  }

  // Entities, proposals, verdicts and writes: the report's figures.
  expect(sum(samples, 'argus_entities_judged_total', { catalog_kind: 'file' })).toBe(r.entities.requested);
  expect(r.proposalsTruncated).toBe(0);
  expect(sum(samples, 'argus_proposals_total')).toBe(r.proposals.length);
  for (const [kind, k] of Object.entries(r.byKind))
    expect(sum(samples, 'argus_proposals_total', { kind })).toBe(k.proposed);
  for (const agent of new Set(r.proposals.map((p) => p.agent)))
    expect(sum(samples, 'argus_proposals_total', { agent })).toBe(r.proposals.filter((p) => p.agent === agent).length);
  for (const outcome of ['approved', 'rejected', 'not_reviewed'] as const)
    expect(sum(samples, 'argus_verdicts_total', { outcome })).toBe(r.outcomes[outcome]);
  expect(sum(samples, 'argus_verdicts_total', { outcome: 'approved', stage: 'model' })).toBe(r.outcomes.approved);
  expect(r.outcomes.approved).toBeGreaterThan(0);
  expect(sum(samples, 'argus_writes_total', { catalog_kind: 'file', result: 'written' })).toBe(r.written);
  expect(r.written).toBeGreaterThan(0);
  expect(sum(samples, 'argus_writes_total', { result: 'already' })).toBe(r.alreadyApplied);
  expect(sum(samples, 'argus_writes_total', { result: 'kept_human' })).toBe(r.keptHumanText);
  expect(sum(samples, 'argus_writes_total', { result: 'failed' })).toBe(r.writesFailed);

  // Model calls and tokens, by endpoint and by agent.
  const u = r.modelUsage;
  expect(sum(samples, 'argus_model_calls_total')).toBe(u.calls);
  expect(sum(samples, 'argus_model_tokens_total', { type: 'prompt' })).toBe(u.promptTokens);
  expect(sum(samples, 'argus_model_tokens_total', { type: 'completion' })).toBe(u.completionTokens);
  expect(Object.keys(u.byEndpoint).sort()).toEqual(['fake', 'spent']);
  for (const [id, t] of Object.entries(u.byEndpoint)) {
    expect(sum(samples, 'argus_model_calls_total', { endpoint: id })).toBe(t.calls);
    expect(sum(samples, 'argus_model_tokens_total', { endpoint: id, type: 'prompt' })).toBe(t.promptTokens);
    expect(sum(samples, 'argus_model_tokens_total', { endpoint: id, type: 'completion' })).toBe(t.completionTokens);
  }
  for (const [agent, t] of Object.entries(u.byAgent))
    expect(sum(samples, 'argus_model_calls_total', { agent })).toBe(t.calls);

  // The spent endpoint: its exhausted answer, its retirement, the provider's own count.
  const spent = fp.stats()[fp.endpointKey('daily-quota-2', 'correct')]!;
  expect(r.endpoints.retired.map((x) => x.endpointId)).toEqual(['spent']);
  expect(sum(samples, 'argus_endpoint_exhausted_total', { endpoint: 'spent', window: 'day' })).toBe(
    spent.exhaustedAnswers,
  );
  expect(sum(samples, 'argus_model_call_failures_total', { endpoint: 'spent', error: 'exhausted' })).toBe(
    spent.exhaustedAnswers,
  );
  expect(sum(samples, 'argus_endpoints_retired_total', { endpoint: 'spent', reason: 'exhausted' })).toBe(1);
  expect(sum(samples, 'argus_endpoints_retired_total', { endpoint: 'fake' })).toBe(0);
  // What the ok endpoint's x-ratelimit headers said is left.
  const quota = samples.find(
    (s) => s.name === 'argus_model_quota_remaining' && s.labels.endpoint === 'fake' && s.labels.resource === 'tokens',
  );
  expect(quota?.value).toBeGreaterThan(0);

  // The SDK's own series, served on the same port.
  expect(text).toMatch(/^# TYPE temporal_\w+ /m);
  expect(samples.some((s) => s.name.startsWith('temporal_') && s.labels.task_queue === tw.taskQueue)).toBe(true);
  expect(samples.some((s) => s.name.startsWith('temporal_activity_'))).toBe(true);

  // No label value carries an entity, a column, a URL or a secret; ARGUS's labels come from short lists.
  const values = samples.flatMap((s) => Object.values(s.labels));
  const names = catalog.entities.flatMap((e) => [e.id, ...(e.columns ?? []).map((c) => `${e.id}.${c.name}`)]);
  for (const v of values) {
    for (const n of names) expect(v.includes(n)).toBe(false);
    expect(v).not.toContain(fp.url);
    expect(v).not.toContain(KEY);
  }
  const allowed: Record<string, RegExp> = {
    catalog_kind: /^(demo|file|postgres|dbt)$/,
    agent: /^(description-drafter|pii-classifier|lineage-checker|review)$/,
    kind: /^(description|pii_tag|lineage_flag)$/,
    outcome: /^(approved|rejected|not_reviewed)$/,
    stage: /^(gate|model|model_unavailable|awaiting_people|human)$/,
    result: /^(written|already|kept_human|conflict|failed)$/,
    endpoint: /^(spent|fake)$/,
    type: /^(prompt|completion)$/,
    error: /^(burst|exhausted|server|auth|bad_request|malformed_output|timeout|network)$/,
    window: /^(second|minute|hour|day|month|credits|unknown)$/,
    reason: /^(exhausted|persistent_throttling)$/,
    resource: /^(tokens|requests)$/,
  };
  for (const s of samples.filter((x) => x.name.startsWith('argus_'))) {
    for (const [k, v] of Object.entries(s.labels))
      expect(`${k}=${v}`).toMatch(new RegExp(`^${k}=${allowed[k]!.source.slice(1)}`));
  }
});
