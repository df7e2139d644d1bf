#!/usr/bin/env node
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import { connectClient, uiBaseUrl, workflowUiLink, type ArgusClient } from './connect';
import {
  startSweep,
  resultOf,
  catalogLabel,
  defaultTaskQueue,
  sweepInputFromOptions,
  InputError,
  type SweepInputOptions,
} from './sweeps';
import { renderReportText } from './render';
import { renderReportMarkdown } from './render-markdown';
import { renderReportHtml } from './render-html';
import { followProgress, progressLine } from './progress';
import { pendingReviews, renderPendingTable, reviewDecisions, sendDecisions, type ReviewDecision } from './review';
import { addReviewServeCommand } from './review-server';
import {
  OVERLAP,
  OVERLAP_NAMES,
  createSweepSchedule,
  listSweepSchedules,
  renderScheduleTable,
  temporalScheduleCommand,
  type Overlap,
  type SweepScheduleRequest,
} from './schedules';
import { registerEvalCommand } from '../eval/arbiter';
import { undoSweep } from '../activities/undo';
import { openStateStore } from '../state/open';
import { defaultStateDir, projectRoot } from '../activities/paths';
import { SweepFailedError } from './failures';
import { startFakeProvider, FAKE_SCENARIO_HELP } from '../fakes/provider';
import { FAKE_REVIEWERS, type FakeReviewer } from '../fakes/model';
import type { SweepInput } from '../domain/sweep';
import type { SweepReport } from '../domain/report';
import type { SweepPlan } from '../activities/plan';
import { sweepFailure } from './failures';
import { SA_KEYS, progressQuery, type SweepProgress } from '../workflows/messages';

/** Exit codes scripts can rely on. */
export const EXIT = { ok: 0, failed: 1, usage: 2, partial: 3 } as const;

const EXIT_HELP =
  `Exit codes: ${EXIT.ok} complete, ${EXIT.partial} partial (the report says why), ${EXIT.failed} failed, ` +
  `${EXIT.usage} bad usage or input.`;

function err(msg: string): void {
  process.stderr.write(msg + '\n');
}

function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : text + '\n');
}

// The worker SDK is loaded only by `demo`: every other command starts faster without it.
async function quietRuntime(): Promise<void> {
  const { Runtime, DefaultLogger } = await import('@temporalio/worker');
  // Worker logs go to stderr at WARN so stdout stays the report.
  Runtime.install({
    logger: new DefaultLogger('WARN', (e) => process.stderr.write(`[worker ${e.level}] ${e.message}\n`)),
  });
}

