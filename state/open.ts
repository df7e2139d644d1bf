import type { StateStore } from './store';
import { fileStateStore } from './file/store';

/**
 * Where sweep state lives, as the caller validated or read it (the worker from its config, the CLI, tests and
 * bench from what they were given): never read from the environment here.
 */
export interface StateSettings {
  /** The file store's folder (`ARGUS_STATE_DIR`). */
  stateDir: string;
  /** The PostgreSQL state store (`ARGUS_STATE_URL`); absent or empty: the file store in `stateDir`. */
  stateUrl?: string;
  /** Its schema (`ARGUS_STATE_SCHEMA`); absent or empty: argus_state. */
  stateSchema?: string;
}

/** The state store a worker (or the CLI) uses: PostgreSQL when `stateUrl` is set, else the file store in `stateDir`. */
export async function openStateStore(settings: StateSettings): Promise<StateStore> {
  if (!settings.stateUrl) return fileStateStore(settings.stateDir);
  const { openPgStateStore } = await import('./postgres/store');
  return openPgStateStore(settings.stateUrl, settings.stateSchema ? { schema: settings.stateSchema } : {});
}
