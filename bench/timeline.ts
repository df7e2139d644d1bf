import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { arbiterWorkflowId } from '../domain/ids';

/** One activity of a sweep: when it was scheduled, started and closed, in ms after the sweep started. */
export interface Span {
  /** `sweep` (any run of its continue-as-new chain) or `arbiter <page>`. */
  workflow: string;
  activity: string;
  scheduledMs: number;
  startedMs: number;
  closedMs: number;
}

type Event = temporal.api.history.v1.IHistoryEvent;

const msOf = (t: Event['eventTime']): number => (t ? Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6 : Number.NaN);

function spansOf(events: Event[], workflow: string, t0: number): Span[] {
  const scheduled = new Map<string, { activity: string; at: number }>();
  const started = new Map<string, number>();
  const out: Span[] = [];
  let task: { scheduledAt: number; startedAt?: number } | undefined;
  for (const e of events) {
    // Workflow tasks too: the time the workflow's own code and the server's bookkeeping take between activities.
    if (e.workflowTaskScheduledEventAttributes) task = { scheduledAt: msOf(e.eventTime) };
    if (e.workflowTaskStartedEventAttributes && task) task.startedAt = msOf(e.eventTime);
    if ((e.workflowTaskCompletedEventAttributes ?? e.workflowTaskFailedEventAttributes) && task) {
      out.push({
        workflow,
        activity: '(workflow task)',
        scheduledMs: task.scheduledAt - t0,
        startedMs: (task.startedAt ?? task.scheduledAt) - t0,
        closedMs: msOf(e.eventTime) - t0,
      });
      task = undefined;
    }
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(String(e.eventId), { activity: s.activityType?.name ?? '?', at: msOf(e.eventTime) });
    const st = e.activityTaskStartedEventAttributes;
    if (st) started.set(String(st.scheduledEventId), msOf(e.eventTime));
    const closed =
      e.activityTaskCompletedEventAttributes ??
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    const sched = closed ? scheduled.get(String(closed.scheduledEventId)) : undefined;
    if (closed && sched)
      out.push({
        workflow,
        activity: sched.activity,
        scheduledMs: sched.at - t0,
        startedMs: (started.get(String(closed.scheduledEventId)) ?? sched.at) - t0,
        closedMs: msOf(e.eventTime) - t0,
      });
  }
  return out;
}

/**
 * Every activity of a sweep, from its histories: each run of its continue-as-new chain, then its Arbiter children
 * page by page (each part of a page) until the first page past `pages` (the first pass's) that has none. Sorted by
 * start.
 */
export async function sweepTimeline(
  client: Client,
  sweepId: string,
  firstRunId: string,
  pages: number,
): Promise<Span[]> {
  const spans: Span[] = [];
  let t0 = Number.NaN;
  let runId: string | undefined = firstRunId;
  while (runId) {
    const events: Event[] = (await client.workflow.getHandle(sweepId, runId).fetchHistory()).events ?? [];
    if (Number.isNaN(t0)) t0 = msOf(events[0]?.eventTime);
    spans.push(...spansOf(events, 'sweep', t0));
    runId = events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  for (let n = 0; ; n++) {
    let found = 0;
    // A page's reviews: its lineage part, its descriptions (or every proposal), its PII part (pageFixedPoint).
    for (const part of ['lineage', undefined, 'pii'] as const) {
      try {
        const events: Event[] =
          (await client.workflow.getHandle(arbiterWorkflowId(sweepId, n, part)).fetchHistory()).events ?? [];
        spans.push(...spansOf(events, `arbiter ${n}${part ? ` ${part}` : ''}`, t0));
        found++;
      } catch {
        // that part had nothing to review, or the page failed before its review
      }
    }
    if (found === 0 && n >= pages) break;
  }
  return spans.sort((a, b) => a.startedMs - b.startedMs);
}
