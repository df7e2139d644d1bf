import type { Client, WorkflowHandle } from '@temporalio/client';
import { arbiterWorkflowId } from '../domain/ids';

export interface HistoryStats {
  executions: number;
  sweepRuns: number[];
  maxSweepEvents: number;
  maxArbiterEvents: number;
  maxHistoryEvents: number;
}

/**
 * Count history events of every execution of one sweep: each run of its continue-as-new chain and each
 * Arbiter child. Used by tests and the bench to check the 10,240-event ceiling.
 */
export async function sweepHistoryStats(
  client: Client,
  sweepId: string,
  firstRunId: string,
  pageCount: number,
): Promise<HistoryStats> {
  const sweepRuns: number[] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const h: Awaited<ReturnType<WorkflowHandle['fetchHistory']>> = await client.workflow
      .getHandle(sweepId, runId)
      .fetchHistory();
    const events = h.events ?? [];
    sweepRuns.push(events.length);
    const next: string | null | undefined =
      events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    runId = next ?? undefined;
  }
  let maxArbiterEvents = 0;
  let children = 0;
  for (let n = 0; n < pageCount; n++) {
    // A page that reached its fixed point in one pass has an Arbiter per part: lineage flags, descriptions, PII tags.
    for (const part of ['lineage', undefined, 'pii'] as const) {
      try {
        const h = await client.workflow.getHandle(arbiterWorkflowId(sweepId, n, part)).fetchHistory();
        maxArbiterEvents = Math.max(maxArbiterEvents, h.events?.length ?? 0);
        children++;
      } catch {
        /* a page that failed before its Arbiter started (or proposed nothing) has no child */
      }
    }
  }
  const maxSweepEvents = Math.max(0, ...sweepRuns);
  return {
    executions: sweepRuns.length + children,
    sweepRuns,
    maxSweepEvents,
    maxArbiterEvents,
    maxHistoryEvents: Math.max(maxSweepEvents, maxArbiterEvents),
  };
}
