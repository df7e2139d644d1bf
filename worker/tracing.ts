import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, WorkerOptions } from '@temporalio/worker';

/**
 * The workflow interceptor modules tracing needs inside the workflow bundle. A worker that bundles its own
 * workflows adds them itself; a prebuilt bundle (tests) must be built with them (`workflowInterceptorModules`).
 */
export const TRACING_WORKFLOW_MODULES: readonly string[] = [
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];

/** What Worker.create needs for tracing, and the provider to flush when the worker stops. */
export interface WorkerTracing {
  tracesUrl: string;
  activityInterceptors: ActivityInterceptorsFactory[];
  workflowModules: readonly string[];
  sinks: NonNullable<WorkerOptions['sinks']>;
  /** Send what is still buffered and stop. */
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry tracing with the SDK's interceptors (`@temporalio/interceptors-opentelemetry`): a span per
 * workflow run, activity and child workflow, linked through Temporal headers, exported in batches to an
 * OTLP/HTTP collector. Registers the provider, the W3C propagator and a context manager globally (the
 * activity interceptor uses OpenTelemetry's global API): once a process.
 */
export function startTracing(tracesUrl: string, serviceName = 'argus-worker'): WorkerTracing {
  const resource = new Resource({ 'service.name': serviceName });
  const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  // The activity interceptor enters the context it reads from the Temporal headers with `context.with`, which
  // only a context manager carries into the span it starts: without one, activity spans would start new traces.
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable() });
  const tracer = provider.getTracer('argus');
  return {
    tracesUrl,
    activityInterceptors: [
      (ctx) => ({
        inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
        outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
      }),
    ],
    workflowModules: TRACING_WORKFLOW_MODULES,
    // Spans made inside workflows leave the sandbox through this sink.
    sinks: { exporter: makeWorkflowExporter(processor, resource) },
    shutdown: () => provider.shutdown(),
  };
}
