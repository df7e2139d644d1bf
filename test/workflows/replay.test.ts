import * as path from 'node:path';
import { readFileSync, readdirSync } from 'node:fs';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { installQuietRuntime } from '../support/argus-worker';

const dir = path.resolve(__dirname, '../fixtures/histories');
const files = readdirSync(dir).filter((f) => f.endsWith('.binpb'));
const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Record<string, string>;

// A non-deterministic change to sweepWorkflow or arbiterWorkflow makes these replays fail. Histories recorded on
// earlier days stay (scripts/record-histories.ts adds a tagged set): each covers the code paths of its day.
const decoded = (f: string) => temporal.api.history.v1.History.decode(readFileSync(path.join(dir, f)));

test('there are recorded histories of each workflow type, each with its workflow id', () => {
  expect(files.sort()).toEqual(Object.keys(manifest).sort());
  for (const kind of ['sweep-workflow', 'arbiter-workflow', 'sweep-workflow-model', 'arbiter-workflow-model'])
    expect(files.filter((f) => f === `${kind}.binpb` || f.startsWith(`${kind}-20`)).length).toBeGreaterThan(1);
});

test('the latest paths are covered: batched model agents, lead batches, page parts, the gate that plans', () => {
  const markers = files.flatMap((f) =>
    (decoded(f).events ?? []).flatMap((e) => {
      const m = e.markerRecordedEventAttributes;
      if (!m) return [];
      const id = m.details?.['patch-data']?.payloads?.[0]?.data;
      return [id ? JSON.parse(Buffer.from(id).toString('utf8')).id : m.markerName];
    }),
  );
  for (const patch of [
    'model-batches-v1',
    'model-batches-lead-v1',
    'incremental-v1',
    'page-fixed-point-v1',
    'arbiter-gate-plans-v1',
  ])
    expect(markers).toContain(patch);
});

test('a plan, a budget-fitted sweep and a sweep that waited for people are recorded too', () => {
  for (const kind of ['plan-workflow', 'sweep-workflow-fit-budget', 'sweep-workflow-human-review'])
    expect(files.some((f) => f.startsWith(kind))).toBe(true);
  // The human-review history holds the people's decisions: review updates accepted by the sweep.
  const human = files.filter((f) => f.startsWith('sweep-workflow-human-review'));
  for (const f of human) {
    const accepted = (decoded(f).events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    expect(accepted.length).toBeGreaterThan(0);
  }
});

test.each(files)('replays %s with the current workflow code', async (f) => {
  installQuietRuntime();
  const history = decoded(f);
  await expect(
    Worker.runReplayHistory({ workflowsPath: require.resolve('../../workflows') }, history, manifest[f]),
  ).resolves.toBeUndefined();
});

test('a workflow changed without a patch fails replay of a recorded history (the test can fail)', async () => {
  installQuietRuntime();
  const f = files.find((x) => x.startsWith('sweep-workflow'))!;
  await expect(
    Worker.runReplayHistory(
      { workflowsPath: require.resolve('../fixtures/changed-workflows') },
      decoded(f),
      manifest[f],
    ),
  ).rejects.toThrow(/[Nn]ondetermin|DeterminismViolation/);
});