async function withClient<T>(fn: (c: ArgusClient) => Promise<T>): Promise<T> {
  const c = await connectClient();
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

function uiLink(c: ArgusClient, workflowId: string, runId?: string): string {
  return workflowUiLink(uiBaseUrl(c.address), c.namespace, workflowId, runId);
}

const exitFor = (r: SweepReport): number => (r.partial ? EXIT.partial : EXIT.ok);

async function runDemo(opts: { json?: boolean }): Promise<number> {
  await quietRuntime();
  const { withInlineWorker } = await import('./worker-inline');
  const c = await connectClient();
  try {
    const input: SweepInput = { catalog: { kind: 'demo' } };
    const report = await withInlineWorker(async () => {
      const handle = await startSweep(c.client, input, { taskQueue: defaultTaskQueue() });
      const desc = await handle.describe();
      const link = workflowUiLink(uiBaseUrl(c.address), c.namespace, handle.workflowId, desc.runId);
      if (!opts.json) err(`Started ${handle.workflowId} on ${c.address} — Web UI: ${link}`);
      const r = await resultOf(handle);
      return { r, link };
    });
    if (opts.json) process.stdout.write(JSON.stringify({ ...report.r, webUi: report.link }, null, 2) + '\n');
    else {
      process.stdout.write(renderReportText(report.r, { uiLink: report.link }) + '\n');
      if (report.r.written === 0 && !report.r.dryRun) process.stdout.write('This run wrote nothing to the catalog.\n');
    }
    return exitFor(report.r);
  } finally {
    await c.close();
  }
}

const FORMATS = ['text', 'markdown', 'html', 'json'] as const;
type Format = (typeof FORMATS)[number];

function renderReport(r: SweepReport, format: Format, link?: string): string {
  switch (format) {
    case 'json':
      return JSON.stringify(link ? { ...r, webUi: link } : r, null, 2) + '\n';
    case 'markdown':
      return renderReportMarkdown(r, { uiLink: link });
    case 'html':
      return renderReportHtml(r, { uiLink: link });
    case 'text':
      return renderReportText(r, { uiLink: link }) + '\n';
  }
}

/** Options shared by `sweep start` and `schedule create`: what to sweep and how. */
function addSweepInputOptions(cmd: Command): Command {
  return cmd
    .option(
      '--catalog <demo|postgres|dbt|path>',
      'the bundled demo, a live PostgreSQL database, a dbt project, or a catalog file (a relative path is resolved ' +
        'against this directory; the worker must see the same path)',
      'demo',
    )
    .option('--project-dir <dir>', 'with --catalog dbt: the dbt project folder (default: this directory)')
    .option('--schemas <a,b>', 'with --catalog postgres: the schemas to sweep (default: every non-system schema)')
    .option(
      '--connection-env <NAME>',
      "with --catalog postgres: the worker's environment variable holding the connection string (default ARGUS_PG_URL)",
    )
    .option('--input-file <file>', 'a JSON file with the whole sweep input (overrides --catalog)')
    .option(
      '--endpoints-file <file>',
      'a JSON array of OpenAI-compatible endpoints {id, baseUrl, model, apiKeyEnv}; apiKeyEnv NAMES the worker ' +
        'environment variable holding the key, never the key itself',
    )
    .addOption(
      new Option('--review <mode>', 'declared review mode (default: model with endpoints, else mechanical)').choices([
        'mechanical',
        'model',
      ]),
    )
    .option('--dry-run', 'review but write nothing')
    .option('--full', 'judge every entity, not only what changed since the last sweep ("incremental": false)')
    .option('--page-size <n>', 'entities per page')
    .option('--concurrency <n>', 'pages in flight')
    .option('--task-queue <name>', 'task queue of the ARGUS workers (env ARGUS_TASK_QUEUE)', defaultTaskQueue());
}

type StartOptions = SweepInputOptions & {
  taskQueue: string;
  runKey?: string;
  wait?: boolean;
  json?: boolean;
  progress: boolean;
  plan?: boolean;
};

/** The input of `sweep plan <input>`: a JSON file's path, or the JSON itself; else the sweep options. */
function planInput(arg: string | undefined, o: SweepInputOptions): SweepInput {
  if (arg === undefined) return sweepInputFromOptions(o);
  let text = arg;
  if (!arg.trimStart().startsWith('{')) {
    try {
      text = readFileSync(arg, 'utf8');
    } catch (e) {
      throw new InputError(`cannot read sweep input ${arg}: ${(e as Error).message}`);
    }
  }
  try {
    return JSON.parse(text) as SweepInput;
  } catch (e) {
    throw new InputError(`sweep input ${arg} is not JSON: ${(e as Error).message}`);
  }
}

/** Run the plan on the workers (they hold the catalogs, the budgets spent and the providers' last headers). */
async function runPlan(c: { client: Client }, input: SweepInput, taskQueue: string): Promise<SweepPlan> {
  const id = `plan/${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  try {
    return await c.client.workflow.execute('planSweepWorkflow', { taskQueue, workflowId: id, args: [input] });
  } catch (e) {
    throw sweepFailure(id, e);
  }
}

function planText(p: SweepPlan): string {
  const lines = [
    `Plan: ${p.verdict === 'fits' ? 'FITS' : p.verdict === 'partial' ? `FITS ON ${p.fitting} OF ${p.entities} ENTITIES` : 'DOES NOT FIT'}`,
    p.text,
    `  would spend: ${p.calls} calls, ${p.promptTokens.toLocaleString('en-US')} prompt + ${p.completionTokens.toLocaleString('en-US')} completion tokens (the whole sweep: ${p.needed.calls} calls, ${p.needed.tokens.toLocaleString('en-US')} tokens)`,
    ...p.endpoints.map(
      (e) =>
        `  ${e.endpointId}: ${e.remainingTokens === null ? 'no known limit' : `${e.remainingTokens.toLocaleString('en-US')} tokens left`} (${e.source}); ${e.spentTodayTokens.toLocaleString('en-US')} spent today`,
    ),
    `  order: ${p.order}`,
  ];
  if (p.incremental)
    lines.splice(
      1,
      0,
      `  since the last sweep: ${p.incremental.new} new, ${p.incremental.changed} changed, ${p.incremental.unchanged} unchanged (${p.incremental.carriedOver} carried over), ${p.incremental.gone} gone; ${p.incremental.judged} to judge`,
    );
  if (p.firstFitting.length) lines.push(`  first swept: ${p.firstFitting.slice(0, 10).join(', ')}`);
  if (p.deferred)
    lines.push(`  deferred (${p.deferred}): ${p.firstDeferred.slice(0, 10).join(', ')}${p.deferred > 10 ? ', …' : ''}`);
  return lines.join('\n');
}

async function sweepPlan(arg: string | undefined, o: SweepInputOptions & { taskQueue: string; json?: boolean }) {
  const input = planInput(arg, o);
  await withClient(async (c) => {
    const plan = await runPlan(c, input, o.taskQueue);
    out(o.json ? JSON.stringify(plan, null, 2) : planText(plan));
    // 0 fits, 3 fits only in part or not at all: scripts can gate a nightly sweep on it.
    process.exitCode = plan.verdict === 'fits' ? 0 : 3;
  });
}

async function sweepStart(o: StartOptions): Promise<void> {
  const input = sweepInputFromOptions(o);
  await withClient(async (c) => {
    if (o.plan) {
      const plan = await runPlan(c, input, o.taskQueue);
      err(planText(plan));
      if (plan.verdict !== 'fits' && !input.fitBudget) {
        err(
          'Not started: the sweep does not fit its model budget. Add "fitBudget": true to sweep what fits and defer the rest, or start without --plan.',
        );
        process.exitCode = 3;
        return;
      }
    }
    const h = await startSweep(c.client, input, { runKey: o.runKey, taskQueue: o.taskQueue });
    const d = await h.describe();
    const link = uiLink(c, h.workflowId, d.runId);
    if (!o.wait) {
      if (o.json) out(JSON.stringify({ workflowId: h.workflowId, runId: d.runId, webUi: link }));
      else out(`Started ${h.workflowId} (${catalogLabel(input)})\nWeb UI: ${link}`);
      return;
    }
    err(`Started ${h.workflowId} — Web UI: ${link}`);
    const done = resultOf(h);
    const r = o.progress ? await followProgress(h, done) : await done;
    out(renderReport(r, o.json ? 'json' : 'text', link));
    process.exitCode = exitFor(r);
  });
}

interface StatusView {
  workflowId: string;
  runId: string;
  status: string;
  summary?: string;
  startTime: string;
  closeTime?: string;
  searchAttributes: { ArgusCatalog?: string; ArgusMode?: string; ArgusPartial?: boolean };
  progress?: SweepProgress;
  result?: unknown;
  /** Root cause of a FAILED sweep. */
  failure?: { type: string; message: string };
  webUi: string;
}

async function sweepStatus(id: string, o: { json?: boolean }): Promise<void> {
  await withClient(async (c) => {
    const h = c.client.workflow.getHandle(id);
    const d = await h.describe();
    const view: StatusView = {
      workflowId: d.workflowId,
      runId: d.runId,
      status: d.status.name,
      summary: await d.staticSummary(),
      startTime: d.startTime.toISOString(),
      closeTime: d.closeTime?.toISOString(),
      searchAttributes: {
        ArgusCatalog: d.typedSearchAttributes.get(SA_KEYS.catalog),
        ArgusMode: d.typedSearchAttributes.get(SA_KEYS.mode),
        ArgusPartial: d.typedSearchAttributes.get(SA_KEYS.partial),
      },
      result: d.memo?.summary,
      webUi: uiLink(c, d.workflowId, d.runId),
    };
    if (d.status.name === 'RUNNING') {
      try {
        view.progress = await h.query(progressQuery);
      } catch (e) {
        err(`(progress query not answered: ${(e as Error).message})`);
      }
    }
    let failure: SweepFailedError | undefined;
    if (d.status.name === 'FAILED') {
      // The close event holds the failure: name its root cause, not the wrapper ("Activity task failed").
      const err = await resultOf(h).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (err instanceof SweepFailedError) {
        failure = err;
        view.failure = err.root;
      } else if (err !== undefined) throw err;
    }
    if (o.json) out(JSON.stringify(view, null, 2));
    else {
      const sa = view.searchAttributes;
      const lines = [
        `${view.workflowId}: ${view.status}${view.status === 'COMPLETED' && sa.ArgusPartial ? ' (PARTIAL)' : ''}`,
        ...(view.summary ? [`  ${view.summary}`] : []),
        `  run ${view.runId}, started ${view.startTime}${view.closeTime ? `, closed ${view.closeTime}` : ''}`,
        `  ArgusCatalog=${sa.ArgusCatalog ?? '—'} ArgusMode=${sa.ArgusMode ?? '—'} ArgusPartial=${sa.ArgusPartial ?? '—'}`,
      ];
      if (view.progress) lines.push(`  progress: ${progressLine(view.progress)}`);
      if (view.failure) lines.push(`  failed: ${view.failure.type}: ${view.failure.message}`);
      const s = view.result as
        | {
            partial: boolean;
            partialReasons: string[];
            entities?: { requested: number; processed: number; failed: number };
            outcomes: { approved: number; rejected: number; not_reviewed: number };
            written: number;
            coverage: { before: number; after: number };
            piiGovernance: number;
          }
        | undefined;
      // A failed sweep's memo holds only its verdict and reason (shown as `failed:` above).
      if (s?.entities) {
        lines.push(
          `  result: ${s.partial ? 'PARTIAL' : 'complete'}; ${s.entities.processed}/${s.entities.requested} entities, ` +
            `${s.outcomes.approved} approved, ${s.outcomes.rejected} rejected, ${s.outcomes.not_reviewed} not reviewed, ` +
            `${s.written} written; description coverage ${(s.coverage.before * 100).toFixed(1)} % → ` +
            `${(s.coverage.after * 100).toFixed(1)} %, PII governance ${(s.piiGovernance * 100).toFixed(1)} %`,
        );
        for (const why of s.partialReasons) lines.push(`    ! ${why}`);
      }
      lines.push(`  Web UI: ${view.webUi}`);
      out(lines.join('\n'));
    }
    if (d.status.name === 'COMPLETED') process.exitCode = view.searchAttributes.ArgusPartial ? EXIT.partial : EXIT.ok;
    else if (failure) process.exitCode = failure.exitCode;
    else if (d.status.name !== 'RUNNING' && d.status.name !== 'CONTINUED_AS_NEW') process.exitCode = EXIT.failed;
  });
}

async function sweepResult(id: string, format: Format): Promise<void> {
  await withClient(async (c) => {
    const h = c.client.workflow.getHandle(id);
    const r = await resultOf(h);
    out(renderReport(r, format, format === 'json' ? undefined : uiLink(c, id)));
    process.exitCode = exitFor(r);
  });
}

async function reportCommand(id: string, o: { format?: Format; json?: boolean; out?: string }): Promise<void> {
  const format: Format = o.json ? 'json' : (o.format ?? 'text');
  await withClient(async (c) => {
    const r = await resultOf(c.client.workflow.getHandle(id));
    const text = renderReport(r, format);
    if (o.out) {
      writeFileSync(o.out, text);
      err(`Wrote the ${format} report of ${id} to ${o.out}${r.partial ? ' (PARTIAL sweep)' : ''}`);
    } else out(text);
    process.exitCode = exitFor(r);
  });
}

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

async function reviewDecide(
  sweepId: string,
  ids: string[],
  decision: ReviewDecision,
  o: { reviewer: string; comment?: string; all?: boolean; json?: boolean },
): Promise<void> {
  if (o.all && ids.length) throw new InputError('give proposal ids or --all, not both');
  await withClient(async (c) => {
    const chosen = o.all ? (await pendingReviews(c.client, sweepId)).map((p) => p.proposalId) : ids;
    if (o.all && chosen.length === 0) {
      out(o.json ? JSON.stringify({ accepted: 0, stillPending: 0 }) : 'No proposal is waiting for review.');
      return;
    }
    const input = reviewDecisions(chosen, decision, o.reviewer, { comment: o.comment });
    let res;
    try {
      res = await sendDecisions(c.client, sweepId, input);
    } catch (e) {
      if (e instanceof WorkflowUpdateFailedError)
        throw new InputError(`the sweep refused the decisions: ${e.cause?.message ?? e.message}`);
      throw e;
    }
    if (o.json) out(JSON.stringify(res));
    else
      out(
        `${decision.replace('_', ' ')}: ${input.decisions.length} proposal(s) by ${o.reviewer}; ` +
          `the sweep accepted ${res.accepted}, ${res.stillPending} still pending.`,
      );
  });
}

async function fakeProvider(o: {
  scenario: string;
  port: string;
  host: string;
  reviewer: FakeReviewer;
  latencyMs: string;
  quiet?: boolean;
}) {
  if (!/^\d+$/.test(o.port)) throw new InputError(`--port must be a number, got "${o.port}"`);
  if (!/^\d+$/.test(o.latencyMs)) throw new InputError(`--latency-ms must be a number, got "${o.latencyMs}"`);
  let provider;
  try {
    provider = await startFakeProvider({
      port: Number(o.port),
      host: o.host,
      scenario: o.scenario,
      reviewer: o.reviewer,
      latencyMs: Number(o.latencyMs),
      log: o.quiet ? undefined : (line) => err(line),
    });
  } catch (e) {
    if (/unknown scenario|unknown reviewer|invalid port|invalid latencyMs|loopback/.test((e as Error).message))
      throw new InputError((e as Error).message);
    throw e;
  }
  out(
    [
      `Fake OpenAI-compatible provider on ${provider.url} (scenario ${o.scenario}, reviewer ${o.reviewer}).`,
      `Base URL: ${provider.baseUrl()}`,
      `Any scenario by path: ${provider.url}/s/<scenario>[/r/<reviewer>]/v1, e.g. ${provider.baseUrl('burst-2')}`,
      '',
      'Scenarios:',
      ...FAKE_SCENARIO_HELP.map((l) => `  ${l}`),
      `Reviewers: ${FAKE_REVIEWERS.join(', ')}`,
      '',
      'Endpoints file (--endpoints-file) for a sweep against it:',
      `  ${JSON.stringify([{ id: 'fake', baseUrl: provider.baseUrl(), model: 'argus-fake' }])}`,
      '',
      'Ctrl-C stops it.',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await provider.close();
  err('fake provider stopped');
}

/** The version in ARGUS's package.json (source checkout or installed package alike). */
export function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export function buildProgram(): Command {
  const program = new Command('argus')
    .description(
      'ARGUS keeps a data catalog honest: sweeps on Temporal with agents, an Arbiter and exactly-once writes.',
    )
    .version(packageVersion(), '-V, --version', 'print the ARGUS version')
    .showHelpAfterError()
    // Usage errors exit 2 (scripts rely on it); help exits 0.
    .exitOverride()
    .addHelpText(
      'after',
      `\n${EXIT_HELP}\n` +
        'Connection: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_* or a temporal.toml profile (TEMPORAL_PROFILE).\n' +
        'Every command has --help. Docs: docs/cli.md.',
    );

  program
    .command('demo')
    .description(
      'Sweep the bundled demo catalog in mechanical (no-model) review with a worker in this process, then print the report.',
    )
    .option('--json', 'print only the JSON report on stdout')
    .addHelpText('after', `\n${EXIT_HELP}`)
    .action(async (o: { json?: boolean }) => {
      process.exitCode = await runDemo(o);
    });

  const sweep = program
    .command('sweep')
    .description('Start, follow, inspect and cancel sweeps (workflow type sweepWorkflow).');
  addSweepInputOptions(
    sweep
      .command('start')
      .description('Start a sweep on the task queue (a worker must be running: npm run worker).')
      .addHelpText(
        'after',
        `\nExamples:\n  argus sweep start --catalog demo --wait\n  argus sweep start --catalog /data/warehouse.json --endpoints-file endpoints.json --review model\n\n` +
          `Without --wait it prints the workflow id and exits 0. With --wait: ${EXIT_HELP}`,
      ),
  )
    .option('--run-key <key>', 'last part of the workflow id sweep/<catalog>/<run-key> (default: a timestamp)')
    .option(
      '--wait',
      'wait for the result (progress on stderr: a bar on a terminal, lines otherwise), print the report',
    )
    .option('--no-progress', 'with --wait: no progress on stderr')
    .option('--plan', 'plan first (see sweep plan); start only if it fits, or if the input asks for fitBudget')
    .option('--json', 'print JSON')
    .action(async (o: StartOptions) => sweepStart(o));

  addSweepInputOptions(
    sweep
      .command('plan [input]')
      .description(
        'Before any model call: the calls and tokens a sweep would need (from the prompts it would send) against ' +
          "what its endpoints have left (a declared budget less today's spending, the providers' last rate-limit " +
          'headers): fits, fits on N of M entities (in this order), or does not fit. <input>: a sweep input JSON ' +
          'file or the JSON itself; without it, the options below.',
      )
      .addHelpText(
        'after',
        `\nExamples:\n  argus sweep plan nightly.json\n  argus sweep plan '{"catalog":{"kind":"demo"},"endpoints":[{"id":"groq","baseUrl":"https://api.groq.com/openai/v1","model":"llama-3.1-8b-instant","apiKeyEnv":"GROQ_API_KEY","budget":{"tokensPerDay":100000}}]}'\n\nExit codes: 0 fits, 3 fits only in part or not at all, 2 invalid input.`,
      ),
  )
    .option('--json', 'print JSON')
    .action(async (arg: string | undefined, o: SweepInputOptions & { taskQueue: string; json?: boolean }) =>
      sweepPlan(arg, o),
    );

  sweep
    .command('status <sweep-id>')
    .description(
      'Describe a sweep: status, search attributes (ArgusCatalog, ArgusMode, ArgusPartial), live progress while it runs, the result summary when done.',
    )
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `\nExit codes: ${EXIT.ok} running or complete, ${EXIT.partial} completed partial, ${EXIT.failed} failed, cancelled, terminated or timed out (or not found).`,
    )
    .action(async (id: string, o: { json?: boolean }) => sweepStatus(id, o));

  sweep
    .command('result <sweep-id>')
    .description('Wait for a sweep to finish and print its report.')
    .option('--json', 'print the JSON report')
    .addHelpText('after', `\n${EXIT_HELP}`)
    .action(async (id: string, o: { json?: boolean }) => sweepResult(id, o.json ? 'json' : 'text'));

  sweep
    .command('cancel <sweep-id>')
    .description('Request cancellation of a running sweep (pages in flight stop; nothing more is written).')
    .action(async (id: string) => {
      await withClient(async (c) => {
        await c.client.workflow.getHandle(id).cancel();
        out(`Cancellation requested for ${id}.`);
      });
    });

  program
    .command('report <sweep-id>')
    .description('Print (or write) the report of a sweep, waiting for it to finish if it is still running.')
    .addOption(
      new Option('--format <format>', 'text, markdown, html (one self-contained page) or json')
        .choices(FORMATS)
        .default('text'),
    )
    .option('--json', 'same as --format json')
    .option('--out <file>', 'write the report to this file instead of stdout')
    .addHelpText(
      'after',
      `\nExamples:\n  argus report sweep/demo/2026-11-29T14-43-17-729Z --format markdown > report.md\n  argus report sweep/demo/2026-11-29T14-43-17-729Z --format html --out report.html\n\n${EXIT_HELP}`,
    )
    .action(async (id: string, o: { format?: Format; json?: boolean; out?: string }) => reportCommand(id, o));

  program
    .command('undo <sweep-id>')
    .description(
      "Undo one sweep's writes using the audit log (values changed since are left alone and listed). Reads the " +
        'PostgreSQL state store when ARGUS_STATE_URL is set, else the state folder.',
    )
    .option('--state-dir <dir>', 'ARGUS state folder', defaultStateDir())
    .option('--json', 'print JSON')
    .action(async (id: string, o: { stateDir: string; json?: boolean }) => {
      // The sweep's audit trail is where its workers kept state: PostgreSQL when ARGUS_STATE_URL is set.
      const store = await openStateStore({
        stateDir: o.stateDir,
        stateUrl: process.env.ARGUS_STATE_URL,
        stateSchema: process.env.ARGUS_STATE_SCHEMA,
      });
      let res;
      try {
        res = await undoSweep(store, id, { stateDir: o.stateDir });
      } finally {
        await store.close();
      }
      if (o.json) process.stdout.write(JSON.stringify(res, null, 2) + '\n');
      else
        for (const r of res) {
          process.stdout.write(
            `Undid ${r.undone} writes of ${r.sweepId} in ${r.catalog}${r.alreadyUndone ? ` (${r.alreadyUndone} already undone)` : ''}\n`,
          );
          for (const cf of r.conflicts) process.stdout.write(`  left alone: ${cf.proposalId}: ${cf.note}\n`);
        }
    });

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

  const review = program
    .command('review')
    .description('Human review of a running sweep: list what waits for a person, approve or reject it.');
  review
    .command('list <sweep-id>')
    .description('List the proposals waiting for a human decision (the pendingReviews query).')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      await withClient(async (c) => {
        const rows = await pendingReviews(c.client, id);
        out(o.json ? JSON.stringify(rows, null, 2) : renderPendingTable(rows));
      });
    });
  const decide = (name: 'approve' | 'reject') => {
    const cmd = review
      .command(`${name} <sweep-id> [proposal-ids...]`)
      .description(
        `${name === 'approve' ? 'Approve' : 'Reject'} proposals (the review update; several ids or --all in one update).`,
      )
      .requiredOption('--reviewer <name>', 'who decides (kept in the audit trail)')
      .option('--comment <text>', 'why')
      .option('--all', 'every proposal pending now')
      .option('--json', 'print JSON {accepted, stillPending}');
    if (name === 'reject') cmd.option('--needs-changes', 'record the decision as needs_changes rather than rejected');
    cmd.addHelpText(
      'after',
      `\nExit codes: ${EXIT.ok} accepted, ${EXIT.usage} refused (unknown or already decided ids, bad input), ${EXIT.failed} error.`,
    );
    cmd.action(
      async (
        id: string,
        ids: string[],
        o: { reviewer: string; comment?: string; all?: boolean; json?: boolean; needsChanges?: boolean },
      ) => reviewDecide(id, ids, name === 'approve' ? 'approved' : o.needsChanges ? 'needs_changes' : 'rejected', o),
    );
  };
  decide('approve');
  decide('reject');
  addReviewServeCommand(review);

  program
    .command('fake-provider')
    .description('Run the fake OpenAI-compatible provider (scripted model, misbehaves on request) until Ctrl-C.')
    .option('--scenario <name>', 'behaviour of the base URL /v1 (see the list it prints)', 'ok')
    .option('--port <port>', 'port on loopback (0: any free one)', '0')
    .option('--host <host>', 'loopback address to bind', '127.0.0.1')
    .addOption(
      new Option('--reviewer <kind>', 'how it answers review tasks').choices(FAKE_REVIEWERS).default('correct'),
    )
    .option('--latency-ms <ms>', "delay every answer by this many ms (a provider's latency, for benchmarks)", '0')
    .option('--quiet', 'do not log requests on stderr')
    .addHelpText('after', `\nScenarios:\n${FAKE_SCENARIO_HELP.map((l) => `  ${l}`).join('\n')}`)
    .action(async (o: Parameters<typeof fakeProvider>[0]) => fakeProvider(o));

  registerEvalCommand(program);
  return program;
}

/** Exit code for an error that escaped a command. */
export function exitCodeFor(e: unknown): number {
  if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (e instanceof InputError) return EXIT.usage;
  if (e instanceof SweepFailedError) return e.exitCode;
  return EXIT.failed;
}

if (require.main === module) {
  buildProgram()
    .parseAsync(process.argv)
    .catch((e: unknown) => {
      if (!(e instanceof CommanderError)) {
        const msg =
          e instanceof WorkflowNotFoundError
            ? `no workflow ${e.workflowId}${e.runId ? ` (run ${e.runId})` : ''}`
            : e instanceof ScheduleNotFoundError
              ? `no schedule ${e.scheduleId}`
              : ((e as Error).message ?? String(e));
        err(`argus: ${msg}`);
      }
      process.exitCode = exitCodeFor(e);
    });
}
