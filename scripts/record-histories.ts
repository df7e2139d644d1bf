// Records one history per workflow type from a small real sweep, for the replay test.
// Usage: TEMPORAL_ADDRESS=127.0.0.1:7233 node scripts/run-ts.js scripts/record-histories.ts
import { mkdtempSync, writeFileSync, copyFileSync, mkdirSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { createArgusWorker } from '../worker/create-worker';
import { startFakeProvider } from '../llm/fake-provider';
import { arbiterWorkflowId } from '../domain/ids';

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'argus-record-'));
  const file = path.join(stateDir, 'demo.json');
  mkdirSync(stateDir, { recursive: true });
  copyFileSync(path.join(__dirname, '..', 'catalog', 'demo', 'shop-warehouse.json'), file);
  const taskQueue = `record-${Date.now()}`;
  const nc = await NativeConnection.connect({ address });
  const fp = await startFakeProvider({ port: 0 });
  const worker = await createArgusWorker({
    config: { taskQueue, stateDir, namespace: 'default' },
    connection: nc,
    env: { ...process.env, FAKE_KEY: 'fake' },
  });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const id = `sweep/record/${Date.now()}`;
  await worker.runUntil(async () => {
    // Two pages per run and one page per execution: the recorded history covers children and continue-as-new.
    const h = await client.workflow.start('sweepWorkflow', {
      taskQueue,
      workflowId: id,
      args: [{ catalog: { kind: 'file', path: file }, pageSize: 20, pagesPerRun: 2 }],
    });
    await h.result();
    const out = path.join(__dirname, '..', 'test', 'fixtures', 'histories');
    // Binary protobuf: read back with the same @temporalio/proto types the worker uses.
    const save = async (file: string, wid: string, runId?: string) => {
      const hist = await client.workflow.getHandle(wid, runId).fetchHistory();
      writeFileSync(path.join(out, file), temporal.api.history.v1.History.encode(hist).finish());
    };
    await save('sweep-workflow.binpb', id, h.firstExecutionRunId);
    await save('arbiter-workflow.binpb', arbiterWorkflowId(id, 0));
    // A model sweep whose quota runs out mid-run: covers rotation, the breaker and not_reviewed outcomes.
    const mid = `sweep/record-model/${Date.now()}`;
    const hm = await client.workflow.start('sweepWorkflow', {
      taskQueue,
      workflowId: mid,
      args: [
        {
          catalog: { kind: 'file', path: file },
          pageSize: 20,
          review: 'model',
          agentBackend: 'rules',
          endpoints: [{ id: 'fake', baseUrl: fp.baseUrl('daily-quota-3'), model: 'fake', apiKeyEnv: 'FAKE_KEY' }],
        },
      ],
    });
    await hm.result();
    await save('sweep-workflow-model.binpb', mid, hm.firstExecutionRunId);
    await save('arbiter-workflow-model.binpb', arbiterWorkflowId(mid, 0));
    // Replay needs the original workflow ids (child ids are derived from them).
    const manifest = {
      'sweep-workflow.binpb': id,
      'arbiter-workflow.binpb': arbiterWorkflowId(id, 0),
      'sweep-workflow-model.binpb': mid,
      'arbiter-workflow-model.binpb': arbiterWorkflowId(mid, 0),
    };
    writeFileSync(path.join(out, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    console.log(`recorded ${id} into ${out}`);
  });
  await connection.close();
  await nc.close();
  await fp.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
