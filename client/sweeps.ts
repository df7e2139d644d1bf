import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { TASK_QUEUE, sweepWorkflowId, catalogKey } from '../domain/ids';
import { parseSweepInput, type SweepInput } from '../domain/sweep';
import type { SweepReport } from '../domain/report';
import { SA_KEYS } from '../workflows/messages';
import type { sweepWorkflow } from '../workflows/sweep';

export function runKeyNow(d = new Date()): string {
  return d.toISOString().replace(/[:.]/g, '-');
}

export function catalogLabel(input: SweepInput): string {
  return input.catalog.kind === 'demo'
    ? 'demo'
    : catalogKey(
        input.catalog.path
          .split('/')
          .pop()
          ?.replace(/\.json$/, '') ?? 'file',
      );
}

/** Start a sweep with a meaningful id, typed search attributes and a static summary. Validates input first. */
export async function startSweep(
  client: Client,
  input: SweepInput,
  opts: { runKey?: string; taskQueue?: string; workflowId?: string } = {},
): Promise<WorkflowHandle<typeof sweepWorkflow>> {
  const parsed = parseSweepInput(input);
  if (!parsed.ok) throw new Error(`Invalid sweep input: ${parsed.message}`);
  const label = catalogLabel(input);
  const workflowId = opts.workflowId ?? sweepWorkflowId(label, opts.runKey ?? runKeyNow());
  return client.workflow.start<typeof sweepWorkflow>('sweepWorkflow', {
    taskQueue: opts.taskQueue ?? TASK_QUEUE,
    workflowId,
    args: [input],
    typedSearchAttributes: new TypedSearchAttributes([
      { key: SA_KEYS.catalog, value: label },
      { key: SA_KEYS.mode, value: parsed.value.review },
      { key: SA_KEYS.partial, value: false },
    ]),
    staticSummary: `ARGUS sweep of ${label} (${parsed.value.review} review${parsed.value.dryRun ? ', dry run' : ''})`,
    staticDetails:
      `Catalog: ${input.catalog.kind === 'demo' ? 'bundled demo' : input.catalog.path}\n\n` +
      `Review: ${parsed.value.review}; agents: ${parsed.value.agents.join(', ')}; page size ${parsed.value.pageSize}; ` +
      `concurrency ${parsed.value.concurrency}; endpoints: ${parsed.value.endpoints.map((e) => e.id).join(', ') || 'none'}`,
  });
}

export async function resultOf(handle: WorkflowHandle<typeof sweepWorkflow>): Promise<SweepReport> {
  try {
    return await handle.result();
  } catch (e) {
    if (e instanceof WorkflowFailedError) {
      const cause = e.cause as { message?: string; type?: string } | undefined;
      throw new Error(
        `sweep ${handle.workflowId} failed: ${cause?.type ? cause.type + ': ' : ''}${cause?.message ?? e.message}`,
        { cause: e },
      );
    }
    throw e;
  }
}
