import { z } from 'zod';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { TASK_QUEUE } from '../domain/ids';
import { defaultStateDir } from '../activities/paths';

const intFromEnv = (min: number, max: number) =>
  z.string().regex(/^\d+$/, 'a whole number').transform(Number).pipe(z.number().int().min(min).max(max));

/** Worker settings from the environment, parsed once. API keys are read later, by name, only where a call is made. */
export const WorkerEnv = z.object({
  ARGUS_TASK_QUEUE: z.string().min(1).default(TASK_QUEUE),
  ARGUS_STATE_DIR: z.string().min(1).optional(),
  /** Sweep state in PostgreSQL (every worker of a fleet the same); unset: the local state folder. */
  ARGUS_STATE_URL: z
    .string()
    .regex(/^(postgres(ql)?:\/\/.*)?$/, 'a postgres:// or postgresql:// connection string (empty: unset)')
    .optional(),
  ARGUS_STATE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier')
    .optional(),
  ARGUS_MAX_CONCURRENT_ACTIVITIES: intFromEnv(1, 1000).optional(),
  ARGUS_MAX_CONCURRENT_WORKFLOW_TASKS: intFromEnv(1, 1000).optional(),
  /** Activities per second across every worker on the task queue: one shared provider budget for a fleet. */
  ARGUS_TASK_QUEUE_ACTIVITIES_PER_SECOND: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'a number')
    .transform(Number)
    .optional(),
});

export interface WorkerConfig {
  taskQueue: string;
  stateDir: string;
  /** ARGUS_STATE_URL as validated (empty: unset): sweep state in PostgreSQL; absent: the file store in `stateDir`. */
  stateUrl?: string;
  /** ARGUS_STATE_SCHEMA as validated; absent: argus_state. */
  stateSchema?: string;
  maxConcurrentActivityTaskExecutions?: number;
  maxConcurrentWorkflowTaskExecutions?: number;
  maxTaskQueueActivitiesPerSecond?: number;
  namespace: string;
  connection: ReturnType<typeof loadClientConnectConfig>['connectionOptions'];
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const r = WorkerEnv.safeParse(env);
  if (!r.success) {
    throw new ConfigError(
      'Invalid worker configuration:\n' + r.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n'),
    );
  }
  const c = loadClientConnectConfig();
  return {
    taskQueue: r.data.ARGUS_TASK_QUEUE,
    stateDir: r.data.ARGUS_STATE_DIR ?? defaultStateDir(),
    stateUrl: r.data.ARGUS_STATE_URL || undefined,
    stateSchema: r.data.ARGUS_STATE_SCHEMA,
    maxConcurrentActivityTaskExecutions: r.data.ARGUS_MAX_CONCURRENT_ACTIVITIES,
    maxConcurrentWorkflowTaskExecutions: r.data.ARGUS_MAX_CONCURRENT_WORKFLOW_TASKS,
    maxTaskQueueActivitiesPerSecond: r.data.ARGUS_TASK_QUEUE_ACTIVITIES_PER_SECOND,
    namespace: c.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default',
    connection: {
      ...c.connectionOptions,
      address: c.connectionOptions.address ?? process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
    },
  };
}
