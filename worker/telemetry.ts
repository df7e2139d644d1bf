import * as net from 'node:net';
import { Runtime } from '@temporalio/worker';
import type { Logger } from '@temporalio/common';
import { ArgusMetrics } from '../activities/metrics';
import { ConfigError, type WorkerConfig } from './config';
import { startMetricsServer, type MetricsServer } from './metrics-server';
import { startTracing, type WorkerTracing } from './tracing';

/** What a worker process exports for operators: metrics on a port, traces to a collector; each off unless set. */
export interface WorkerTelemetry {
  /** ARGUS's counters, for createArgusWorker's activities; absent when metrics are off. */
  metrics?: ArgusMetrics;
  /** Where /metrics is served. */
  metricsUrl?: string;
  /** Where the SDK's own series come from, or why they are not served. */
  sdk?: { url: string } | { absent: string };
  tracing?: WorkerTracing;
  /** Stop serving metrics and flush the traces. */
  close(): Promise<void>;
}

/** A free port on loopback, for Core's exporter (which ARGUS's server reads and nobody else needs to reach). */
async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** `0.0.0.0:9000` or `[::]:9000` as something to connect to: loopback. */
function reachable(socketAddr: string): string {
  return socketAddr.replace(/^0\.0\.0\.0:/, '127.0.0.1:').replace(/^\[::\]:/, '127.0.0.1:');
}

/**
 * The SDK's runtime with Core's Prometheus exporter on a loopback port of its own; returns where it serves.
 * Runs before the worker's connection is made: the runtime's telemetry is fixed when it is created. A runtime
 * already installed with a Prometheus exporter is used as it is. One installed without metrics (the CLI's quiet
 * runtime for `argus demo`) is replaced, with its options kept, if nothing uses it yet; `shutdown` and `isIdle`
 * are the SDK's own (pinned at 1.24.0), which it calls itself when the last worker or connection closes.
 */
async function sdkExporter(logger?: Logger): Promise<{ url: string } | { absent: string }> {
  const current = Runtime._instance;
  const exporter = current?.options.runtimeOptions.metricsExporter;
  if (exporter?.type === 'prometheus') return { url: `http://${reachable(exporter.socketAddr)}/metrics` };
  if (current && exporter) return { absent: `the SDK's runtime exports its metrics by ${exporter.type}` };
  if (current) {
    const idle = (current as unknown as { isIdle(): boolean }).isIdle();
    if (!idle) return { absent: 'the SDK runtime was in use, without metrics, before the worker started' };
    await current.shutdown();
  }
  const base = Runtime.defaultOptions;
  let lastError: unknown;
  // The port is free when picked and bound a moment later: another process may take it in between.
  for (let attempt = 0; attempt < 3; attempt++) {
    const bindAddress = `127.0.0.1:${await freeLoopbackPort()}`;
    try {
      Runtime.install({
        ...base,
        ...(logger ? { logger } : {}),
        telemetryOptions: { ...base.telemetryOptions, metrics: { prometheus: { bindAddress } } },
      });
      return { url: `http://${bindAddress}/metrics` };
    } catch (e) {
      lastError = e;
    }
  }
  return { absent: `Core's exporter could not start: ${String((lastError as Error)?.message ?? lastError)}` };
}

/**
 * Start what the worker exports, before its connection is made (the SDK's runtime is installed here): with
 * `config.metrics`, Core's Prometheus exporter on loopback and ARGUS's /metrics server on the configured port,
 * serving both; with `config.tracing`, OpenTelemetry tracing. Throws ConfigError naming ARGUS_METRICS_PORT when
 * the port cannot be bound.
 */
export async function startWorkerTelemetry(
  config: Pick<WorkerConfig, 'metrics' | 'tracing'>,
  opts: { logger?: Logger } = {},
): Promise<WorkerTelemetry> {
  let server: MetricsServer | undefined;
  let metrics: ArgusMetrics | undefined;
  let sdk: WorkerTelemetry['sdk'];
  if (config.metrics) {
    sdk = await sdkExporter(opts.logger);
    const m = new ArgusMetrics();
    const { host, port } = config.metrics;
    try {
      server = await startMetricsServer({
        host,
        port,
        render: () => m.render(),
        ...('url' in sdk ? { sdkUrl: sdk.url } : { sdkAbsent: sdk.absent }),
      });
    } catch (e) {
      throw new ConfigError(
        `ARGUS_METRICS_PORT=${port} (ARGUS_METRICS_HOST=${host}): cannot serve metrics: ${(e as Error).message}`,
      );
    }
    metrics = m;
  }
  const tracing = config.tracing ? startTracing(config.tracing.tracesUrl) : undefined;
  return {
    ...(metrics ? { metrics } : {}),
    ...(server ? { metricsUrl: server.url } : {}),
    ...(sdk ? { sdk } : {}),
    ...(tracing ? { tracing } : {}),
    async close() {
      await server?.close();
      await tracing?.shutdown().catch(() => undefined);
    },
  };
}
