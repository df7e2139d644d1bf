import { z } from 'zod';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { TASK_QUEUE } from '../domain/ids';
import { formatIssues } from '../domain/issues';
import { defaultStateDir } from '../activities/paths';

const intFromEnv = (min: number, max: number) =>
  z.string().regex(/^\d+$/, 'a whole number').transform(Number).pipe(z.number().int().min(min).max(max));
/** An optional setting that an empty value leaves unset (compose passes `${VAR:-}` through as ""). */
const unsetIfEmpty = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

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
  /** Serve Prometheus metrics (ARGUS's `argus_*` and the SDK's `temporal_*`) at /metrics on this port. */
  ARGUS_METRICS_PORT: unsetIfEmpty(intFromEnv(1, 65535)),
  /** Where the metrics port listens: every interface by default, since Prometheus scrapes from elsewhere. */
  ARGUS_METRICS_HOST: unsetIfEmpty(
    z.string().regex(/^[A-Za-z0-9.:[\]-]{1,253}$/, 'a host name or an IP address (e.g. 0.0.0.0, 127.0.0.1, ::)'),
  ),
  /** OpenTelemetry tracing (off unless set): the OTLP/HTTP collector base URL, e.g. http://otel-collector:4318. */
  ARGUS_OTEL_ENDPOINT: unsetIfEmpty(z.url({ protocol: /^https?$/, error: 'an http:// or https:// URL' })),
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
  /** Prometheus metrics at http://host:port/metrics; absent: none served. */
  metrics?: { port: number; host: string };
  /** OpenTelemetry traces sent to this OTLP/HTTP traces URL; absent: no tracing. */
  tracing?: { tracesUrl: string };
  namespace: string;
  connection: ReturnType<typeof loadClientConnectConfig>['connectionOptions'];
}

/** Prometheus scrapes from another host, so the metrics port listens on every interface unless told otherwise. */
export const DEFAULT_METRICS_HOST = '0.0.0.0';

/** The traces URL of an OTLP/HTTP collector: its base URL plus `/v1/traces`, unless the path already says it. */
export function otlpTracesUrl(endpoint: string): string {
  const u = new URL(endpoint);
  if (!u.pathname.endsWith('/v1/traces')) u.pathname = `${u.pathname.replace(/\/+$/, '')}/v1/traces`;
  return u.toString();
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const r = WorkerEnv.safeParse(env);
  if (!r.success) {
    throw new ConfigError(
      'Invalid worker configuration:\n' + formatIssues(r.error, { root: '(config)', separator: '\n', prefix: '  ' }),
    );
  }
  // The Temporal connection from the same environment (its TEMPORAL_* variables and profile file), read here once.
  const vars = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  const c = loadClientConnectConfig({ overrideEnvVars: vars });
  return {
    taskQueue: r.data.ARGUS_TASK_QUEUE,
    stateDir: defaultStateDir(env),
    stateUrl: r.data.ARGUS_STATE_URL || undefined,
    stateSchema: r.data.ARGUS_STATE_SCHEMA,
    maxConcurrentActivityTaskExecutions: r.data.ARGUS_MAX_CONCURRENT_ACTIVITIES,
    maxConcurrentWorkflowTaskExecutions: r.data.ARGUS_MAX_CONCURRENT_WORKFLOW_TASKS,
    maxTaskQueueActivitiesPerSecond: r.data.ARGUS_TASK_QUEUE_ACTIVITIES_PER_SECOND,
    ...(r.data.ARGUS_METRICS_PORT !== undefined
      ? { metrics: { port: r.data.ARGUS_METRICS_PORT, host: r.data.ARGUS_METRICS_HOST ?? DEFAULT_METRICS_HOST } }
      : {}),
    ...(r.data.ARGUS_OTEL_ENDPOINT ? { tracing: { tracesUrl: otlpTracesUrl(r.data.ARGUS_OTEL_ENDPOINT) } } : {}),
    namespace: c.namespace ?? env.TEMPORAL_NAMESPACE ?? 'default',
    connection: {
      ...c.connectionOptions,
      address: c.connectionOptions.address ?? env.TEMPORAL_ADDRESS ?? 'localhost:7233',
    },
  };
}
