import { getHeapStatistics } from 'node:v8';
import { NativeConnection } from '@temporalio/worker';
import { loadWorkerConfig, ConfigError } from './config';
import { createArgusWorker } from './create-worker';
import { startWorkerTelemetry } from './telemetry';
import { openStateStore } from '../state/open';
import { StateStoreError } from '../state/store';

/** `npm run worker`: one worker on the `argus` task queue until interrupted. */
async function main(): Promise<void> {
  const config = loadWorkerConfig();
  // Before the connection: the SDK's runtime, which the connection creates otherwise, is installed here.
  const telemetry = await startWorkerTelemetry(config);
  const connection = await NativeConnection.connect(config.connection);
  const store = await openStateStore({
    stateDir: config.stateDir,
    stateUrl: config.stateUrl,
    stateSchema: config.stateSchema,
  });
  const worker = await createArgusWorker({ config, connection, store, telemetry });
  console.log(
    `ARGUS worker polling task queue "${config.taskQueue}" on ${config.connection.address} (namespace ${config.namespace}); ` +
      `sweep state in ${store.where}; heap limit ${Math.round(getHeapStatistics().heap_size_limit / 2 ** 20)} MiB` +
      (telemetry.metricsUrl ? `; metrics at ${telemetry.metricsUrl}` : '') +
      (telemetry.tracing ? `; traces to ${telemetry.tracing.tracesUrl}` : ''),
  );
  try {
    await worker.run();
  } finally {
    await store.close().catch(() => undefined);
    await connection.close();
    await telemetry.close();
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof StateStoreError) console.error(err.message);
  else console.error('ARGUS worker stopped:', err);
  process.exit(1);
});
