import { mkdtempSync, mkdirSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  bundleWorkflowCode,
  NativeConnection,
  Runtime,
  DefaultLogger,
  type Worker,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { createArgusWorker, type ArgusWorkerOptions } from '../../worker/create-worker';
import type { Client, Connection } from '@temporalio/client';
import { connectTestClient, testAddress, uniqueId, TEST_NAMESPACE } from './temporal-env';
import type { CatalogFile } from '../../domain/catalog';
import type { SweepInput } from '../../domain/sweep';
import type { SweepReport } from '../../domain/report';
import type { SweepPlan } from '../../activities/plan';

let runtimeInstalled = false;

/** Quiet the SDK's logs in tests: warnings and errors only. */
export function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    /* already installed by another helper in this worker process */
  }
}

/** One workflow bundle per test file (bundling takes about a second). */
export async function bundleOnce(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: new DefaultLogger('WARN') });
}

export interface TestWorker {
  worker: Worker;
  connection: NativeConnection;
  taskQueue: string;
  stateDir: string;
  run: Promise<void>;
  stop(): Promise<void>;
}

/**
 * A real worker on the test server, on its own task queue, with a fresh state folder (or the one given);
 * `telemetry`: counters and tracing from worker/telemetry.ts (started before this call).
 */
export async function startTestWorker(
  bundle: WorkflowBundleWithSourceMap,
  taskQueue: string,
  env: NodeJS.ProcessEnv = process.env,
  stateDir: string = mkdtempSync(path.join(os.tmpdir(), 'argus-state-')),
  telemetry?: ArgusWorkerOptions['telemetry'],
  /** The rules version the worker judges by (an upgraded worker); absent: its rule sources' digest. */
  rulesVersion?: string,
): Promise<TestWorker> {
  installQuietRuntime();
  const connection = await NativeConnection.connect({ address: testAddress() });
  const worker = await createArgusWorker({
    config: {
      taskQueue,
      stateDir,
      namespace: TEST_NAMESPACE,
      stateUrl: env.ARGUS_STATE_URL,
      stateSchema: env.ARGUS_STATE_SCHEMA,
    },
    connection,
    workflowBundle: bundle,
    env,
    ...(telemetry ? { telemetry } : {}),
    ...(rulesVersion ? { rulesVersion } : {}),
  });
  const run = worker.run();
  let closed = false;
  return {
    worker,
    connection,
    taskQueue,
    stateDir,
    run,
    async stop() {
      // Idempotent: a test may stop its worker early (to read what a run shows without one); afterAll stops it again.
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await run;
      if (!closed) {
        closed = true;
        await connection.close();
      }
    },
  };
}

export const DEMO_CATALOG = path.resolve(__dirname, '../../catalog/demo/shop-warehouse.json');

/** Copy a catalog file into a folder of its own so a test can repair it. */
export function copyCatalog(src: string, dir: string, name = 'catalog.json'): string {
  mkdirSync(dir, { recursive: true });
  const dst = path.join(dir, name);
  copyFileSync(src, dst);
  return dst;
}

export function readCatalog(file: string): CatalogFile {
  return JSON.parse(readFileSync(file, 'utf8')) as CatalogFile;
}

export function writeCatalog(file: string, c: unknown): void {
  writeFileSync(file, JSON.stringify(c, null, 2));
}

/**
 * The usual setup of a workflow test file: before all tests, a client and a real worker on a task queue of its
 * own (with a fresh state folder); after them, both closed. Read `client` and `tw` inside tests and hooks.
 */
export function useArgusWorker(
  prefix: string,
  env?: NodeJS.ProcessEnv,
): { readonly client: Client; readonly tw: TestWorker } {
  let client: Client | undefined;
  let connection: Connection | undefined;
  let tw: TestWorker | undefined;
  beforeAll(async () => {
    ({ client, connection } = await connectTestClient());
    tw = await startTestWorker(await bundleOnce(), uniqueId(prefix), env);
  });
  afterAll(async () => {
    await tw?.stop();
    await connection?.close();
  });
  const ready = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`${what} is used before beforeAll ran`);
    return v;
  };
  return {
    get client() {
      return ready(client, 'client');
    },
    get tw() {
      return ready(tw, 'test worker');
    },
  };
}

type WithWorker = { readonly client: Client; readonly tw: TestWorker };

/** Run a workflow taking a sweep input to its end on the file's test worker, with a unique id under `prefix`. */
function executeOn<T>(w: WithWorker, type: 'sweepWorkflow' | 'planSweepWorkflow', input: SweepInput, prefix: string) {
  return w.client.workflow.execute(type, {
    taskQueue: w.tw.taskQueue,
    workflowId: uniqueId(prefix),
    args: [input],
  }) as Promise<T>;
}

/** Run one sweep to its end on the file's test worker, with a unique id under `prefix`; returns the report. */
export const runSweep = (w: WithWorker, input: SweepInput, prefix = 'sweep/test') =>
  executeOn<SweepReport>(w, 'sweepWorkflow', input, prefix);

/** Plan a sweep (`planSweepWorkflow`, as `argus sweep plan` does) on the file's test worker; returns the plan. */
export const planSweep = (w: WithWorker, input: SweepInput, prefix = 'plan/test') =>
  executeOn<SweepPlan>(w, 'planSweepWorkflow', input, prefix);
