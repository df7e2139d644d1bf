import { Option, type Command } from 'commander';
import { ScheduleAlreadyRunning, type Client } from '@temporalio/client';
import {
  OVERLAP,
  OVERLAP_NAMES,
  createSweepSchedule,
  listSweepSchedules,
  renderScheduleTable,
  temporalScheduleCommand,
  type Overlap,
  type SweepScheduleRequest,
} from '../schedules';
import { uiLink, withClient } from '../connect';
import { InputError, sweepInputFromOptions, type SweepInputOptions } from '../sweeps';
import { out } from './output';
import { addSweepInputOptions } from './sweep';

type ScheduleCreateOptions = SweepInputOptions & {
  id: string;
  cron?: string;
  every?: string;
  taskQueue: string;
  overlap: Overlap;
  paused?: boolean;
  note?: string;
  printTemporalCommand?: boolean;
  json?: boolean;
};

async function scheduleCreate(o: ScheduleCreateOptions): Promise<void> {
  const req: SweepScheduleRequest = {
    scheduleId: o.id,
    cron: o.cron,
    every: o.every,
    input: sweepInputFromOptions(o),
    taskQueue: o.taskQueue,
    overlap: o.overlap,
    paused: Boolean(o.paused),
    note: o.note,
  };
  if (o.printTemporalCommand) {
    out(temporalScheduleCommand(req));
    return;
  }
  await withClient(async (c) => {
    let opts;
    try {
      opts = await createSweepSchedule(c.client, req);
    } catch (e) {
      if (e instanceof ScheduleAlreadyRunning) throw new InputError(`schedule ${o.id} already exists`);
      // The SDK turns the server's "Invalid schedule spec" into a TypeError.
      if (e instanceof TypeError) throw new InputError(`invalid schedule spec: ${e.message}`);
      if (isInvalidArgument(e)) throw new InputError(`the server refused the schedule: ${(e as Error).message}`);
      throw e;
    }
    const wid = opts.action.workflowId ?? '';
    if (o.json) out(JSON.stringify({ scheduleId: o.id, workflowIdPrefix: wid, paused: req.paused }));
    else
      out(
        `Created schedule ${o.id}: ${o.cron ? `cron ${o.cron}` : `every ${o.every}`}, overlap ${o.overlap}` +
          `${req.paused ? ', paused' : ''}.\nEach run starts sweepWorkflow on task queue ${o.taskQueue} as ${wid}-<scheduled time>.`,
      );
  });
}

function isInvalidArgument(e: unknown): boolean {
  for (let x: unknown = e; x; x = (x as { cause?: unknown }).cause)
    if ((x as { code?: unknown }).code === 3) return true; // gRPC INVALID_ARGUMENT
  return false;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function scheduleTrigger(id: string, o: { overlap?: Overlap; json?: boolean }): Promise<void> {
  await withClient(async (c) => {
    const h = c.client.schedule.getHandle(id);
    const before = new Set((await h.describe()).info.recentActions.map((a) => a.action.workflow.workflowId));
    await h.trigger(o.overlap ? OVERLAP[o.overlap].sdk : undefined);
    // The action shows up in the schedule's recent actions once the server has taken it.
    let started: string | undefined;
    for (let i = 0; i < 20 && !started; i++) {
      await sleep(250);
      started = (await h.describe()).info.recentActions
        .map((a) => a.action.workflow.workflowId)
        .find((w) => !before.has(w));
    }
    if (o.json) out(JSON.stringify({ scheduleId: id, workflowId: started ?? null }));
    else if (started) out(`Triggered ${id}: started ${started}\nWeb UI: ${uiLink(c, started)}`);
    else
      out(`Triggered ${id}; no new run showed up within 5 s (the overlap policy may have skipped it: is a run going?)`);
  });
}

/** `argus schedule create|list|pause|unpause|trigger|delete`: sweeps on a Temporal Schedule. */
export function addScheduleCommand(program: Command): void {
  const schedule = program
    .command('schedule')
    .description('Sweeps on a Temporal Schedule: create, list, pause, unpause, trigger, delete.');
  addSweepInputOptions(
    schedule
      .command('create')
      .description(
        'Create a schedule whose every run starts sweepWorkflow as sweep/<catalog>/scheduled-<scheduled time>.',
      )
      .requiredOption('--id <schedule-id>', 'schedule id, e.g. nightly-warehouse')
      .option('--cron <expr>', 'cron expression, e.g. "0 3 * * *" (UTC)')
      .option('--every <duration>', 'interval, e.g. 24h, 30m, 1h30m, 7d'),
  )
    .addOption(
      new Option('--overlap <policy>', 'what to do when a run is due while the last one still runs')
        .choices(OVERLAP_NAMES)
        .default('skip'),
    )
    .option('--paused', 'create it paused')
    .option('--note <text>', 'a note kept on the schedule (shown by list and the Web UI)')
    .option('--print-temporal-command', 'print the equivalent `temporal schedule create` command; create nothing')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  argus schedule create --id nightly-demo --catalog demo --cron "0 3 * * *"\n' +
        '  argus schedule create --id hourly-wh --catalog /data/warehouse.json --every 1h --paused --note "waiting for sign-off"\n' +
        '  argus schedule create --id nightly-demo --every 24h --print-temporal-command',
    )
    .action(async (o: ScheduleCreateOptions) => scheduleCreate(o));

  schedule
    .command('list')
    .description('List ARGUS schedules: id, spec, paused, next run, recent runs.')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      await withClient(async (c) => {
        const rows = await listSweepSchedules(c.client);
        out(o.json ? JSON.stringify(rows, null, 2) : renderScheduleTable(rows));
      });
    });

  const simple = (name: string, description: string, fn: (c: Client, id: string, note?: string) => Promise<string>) =>
    schedule
      .command(`${name} <schedule-id>`)
      .description(description)
      .option('--note <text>', 'why (kept on the schedule)')
      .action(async (id: string, o: { note?: string }) => {
        await withClient(async (c) => out(await fn(c.client, id, o.note)));
      });
  simple('pause', 'Pause a schedule: no run starts until unpaused (trigger still works).', async (c, id, note) => {
    await c.schedule.getHandle(id).pause(note);
    return `Paused ${id}.`;
  });
  simple('unpause', 'Unpause a schedule.', async (c, id, note) => {
    await c.schedule.getHandle(id).unpause(note);
    return `Unpaused ${id}.`;
  });
  schedule
    .command('trigger <schedule-id>')
    .description('Start one run now (even when paused) and print its workflow id.')
    .addOption(new Option('--overlap <policy>', 'overlap policy for this run only').choices(OVERLAP_NAMES))
    .option('--json', 'print JSON {scheduleId, workflowId}')
    .action(async (id: string, o: { overlap?: Overlap; json?: boolean }) => scheduleTrigger(id, o));
  schedule
    .command('delete <schedule-id>')
    .description('Delete a schedule (runs it already started go on).')
    .action(async (id: string) => {
      await withClient(async (c) => {
        await c.client.schedule.getHandle(id).delete();
        out(`Deleted ${id}.`);
      });
    });
}
