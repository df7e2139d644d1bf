#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { Runtime, DefaultLogger } from '@temporalio/worker';
import { connectClient, uiBaseUrl, workflowUiLink } from './connect';
import { startSweep, resultOf, catalogLabel } from './sweeps';
import { renderReportText } from './render';
import { withInlineWorker } from './worker-inline';
import { undoSweep } from '../activities/undo';
import { defaultStateDir } from '../activities/paths';
import { parseSweepInput, type SweepInput } from '../domain/sweep';
import type { SweepReport } from '../domain/report';

/** Exit codes scripts can rely on. */
export const EXIT = { ok: 0, failed: 1, usage: 2, partial: 3 } as const;

function err(msg: string): void {
  process.stderr.write(msg + '\n');
}

function quietRuntime(): void {
  // Worker logs go to stderr at WARN so stdout stays the report.
  Runtime.install({
    logger: new DefaultLogger('WARN', (e) => process.stderr.write(`[worker ${e.level}] ${e.message}\n`)),
  });
}

async function runDemo(opts: { json?: boolean }): Promise<number> {
  quietRuntime();
  const c = await connectClient();
  try {
    const input: SweepInput = { catalog: { kind: 'demo' } };
    const report = await withInlineWorker(async () => {
      const handle = await startSweep(c.client, input);
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
    return report.r.partial ? EXIT.partial : EXIT.ok;
  } finally {
    await c.close();
  }
}

function readInput(opts: {
  catalog?: string;
  inputFile?: string;
  review?: string;
  dryRun?: boolean;
  pageSize?: string;
  concurrency?: string;
}): SweepInput {
  let input: Record<string, unknown>;
  if (opts.inputFile) input = JSON.parse(readFileSync(opts.inputFile, 'utf8')) as Record<string, unknown>;
  else
    input = {
      catalog: !opts.catalog || opts.catalog === 'demo' ? { kind: 'demo' } : { kind: 'file', path: opts.catalog },
    };
  if (opts.review) input.review = opts.review;
  if (opts.dryRun) input.dryRun = true;
  if (opts.pageSize) input.pageSize = Number(opts.pageSize);
  if (opts.concurrency) input.concurrency = Number(opts.concurrency);
  const p = parseSweepInput(input);
  if (!p.ok) throw new UsageError(`Invalid sweep input: ${p.message}`);
  return input as SweepInput;
}

class UsageError extends Error {}

export function buildProgram(): Command {
  const program = new Command('argus')
    .description(
      'ARGUS keeps a data catalog honest: sweeps on Temporal with agents, an Arbiter and exactly-once writes.',
    )
    .showHelpAfterError()
    .addHelpText(
      'after',
      `\nExit codes: ${EXIT.ok} complete, ${EXIT.partial} partial (the report says why), ${EXIT.failed} failed, ${EXIT.usage} bad usage or input.\n` +
        'Connection: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_* or a temporal.toml profile (TEMPORAL_PROFILE).',
    );

  program
    .command('demo')
    .description(
      'Sweep the bundled demo catalog in mechanical (no-model) review with a worker in this process, then print the report.',
    )
    .option('--json', 'print only the JSON report on stdout')
    .action(async (o: { json?: boolean }) => {
      process.exitCode = await runDemo(o);
    });

  const sweep = program.command('sweep').description('Start and follow sweeps.');
  sweep
    .command('start')
    .description('Start a sweep on the task queue (a worker must be running: npm run worker).')
    .option('--catalog <demo|path>', 'the bundled demo or a catalog file (absolute path as the worker sees it)', 'demo')
    .option('--input-file <file>', 'a JSON file with the whole sweep input (overrides --catalog)')
    .addOption(new Option('--review <mode>', 'declared review mode').choices(['mechanical', 'model']))
    .option('--dry-run', 'review but write nothing')
    .option('--page-size <n>', 'entities per page')
    .option('--concurrency <n>', 'pages in flight')
    .option('--run-key <key>', 'last part of the workflow id (default: a timestamp)')
    .option('--wait', 'wait for the result and print the report')
    .option('--json', 'print JSON')
    .action(
      async (o: {
        catalog?: string;
        inputFile?: string;
        review?: string;
        dryRun?: boolean;
        pageSize?: string;
        concurrency?: string;
        runKey?: string;
        wait?: boolean;
        json?: boolean;
      }) => {
        const input = readInput(o);
        const c = await connectClient();
        try {
          const h = await startSweep(c.client, input, { runKey: o.runKey });
          const d = await h.describe();
          const link = workflowUiLink(uiBaseUrl(c.address), c.namespace, h.workflowId, d.runId);
          if (!o.wait) {
            if (o.json)
              process.stdout.write(JSON.stringify({ workflowId: h.workflowId, runId: d.runId, webUi: link }) + '\n');
            else process.stdout.write(`Started ${h.workflowId} (${catalogLabel(input)})\nWeb UI: ${link}\n`);
            return;
          }
          err(`Started ${h.workflowId} — Web UI: ${link}`);
          const r = await resultOf(h);
          process.stdout.write(
            o.json
              ? JSON.stringify({ ...r, webUi: link }, null, 2) + '\n'
              : renderReportText(r, { uiLink: link }) + '\n',
          );
          process.exitCode = r.partial ? EXIT.partial : EXIT.ok;
        } finally {
          await c.close();
        }
      },
    );

  program
    .command('report <sweep-id>')
    .description('Print the report of a finished sweep.')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      const c = await connectClient();
      try {
        const r = (await c.client.workflow.getHandle(id).result()) as SweepReport;
        process.stdout.write(o.json ? JSON.stringify(r, null, 2) + '\n' : renderReportText(r) + '\n');
        process.exitCode = r.partial ? EXIT.partial : EXIT.ok;
      } finally {
        await c.close();
      }
    });

  program
    .command('undo <sweep-id>')
    .description("Undo one sweep's writes using the audit log (values changed since are left alone and listed).")
    .option('--state-dir <dir>', 'ARGUS state folder', defaultStateDir())
    .option('--json', 'print JSON')
    .action(async (id: string, o: { stateDir: string; json?: boolean }) => {
      const res = await undoSweep(o.stateDir, id);
      if (o.json) process.stdout.write(JSON.stringify(res, null, 2) + '\n');
      else
        for (const r of res) {
          process.stdout.write(
            `Undid ${r.undone} writes of ${r.sweepId} in ${r.catalogFile}${r.alreadyUndone ? ` (${r.alreadyUndone} already undone)` : ''}\n`,
          );
          for (const cf of r.conflicts) process.stdout.write(`  left alone: ${cf.proposalId}: ${cf.note}\n`);
        }
    });

  return program;
}

if (require.main === module) {
  buildProgram()
    .parseAsync(process.argv)
    .catch((e: unknown) => {
      err(`argus: ${(e as Error).message ?? String(e)}`);
      process.exitCode = e instanceof UsageError ? EXIT.usage : EXIT.failed;
    });
}
