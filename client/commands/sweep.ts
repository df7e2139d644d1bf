import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import type { Client } from '@temporalio/client';
import type { SweepInput } from '../../domain/sweep';
import type { SweepPlan } from '../../activities/plan';
import { SA_KEYS, progressQuery, type SweepProgress } from '../../workflows/messages';
import { uiLink, withClient } from '../connect';
import {
  startSweep,
  resultOf,
  catalogLabel,
  defaultTaskQueue,
  sweepInputFromOptions,
  validSweepInput,
  InputError,
  type SweepInputOptions,
} from '../sweeps';
import { followProgress, progressLine } from '../progress';
import { SweepFailedError, sweepFailure } from '../failures';
import { EXIT, EXIT_HELP, err, exitFor, out } from './output';
import { renderReport, type Format } from './report';

/** Options shared by `sweep start`, `sweep plan` and `schedule create`: what to sweep and how. */
export function addSweepInputOptions(cmd: Command): Command {
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
  validSweepInput(input);
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
      validSweepInput(input);
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

/** `argus sweep start|plan|status|result|cancel` (workflow type sweepWorkflow). */
export function addSweepCommand(program: Command): void {
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
}
