import * as http from 'node:http';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import type { Client, Connection } from '@temporalio/client';
import { connectTestClient, uniqueId } from '../support/temporal-env';
import { copyCatalog, readCatalog, startTestWorker, writeCatalog, DEMO_CATALOG } from '../support/argus-worker';
import { loadWorkerConfig } from '../../worker/config';
import { startWorkerTelemetry } from '../../worker/telemetry';
import { TRACING_WORKFLOW_MODULES } from '../../worker/tracing';
import type { SweepReport } from '../../domain/report';

// ARGUS_OTEL_ENDPOINT on a real worker: a sweep's spans reach a loopback OTLP/HTTP collector, linked in one trace.
interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes?: { key: string; value: { stringValue?: string } }[];
}

let collector: http.Server;
const received: { path: string; spans: OtlpSpan[]; service: string[] }[] = [];
let client: Client;
let connection: Connection;

beforeAll(async () => {
  collector = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: {
          resource: { attributes: { key: string; value: { stringValue?: string } }[] };
          scopeSpans: { spans: OtlpSpan[] }[];
        }[];
      };
      received.push({
        path: req.url ?? '',
        spans: body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
        service: body.resourceSpans.flatMap((r) =>
          r.resource.attributes.filter((a) => a.key === 'service.name').map((a) => a.value.stringValue ?? ''),
        ),
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  ({ client, connection } = await connectTestClient());
});

afterAll(async () => {
  await connection?.close();
  await new Promise((r) => collector.close(r));
});

test('with ARGUS_OTEL_ENDPOINT, a sweep sends its workflow and activity spans to the collector, in one trace', async () => {
  const port = (collector.address() as AddressInfo).port;
  const config = loadWorkerConfig({ ...process.env, ARGUS_OTEL_ENDPOINT: `http://127.0.0.1:${port}` });
  expect(config.tracing).toEqual({ tracesUrl: `http://127.0.0.1:${port}/v1/traces` });
  const telemetry = await startWorkerTelemetry(config, { logger: new DefaultLogger('WARN') });
  const bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    workflowInterceptorModules: [...TRACING_WORKFLOW_MODULES],
    logger: new DefaultLogger('WARN'),
  });
  const tw = await startTestWorker(bundle, uniqueId('tq-tracing'), process.env, undefined, telemetry);
  let r: SweepReport;
  try {
    const file = copyCatalog(DEMO_CATALOG, path.join(tw.stateDir, 'tracing'));
    const c = readCatalog(file);
    c.entities = c.entities.slice(0, 6);
    writeCatalog(file, c);
    r = (await client.workflow.execute('sweepWorkflow', {
      taskQueue: tw.taskQueue,
      workflowId: uniqueId('sweep/tracing'),
      args: [{ catalog: { kind: 'file', path: file }, maxPasses: 1 }],
    })) as SweepReport;
  } finally {
    await tw.stop();
    await telemetry.close(); // flushes the batch processor
  }
  expect(r.entities.requested).toBe(6);
  const spans = received.flatMap((x) => x.spans);
  expect(received.every((x) => x.path === '/v1/traces')).toBe(true);
  expect(received.flatMap((x) => x.service)).toContain('argus-worker');
  const names = new Set(spans.map((s) => s.name));
  for (const n of [
    'RunWorkflow:sweepWorkflow',
    'RunWorkflow:arbiterWorkflow',
    'StartActivity:loadCatalogPage',
    'RunActivity:loadCatalogPage',
    'RunActivity:applyApprovedRepairs',
  ])
    expect(names).toContain(n);
  // The activity run is a child of the workflow's StartActivity span: one trace across the worker's two sides.
  const run = spans.find((s) => s.name === 'RunActivity:loadCatalogPage')!;
  const start = spans.find((s) => s.spanId === run.parentSpanId);
  expect(start?.name).toBe('StartActivity:loadCatalogPage');
  expect(start?.traceId).toBe(run.traceId);
  const sweepRun = spans.find((s) => s.name === 'RunWorkflow:sweepWorkflow')!;
  expect(sweepRun.traceId).toBe(run.traceId);
});
