import { isCancellation, patched } from '@temporalio/workflow';
import { sendPlannedBatches, type BatchPlan } from './lead-batches';

/**
 * A page's model work (an agent's proposals, the Arbiter's review), batch first, then one entity at a time. With
 * batching (`maxEntities` > 1, in a workflow started since patch `model-batches-v1`) the entities go in the batches
 * `plan` makes — a provisional plan's lead batches first, then the rest planned again (sendPlannedBatches) — and
 * what a batch answer lacked (`batch` returns those ids) is done alone after; without it every entity is done
 * alone. At most `concurrency` calls in flight, started in a deterministic order. A first plan that cannot be made
 * goes to `planFailed` (nothing is then sent), or, without it, fails the caller.
 */
export async function batchesThenAlone(work: {
  entities: string[];
  maxEntities: number;
  concurrency: number;
  plan: (skip: string[]) => Promise<BatchPlan<string>>;
  planFailed?: (err: unknown) => void;
  batch: (entityIds: string[], batch: number) => Promise<string[]>;
  alone: (entityId: string) => Promise<void>;
}): Promise<void> {
  let alone = work.entities;
  if (work.maxEntities > 1 && patched('model-batches-v1')) {
    let plan: BatchPlan<string>;
    try {
      plan = await work.plan([]);
    } catch (err) {
      if (!work.planFailed) throw err;
      work.planFailed(err);
      return;
    }
    const lacking: string[] = [];
    await sendPlannedBatches(plan, restPlanner(work.plan), (batches) =>
      pool(batches, work.concurrency, async ({ items, batch }) => {
        lacking.push(...(await work.batch(items, batch)));
      }),
    );
    alone = lacking.sort();
  }
  await pool(alone, work.concurrency, work.alone);
}

/** Run async work over items with at most `limit` in flight (deterministic order of starts). */
async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let i = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (i < items.length) {
      const item = items[i++] as T;
      await fn(item);
    }
  });
  await Promise.all(lanes);
}

/**
 * How a workflow plans the rest of a page's batches after a provisional plan's lead batches
 * (workflows/lead-batches.ts): `plan` given what was sent, or null when it cannot be made (the first plan's batches
 * are then sent as they were; a cancelled sweep stays cancelled). Null for a workflow that started before this
 * existed (patch `model-batches-lead-v1`): it sends its first plan whole.
 */
function restPlanner<P>(plan: (skip: string[]) => Promise<P>): ((skip: string[]) => Promise<P | null>) | null {
  if (!patched('model-batches-lead-v1')) return null;
  return async (skip) => {
    try {
      return await plan(skip);
    } catch (err) {
      if (isCancellation(err)) throw err;
      return null;
    }
  };
}
