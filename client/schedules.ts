import type { Client, ScheduleOptions, ScheduleSummary, ScheduleDescription } from '@temporalio/client';
import { readDuration } from '../domain/durations';
import { sweepWorkflowId } from '../domain/ids';
import type { SweepInput } from '../domain/sweep';
import { plainTable } from './render';
import { InputError, sweepStartOptions, type SweepStartOptions } from './sweeps';

/** `--overlap` values and what Temporal calls them (SDK enum, temporal CLI flag value). */
export const OVERLAP = {
  skip: { sdk: 'SKIP', cli: 'Skip' },
  'buffer-one': { sdk: 'BUFFER_ONE', cli: 'BufferOne' },
  'buffer-all': { sdk: 'BUFFER_ALL', cli: 'BufferAll' },
  'allow-all': { sdk: 'ALLOW_ALL', cli: 'AllowAll' },
  'cancel-other': { sdk: 'CANCEL_OTHER', cli: 'CancelOther' },
  'terminate-other': { sdk: 'TERMINATE_OTHER', cli: 'TerminateOther' },
} as const;
export type Overlap = keyof typeof OVERLAP;
export const OVERLAP_NAMES = Object.keys(OVERLAP) as Overlap[];

/** What `argus schedule create` asks for. Exactly one of `cron` and `every`. */
export interface SweepScheduleRequest {
  scheduleId: string;
  cron?: string;
  every?: string;
  input: SweepInput;
  taskQueue: string;
  overlap: Overlap;
  paused: boolean;
  note?: string;
}

/** What ARGUS keeps in the schedule memo so `schedule list` can show the spec as it was written. */
export interface ArgusScheduleMemo {
  spec: string;
  catalog: string;
}

/**
 * `24h`, `30m`, `1h30m`, `1.5h`, `7d`, `90s` (grammar: domain/durations.ts) → milliseconds; InputError otherwise.
 * At least 1s and whole seconds: `temporal schedule create --interval` gets the same value in seconds.
 */
export function parseEvery(text: string): number {
  const r = readDuration(text, { minMs: 1000 });
  if (!r.ok) throw new InputError(`--every: ${r.error}`);
  if (!Number.isInteger(r.ms / 1000))
    throw new InputError(`--every: ${JSON.stringify(text)} is not a whole number of seconds`);
  return r.ms;
}

