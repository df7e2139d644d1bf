import * as path from 'node:path';
import { readFileSync, readdirSync } from 'node:fs';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { installQuietRuntime } from '../support/argus-worker';

const dir = path.resolve(__dirname, '../fixtures/histories');
const files = readdirSync(dir).filter((f) => f.endsWith('.binpb'));
const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Record<string, string>;

// A non-deterministic change to sweepWorkflow or arbiterWorkflow makes these replays fail.
test('there is a recorded history for each workflow type', () => {
  expect(files.sort()).toEqual([
    'arbiter-workflow-model.binpb',
    'arbiter-workflow.binpb',
    'sweep-workflow-model.binpb',
    'sweep-workflow.binpb',
  ]);
});

test.each(files)('replays %s with the current workflow code', async (f) => {
  installQuietRuntime();
  const history = temporal.api.history.v1.History.decode(readFileSync(path.join(dir, f)));
  await expect(
    Worker.runReplayHistory({ workflowsPath: require.resolve('../../workflows') }, history, manifest[f]),
  ).resolves.toBeUndefined();
});
