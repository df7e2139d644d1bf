import * as path from 'node:path';
import * as fs from 'node:fs';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import { HEARTBEAT_SENT_EVERY, heartbeatInterceptor } from '../activities/heartbeat';
import { databaseOutageInterceptor } from '../activities/failures';
import { bundledDemoCatalog } from '../activities/paths';
import { openStateStore } from '../state/open';
import type { StateStore } from '../state/store';
import { createCatalogs } from '../catalog';
import type { WorkerConfig } from './config';
import type { WorkerTelemetry } from './telemetry';

/** Workflow code: the compiled folder when running from dist, the sources otherwise. */
function workflowsPath(): string {
  const js = path.join(__dirname, '..', 'workflows', 'index.js');
  return fs.existsSync(js) ? js : path.join(__dirname, '..', 'workflows', 'index.ts');
}

export interface ArgusWorkerOptions {
  config: Pick<
    WorkerConfig,
    | 'taskQueue'
    | 'stateDir'
    | 'stateUrl'
    | 'stateSchema'
    | 'maxConcurrentActivityTaskExecutions'
    | 'maxConcurrentWorkflowTaskExecutions'
    | 'maxTaskQueueActivitiesPerSecond'
    | 'namespace'
  >;
  connection: NativeConnection;
  workflowBundle?: WorkerOptions['workflowBundle'];
  env?: NodeJS.ProcessEnv;
  /** Where sweep state lives; absent: opened from the config (`stateUrl`, else the state folder). */
  store?: StateStore;
  /** ARGUS's counters and tracing (worker/telemetry.ts, started before the connection); absent: neither. */
  telemetry?: Pick<WorkerTelemetry, 'metrics' | 'tracing'>;
  /** The rules version to judge by (an upgraded worker, in tests); absent: the digest of this worker's rule sources. */
  rulesVersion?: string;
}

/** Build an ARGUS worker: every workflow and activity, on the configured task queue. */
export async function createArgusWorker(opts: ArgusWorkerOptions): Promise<Worker> {
  const c = opts.config;
  const env = opts.env ?? process.env;
  const store =
    opts.store ?? (await openStateStore({ stateDir: c.stateDir, stateUrl: c.stateUrl, stateSchema: c.stateSchema }));
  const metrics = opts.telemetry?.metrics;
  const tracing = opts.telemetry?.tracing;
  return Worker.create({
    connection: opts.connection,
    namespace: c.namespace,
    taskQueue: c.taskQueue,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: workflowsPath() }),
    activities: createActivities({
      stateDir: c.stateDir,
      store,
      catalogs: createCatalogs({
        stateDir: c.stateDir,
        bundledDemo: bundledDemoCatalog(),
        env,
      }),
      env,
      ...(metrics ? { metrics } : {}),
      ...(opts.rulesVersion ? { rulesVersion: opts.rulesVersion } : {}),
    }),
    interceptors: {
      activity: [heartbeatInterceptor, databaseOutageInterceptor, ...(tracing?.activityInterceptors ?? [])],
      // A prebuilt bundle carries its workflow interceptors already (worker/tracing.ts, TRACING_WORKFLOW_MODULES).
      ...(tracing && !opts.workflowBundle ? { workflowModules: [...tracing.workflowModules] } : {}),
    },
    ...(tracing ? { sinks: tracing.sinks } : {}),
    // The SDK sends a running activity's beats to the server at most once per 0.8 x its heartbeat timeout: 8 s of
    // the 10 s ARGUS gives, which left a loaded server 2 s to record each and timed live attempts out (a retry ran
    // beside the first). Every 2 s leaves it 8 s, and a dead worker is still noticed in 10.
    maxHeartbeatThrottleInterval: HEARTBEAT_SENT_EVERY,
    ...(c.maxConcurrentActivityTaskExecutions
      ? { maxConcurrentActivityTaskExecutions: c.maxConcurrentActivityTaskExecutions }
      : {}),
    ...(c.maxConcurrentWorkflowTaskExecutions
      ? { maxConcurrentWorkflowTaskExecutions: c.maxConcurrentWorkflowTaskExecutions }
      : {}),
    ...(c.maxTaskQueueActivitiesPerSecond
      ? { maxTaskQueueActivitiesPerSecond: c.maxTaskQueueActivitiesPerSecond }
      : {}),
  });
}