/** Milliseconds as a Go duration for `temporal schedule create --interval` (which has no `d`): 86400000 → 24h. */
export function goDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${r || (!h && !m) ? `${r}s` : ''}`;
}

function specText(req: Pick<SweepScheduleRequest, 'cron' | 'every'>): string {
  return req.cron ? `cron ${req.cron.trim()}` : `every ${goDuration(parseEvery(req.every ?? ''))}`;
}

function checkRequest(req: SweepScheduleRequest): void {
  if (!/^[\w.:/@-]{1,200}$/.test(req.scheduleId))
    throw new InputError('--id: letters, digits and . _ - : / @ only (at most 200)');
  if (Boolean(req.cron) === Boolean(req.every)) throw new InputError('give exactly one of --cron and --every');
  if (req.cron !== undefined && !req.cron.trim()) throw new InputError('--cron: empty expression');
  if (!(req.overlap in OVERLAP))
    throw new InputError(`--overlap: one of ${OVERLAP_NAMES.join(', ')}, got "${String(req.overlap)}"`);
}

/**
 * The SDK options of a schedule whose action starts `sweepWorkflow` exactly as `argus sweep start` does (same
 * search attributes and summary), with workflow id `sweep/<catalog>/scheduled`: Temporal appends each run's
 * scheduled time, so every run has its own id. Throws InputError on a bad request or sweep input.
 */
export function sweepScheduleOptions(
  req: SweepScheduleRequest,
  o: SweepStartOptions = sweepStartOptions(req.input, req.taskQueue),
): ScheduleOptions {
  checkRequest(req);
  const memo: ArgusScheduleMemo = { spec: specText(req), catalog: o.label };
  return {
    scheduleId: req.scheduleId,
    spec: req.cron ? { cronExpressions: [req.cron.trim()] } : { intervals: [{ every: parseEvery(req.every ?? '') }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'sweepWorkflow',
      taskQueue: o.taskQueue,
      workflowId: sweepWorkflowId(o.label, 'scheduled'),
      args: o.args,
      typedSearchAttributes: o.typedSearchAttributes,
      staticSummary: o.staticSummary,
      staticDetails: o.staticDetails,
    },
    policies: { overlap: OVERLAP[req.overlap].sdk },
    memo: { argus: memo },
    state: { paused: req.paused, ...(req.note ? { note: req.note } : {}) },
  };
}

export async function createSweepSchedule(client: Client, req: SweepScheduleRequest): Promise<ScheduleOptions> {
  const options = sweepScheduleOptions(req);
  await client.schedule.create(options);
  return options;
}

/** Quote one word for a POSIX shell. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The `temporal schedule create ...` command that makes the same schedule (connection from the environment). */
export function temporalScheduleCommand(req: SweepScheduleRequest): string {
  checkRequest(req);
  const start = sweepStartOptions(req.input, req.taskQueue);
  const o = sweepScheduleOptions(req, start);
  const action = o.action;
  const args: string[][] = [
    ['temporal', 'schedule', 'create'],
    ['--schedule-id', o.scheduleId],
    req.cron ? ['--cron', req.cron.trim()] : ['--interval', goDuration(parseEvery(req.every ?? ''))],
    ['--overlap-policy', OVERLAP[req.overlap].cli],
    ['--type', 'sweepWorkflow'],
    ['--task-queue', action.taskQueue],
    ['--workflow-id', action.workflowId ?? ''],
    ['--input', JSON.stringify(action.args?.[0])],
  ];
  for (const p of start.typedSearchAttributes)
    args.push(['--search-attribute', `${p.key.name}=${JSON.stringify(p.value)}`]);
  args.push(['--static-summary', action.staticSummary ?? '']);
  args.push(['--static-details', action.staticDetails ?? '']);
  args.push(['--schedule-memo', `argus=${JSON.stringify((o.memo as { argus: ArgusScheduleMemo }).argus)}`]);
  if (req.paused) args.push(['--paused']);
  if (req.note) args.push(['--notes', req.note]);
  return args.map((a) => a.map(shellQuote).join(' ')).join(' \\\n  ');
}

/** One schedule as `argus schedule list` shows it. */
export interface ScheduleRow {
  scheduleId: string;
  spec: string;
  paused: boolean;
  note?: string;
  nextRun?: string;
  recent: { workflowId: string; scheduledAt: string; takenAt: string }[];
}

/** A spec as words, for schedules made elsewhere (no ARGUS memo). */
export function describeSpec(spec: ScheduleSummary['spec'] | ScheduleDescription['spec'] | undefined): string {
  if (!spec) return '?';
  const parts = [
    ...(spec.intervals ?? []).map((i) => `every ${goDuration(i.every)}`),
    ...(spec.calendars ?? []).map((c) => `calendar ${JSON.stringify(c)}`),
  ];
  return parts.join('; ') || '?';
}

function rowOf(s: ScheduleSummary): ScheduleRow {
  const memo = s.memo?.argus as ArgusScheduleMemo | undefined;
  return {
    scheduleId: s.scheduleId,
    spec: memo?.spec ?? describeSpec(s.spec),
    paused: s.state.paused,
    note: s.state.note || undefined,
    nextRun: s.info.nextActionTimes[0]?.toISOString(),
    recent: s.info.recentActions.map((a) => ({
      workflowId: a.action.workflow.workflowId,
      scheduledAt: a.scheduledAt.toISOString(),
      takenAt: a.takenAt.toISOString(),
    })),
  };
}

/** Schedules whose action starts `sweepWorkflow` (the list is eventually consistent: a new one may lag a moment). */
export async function listSweepSchedules(client: Client): Promise<ScheduleRow[]> {
  const rows: ScheduleRow[] = [];
  for await (const s of client.schedule.list())
    if (s.action?.workflowType === 'sweepWorkflow' || s.memo?.argus) rows.push(rowOf(s));
  return rows.sort((a, b) => a.scheduleId.localeCompare(b.scheduleId));
}

export function renderScheduleTable(rows: ScheduleRow[]): string {
  if (rows.length === 0) return 'No ARGUS schedule.';
  const table = [
    ['schedule', 'spec', 'state', 'next run', 'recent runs'],
    ...rows.map((r) => [
      r.scheduleId,
      r.spec,
      r.paused ? `paused${r.note ? ` (${r.note})` : ''}` : 'active',
      r.paused ? '—' : (r.nextRun ?? '—'),
      r.recent
        .slice(-3)
        .map((a) => a.workflowId)
        .join(', ') || '—',
    ]),
  ];
  return plainTable(table);
}
