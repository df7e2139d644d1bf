import { NativeConnection, type Worker } from '@temporalio/worker';
import { loadWorkerConfig } from '../worker/config';
import { createArgusWorker } from '../worker/create-worker';

/** Run a worker inside this process while `fn` runs (the demo brings its own worker). */
export async function withInlineWorker<T>(fn: () => Promise<T>): Promise<T> {
  const config = loadWorkerConfig();
  const connection = await NativeConnection.connect(config.connection);
  let worker: Worker | undefined;
  try {
    worker = await createArgusWorker({ config, connection });
    const w = worker;
    return await w.runUntil(fn());
  } finally {
    await connection.close();
  }
}
