import type { StateStore } from './store';
import { fileStateStore } from './file/store';

/**
 * The state store a worker (or the CLI) uses: PostgreSQL when `ARGUS_STATE_URL` is set (schema
 * `ARGUS_STATE_SCHEMA`, default argus_state), else the file store in `stateDir`.
 */
export async function openStateStore(opts: { stateDir: string; env?: NodeJS.ProcessEnv }): Promise<StateStore> {
  const env = opts.env ?? process.env;
  const url = env.ARGUS_STATE_URL;
  if (!url) return fileStateStore(opts.stateDir);
  const { openPgStateStore } = await import('./postgres/store');
  return openPgStateStore(url, env.ARGUS_STATE_SCHEMA ? { schema: env.ARGUS_STATE_SCHEMA } : {});
}
