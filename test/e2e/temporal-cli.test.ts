// The `temporal` CLI starts and reads sweeps with nothing but JSON: the real binary against the test server,
// with an ARGUS worker in this process.
import * as path from 'node:path';
import { writeFileSync } from 'node:fs';
import { uniqueId } from '../support/temporal-env';
import { useArgusWorker, copyCatalog, readCatalog, DEMO_CATALOG } from '../support/argus-worker';
import { FailureType } from '../../domain/ids';
import type { SweepReport } from '../../domain/report';
import { sweepStartArgs, temporal } from './spawn';

const w = useArgusWorker('tq-temporal-cli');

interface Describe {
  workflowExecutionInfo: { status: string; type: { name: string }; taskQueue: string };
  closeEvent?: {
    workflowExecutionCompletedEventAttributes?: { result: unknown[] };
    workflowExecutionFailedEventAttributes?: {
      failure: { message: string; applicationFailureInfo?: { type: string; nonRetryable?: boolean } };
    };
  };
}

async function describe_(id: string): Promise<Describe> {
  const r = await temporal(['workflow', 'describe', '--workflow-id', id, '--output', 'json']);
  expect(r).toMatchObject({ code: 0 });
  return JSON.parse(r.stdout) as Describe;
}

/** Poll `temporal workflow describe` until the workflow is closed. */
async function closed(id: string, timeoutMs = 60_000): Promise<Describe> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const d = await describe_(id);
    if (d.workflowExecutionInfo.status !== 'WORKFLOW_EXECUTION_STATUS_RUNNING') return d;
    if (Date.now() > until) throw new Error(`${id} still running after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

function catalogCopy(name: string): string {
  return copyCatalog(DEMO_CATALOG, path.join(w.tw.stateDir, 'copies', name));
}

/** `temporal workflow start` of a sweep on the test worker's queue, as a user types it, plus the input flags. */
const startSweepArgs = (id: string, ...input: string[]) => sweepStartArgs(w.tw.taskQueue, id, ...input);

test('workflow start --input, then workflow result and describe: completed with the JSON report', async () => {
  const file = catalogCopy('inline-input');
  const entities = readCatalog(file).entities.length;
  const id = uniqueId('sweep/temporal-cli/inline');
  const start = await temporal(
    startSweepArgs(id, '--input', JSON.stringify({ catalog: { kind: 'file', path: file } })),
  );
  expect(start.code).toBe(0);
  expect(start.stdout).toContain(id);

  const result = await temporal(['workflow', 'result', '--workflow-id', id, '--output', 'json']);
  expect(result.code).toBe(0);
  const res = JSON.parse(result.stdout) as {
    status: string;
    closeEvent: { workflowExecutionCompletedEventAttributes: { result: SweepReport[] } };
  };
  expect(res.status).toBe('COMPLETED');
  const report = res.closeEvent.workflowExecutionCompletedEventAttributes.result[0]!;
  expect(report).toMatchObject({
    reportVersion: 1,
    sweepId: id,
    partial: false,
    mode: 'mechanical',
    entities: { requested: entities, processed: entities, failed: 0 },
  });
  expect(report.written).toBe(report.outcomes.approved);
  expect(report.written).toBeGreaterThan(0);

  const d = await closed(id);
  expect(d.workflowExecutionInfo.status).toBe('WORKFLOW_EXECUTION_STATUS_COMPLETED');
  expect(d.workflowExecutionInfo.type.name).toBe('sweepWorkflow');
  expect(d.closeEvent?.workflowExecutionCompletedEventAttributes?.result[0]).toMatchObject({
    sweepId: id,
    written: report.written,
  });
});

test('workflow start --input-file: same sweep from a file, dry run writes nothing', async () => {
  const file = catalogCopy('input-file');
  const before = JSON.stringify(readCatalog(file));
  const inputFile = path.join(w.tw.stateDir, 'copies', 'sweep-input.json');
  writeFileSync(inputFile, JSON.stringify({ catalog: { kind: 'file', path: file }, dryRun: true, pageSize: 10 }));
  const id = uniqueId('sweep/temporal-cli/input-file');
  const start = await temporal(startSweepArgs(id, '--input-file', inputFile));
  expect(start.code).toBe(0);
  const d = await closed(id);
  expect(d.workflowExecutionInfo.status).toBe('WORKFLOW_EXECUTION_STATUS_COMPLETED');
  const report = d.closeEvent?.workflowExecutionCompletedEventAttributes?.result[0] as SweepReport;
  expect(report).toMatchObject({ sweepId: id, dryRun: true, written: 0, partial: false });
  expect(report.outcomes.approved).toBeGreaterThan(0);
  expect(JSON.stringify(readCatalog(file))).toBe(before);
});

test('an invalid input fails the workflow at once: FAILED, non-retryable InvalidSweepInput naming pageSize', async () => {
  const id = uniqueId('sweep/temporal-cli/invalid');
  const start = await temporal(startSweepArgs(id, '--input', '{"catalog":{"kind":"demo"},"pageSize":"x"}'));
  expect(start.code).toBe(0);
  const d = await closed(id);
  expect(d.workflowExecutionInfo.status).toBe('WORKFLOW_EXECUTION_STATUS_FAILED');
  const failure = d.closeEvent?.workflowExecutionFailedEventAttributes?.failure;
  expect(failure?.message).toMatch(/pageSize/);
  expect(failure?.applicationFailureInfo).toMatchObject({ type: FailureType.InvalidSweepInput, nonRetryable: true });

  const result = await temporal(['workflow', 'result', '--workflow-id', id, '--output', 'json']);
  expect(result.code).not.toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({ status: 'FAILED' });
});
