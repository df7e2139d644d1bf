import { NativeConnection, type Worker } from '@temporalio/worker';
import { loadWorkerConfig } from '../worker/config';
import { createArgusWorker } from '../worker/create-worker';
import { startWorkerTelemetry } from '../worker/telemetry';

/**
 * Run a worker inside this process while `fn` runs (the demo brings its own worker). With ARGUS_METRICS_PORT set
 * it serves /metrics while it runs, as `npm run worker` does (said on stderr: stdout is the report).
 */
export async function withInlineWorker<T>(fn: () => Promise<T>): Promise<T> {
  const config = loadWorkerConfig();
  const telemetry = await startWorkerTelemetry(config);
  if (telemetry.metricsUrl) process.stderr.write(`ARGUS metrics at ${telemetry.metricsUrl} while the sweep runs\n`);
  let connection: NativeConnection | undefined;
  let worker: Worker | undefined;
  try {
    connection = await NativeConnection.connect(config.connection);
    worker = await createArgusWorker({ config, connection, telemetry });
    const w = worker;
    return await w.runUntil(fn());
  } finally {
    await connection?.close();
    await telemetry.close();
  }
}
