import type { Command } from 'commander';
import type { SweepInput } from '../../domain/sweep';
import { renderReportText } from '../render';
import { connectClient, uiBaseUrl, workflowUiLink } from '../connect';
import { defaultTaskQueue, resultOf, startSweep } from '../sweeps';
import { err, EXIT_HELP, exitFor } from './output';

// The worker SDK is loaded only by `demo`: every other command starts faster without it.
async function quietRuntime(): Promise<void> {
  const { Runtime, DefaultLogger } = await import('@temporalio/worker');
  // Worker logs go to stderr at WARN so stdout stays the report.
  Runtime.install({
    logger: new DefaultLogger('WARN', (e) => process.stderr.write(`[worker ${e.level}] ${e.message}\n`)),
  });
}

async function runDemo(opts: { json?: boolean }): Promise<number> {
  await quietRuntime();
  const { withInlineWorker } = await import('../worker-inline');
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

/** `argus demo`: the bundled demo catalog, swept by a worker in this process. */
export function addDemoCommand(program: Command): void {
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
}
