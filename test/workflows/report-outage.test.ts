// A database that goes away while the report reads the sweep's records back is an outage, not damage: the report's
// attempt fails, Temporal runs it again, and the sweep ends complete. (Read as damage, the page was left out of the
// report and the sweep called itself partial with 590 fewer writes than it made, under a fleet's load.)
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Context } from '@temporalio/activity';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { Client, Connection } from '@temporalio/client';
import { createArgusWorker } from '../../worker/create-worker';
import { openStateStore } from '../../state/open';
import type { StateStore, SweepLedger } from '../../state/store';
import type { SweepReport } from '../../domain/report';
import { bundleOnce, copyCatalog, DEMO_CATALOG, installQuietRuntime } from '../support/argus-worker';
import { connectTestClient, testAddress, uniqueId, TEST_NAMESPACE } from '../support/temporal-env';

jest.setTimeout(120_000);

/** What node-postgres throws when the server drops a connection under a query. */
const dropped = () => new Error('Connection terminated unexpectedly');

/** The store, with the first `n` ledger reads of page outcomes made by the report failing as a dropped connection. */
function flakyReportReads(store: StateStore, n: number): { store: StateStore; thrown: () => number } {
  let thrown = 0;
  const inReport = () => {
    try {
      return Context.current().info.activityType === 'finalizeSweep';
    } catch {
      return false;
    }
  };
  const ledger = (key: string): SweepLedger => {
    const real = store.ledger(key);
    return new Proxy(real, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== 'outcomes' || typeof v !== 'function') return typeof v === 'function' ? v.bind(target) : v;
        return async (...args: unknown[]) => {
          if (inReport() && thrown < n) {
            thrown++;
            throw dropped();
          }
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  };
  const wrapped = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'ledger') return ledger;
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { store: wrapped, thrown: () => thrown };
}

let client: Client;
let clientConnection: Connection;
let workerConnection: NativeConnection;
let worker: Worker;
let run: Promise<void>;
let flaky: ReturnType<typeof flakyReportReads>;
let stateDir: string;
const taskQueue = uniqueId('tq-report-outage');

beforeAll(async () => {
  installQuietRuntime();
  ({ client, connection: clientConnection } = await connectTestClient());
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'argus-state-'));
  flaky = flakyReportReads(await openStateStore({ stateDir }), 2);
  workerConnection = await NativeConnection.connect({ address: testAddress() });
  worker = await createArgusWorker({
    config: { taskQueue, stateDir, namespace: TEST_NAMESPACE },
    connection: workerConnection,
    workflowBundle: await bundleOnce(),
    store: flaky.store,
  });
  run = worker.run();
});

afterAll(async () => {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await run;
  await workerConnection?.close();
  await clientConnection?.close();
});

test('a connection dropped under the report: the report runs again and the sweep is complete, every write counted', async () => {
  const fileOf = (name: string) => copyCatalog(DEMO_CATALOG, path.join(stateDir, 'copies', name));
  const sweep = (file: string) =>
    client.workflow.start('sweepWorkflow', {
      taskQueue,
      workflowId: uniqueId('sweep/report-outage'),
      args: [{ catalog: { kind: 'file', path: file } }],
    });
  const file = fileOf('flaky');
  const h = await sweep(file);
  const report = (await h.result()) as SweepReport;
  expect(flaky.thrown()).toBe(2);
  expect({ partial: report.partial, reasons: report.partialReasons }).toEqual({ partial: false, reasons: [] });
  // The report's attempts: the two that met the dropped connection, then the one that ended.
  const events = (await h.fetchHistory()).events ?? [];
  const scheduled = events.find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'finalizeSweep',
  )?.eventId;
  const started = events.find(
    (e) =>
      e.activityTaskStartedEventAttributes &&
      String(e.activityTaskStartedEventAttributes.scheduledEventId) === String(scheduled),
  );
  expect(started?.activityTaskStartedEventAttributes?.attempt).toBe(3);
  // And it counts what a sweep with no outage counts.
  const control = (await (await sweep(fileOf('control'))).result()) as SweepReport;
  expect(flaky.thrown()).toBe(2);
  expect(report.written).toBeGreaterThan(100);
  expect({ written: report.written, outcomes: report.outcomes }).toEqual({
    written: control.written,
    outcomes: control.outcomes,
  });
  // The memory kept every page's decisions through the dropped connection: the next night judges and writes nothing.
  const next = (await (await sweep(file)).result()) as SweepReport;
  expect({ judged: next.incremental?.judged, written: next.written, partial: next.partial }).toEqual({
    judged: 0,
    written: 0,
    partial: false,
  });
});
