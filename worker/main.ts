import { NativeConnection } from '@temporalio/worker';
import { loadWorkerConfig, ConfigError } from './config';
import { createArgusWorker } from './create-worker';

/** `npm run worker`: one worker on the `argus` task queue until interrupted. */
async function main(): Promise<void> {
  const config = loadWorkerConfig();
  const connection = await NativeConnection.connect(config.connection);
  const worker = await createArgusWorker({ config, connection });
  console.log(
    `ARGUS worker polling task queue "${config.taskQueue}" on ${config.connection.address} (namespace ${config.namespace}); state in ${config.stateDir}`,
  );
  try {
    await worker.run();
  } finally {
    await connection.close();
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error('ARGUS worker stopped:', err);
  process.exit(1);
});
