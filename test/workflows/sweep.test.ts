import * as path from 'node:path';
import { readFileSync, readdirSync } from 'node:fs';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { uniqueId } from '../support/temporal-env';
import { useArgusWorker, copyCatalog, readCatalog, writeCatalog, DEMO_CATALOG } from '../support/argus-worker';
import { FailureType } from '../../domain/ids';
import type { SweepReport } from '../../domain/report';
import type { SweepInput } from '../../domain/sweep';
import type { AuditEntry } from '../../state/store';
import { undoSweep } from '../../activities/undo';
import { msToNumber as msOf } from '@temporalio/common/lib/time';
import { CATALOG_OPTIONS, REPORT_OPTIONS, WRITE_OPTIONS, modelActivityOptions } from '../../workflows/activities';

const w = useArgusWorker('tq-sweep');

async function sweep(input: SweepInput, id = uniqueId('sweep/test')): Promise<SweepReport> {
  return w.client.workflow.execute('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: id,
    args: [input],
  }) as Promise<SweepReport>;
}

function catalogCopy(name: string): string {
  return copyCatalog(DEMO_CATALOG, path.join(w.tw.stateDir, 'copies', name));
}

function audit(report: SweepReport, stateDir: string): AuditEntry[] {
  const dir = path.join(stateDir, 'audit');
  const files = readdirSync(dir);
  return files.flatMap((f) =>
    readFileSync(path.join(dir, f), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEntry)
      .filter((e) => e.sweepId === report.sweepId),
  );
}

const col = (file: string, entity: string, column: string) =>
  readCatalog(file)
    .entities.find((e) => e.id === entity)
    ?.columns.find((c) => c.name === column);

describe('sweepWorkflow on the demo catalog (mechanical review)', () => {
  let file: string;
  let before: ReturnType<typeof readCatalog>;
  let report: SweepReport;

  beforeAll(async () => {
    file = catalogCopy('demo-full');
    before = readCatalog(file);
    report = await sweep({ catalog: { kind: 'file', path: file } });
  });

  test('the report accounts for every entity and proposal', () => {
    expect(report.entities.requested).toBe(before.entities.length);
    expect(report.entities.processed).toBe(before.entities.length);
    expect(report.failures).toEqual([]);
    expect(report.partial).toBe(false);
    expect(report.partialReasons).toEqual([]);
    const { approved, rejected, not_reviewed } = report.outcomes;
    expect(approved + rejected + not_reviewed).toBe(report.proposals.length);
    expect(not_reviewed).toBe(0);
    expect(report.written).toBe(approved);
    expect(report.proposals.filter((p) => p.written).length).toBe(report.written);
    // The report file holds the same, indented for people at this size.
    const text = readFileSync(report.reportFile, 'utf8');
    expect(text).toMatch(/^\{\n {2}"reportVersion": 1,/);
    expect(JSON.parse(text)).toEqual(report);
  });

  test('obvious PII is tagged, traps are not', () => {
    for (const [e, c, cat] of [
      ['raw.customers', 'cust_first_name', 'person_name'],
      ['raw.customers', 'phone', 'phone'],
      ['raw.customers', 'billing_zipcode', 'postal_code'],
      ['raw.customers', 'date_of_birth', 'birth_date'],
    ] as const) {
      const tag = col(file, e, c)?.tags.find((t) => t.kind === 'pii');
      expect({ e, c, category: tag?.category, source: tag?.source }).toEqual({ e, c, category: cat, source: 'argus' });
      expect(tag?.explanation.length).toBeGreaterThan(0);
    }
    expect(col(file, 'raw.regions', 'region_name')?.tags ?? []).toEqual([]);
    expect(col(file, 'raw.gl_ledger_entries', 'account_number')?.tags ?? []).toEqual([]);
    expect(report.piiGovernance.ratio).toBeGreaterThan(0.9);
  });

  test('broken lineage is flagged and repaired; consistent lineage untouched', () => {
    const flags = report.proposals.filter((p) => p.kind === 'lineage_flag');
    expect(
      flags.some(
        (p) => p.change.kind === 'lineage_flag' && p.change.finding === 'dangling_edge' && p.outcome === 'approved',
      ),
    ).toBe(true);
    expect(
      flags.some(
        (p) => p.change.kind === 'lineage_flag' && p.change.finding === 'unrecorded_read' && p.outcome === 'approved',
      ),
    ).toBe(true);
    const after = readCatalog(file);
    const ids = new Set(after.entities.map((e) => e.id));
    for (const e of after.entities)
      // Raw file text: an entity that had no `upstream` key keeps it omitted.
      for (const u of e.upstream ?? [])
        expect({ e: e.id, u, exists: ids.has(u) }).toEqual({ e: e.id, u, exists: true });
  });

  test('human-written descriptions are untouched', () => {
    const after = readCatalog(file);
    let human = 0;
    for (const e of before.entities) {
      const a = after.entities.find((x) => x.id === e.id)!;
      if (e.description_source === 'human') {
        human++;
        expect(a.description).toBe(e.description);
      }
      for (const c of e.columns)
        if (c.description_source === 'human') {
          human++;
          expect(a.columns.find((x) => x.name === c.name)?.description).toBe(c.description);
        }
    }
    expect(human).toBeGreaterThan(0);
    expect(report.coverage.descriptionsAfter).toBeGreaterThan(report.coverage.descriptionsBefore);
  });

  test('rejected proposals are never written', () => {
    const rejected = report.proposals.filter((p) => p.outcome === 'rejected');
    const entries = audit(report, w.tw.stateDir);
    const writtenIds = new Set(entries.filter((e) => e.type === 'write').map((e) => e.proposalId));
    for (const p of rejected)
      expect({ id: p.id, written: writtenIds.has(p.id) || p.written }).toEqual({ id: p.id, written: false });
    for (const p of rejected.filter((x) => x.change.kind === 'pii_tag')) {
      const c = p.change as { column: string };
      expect(col(file, p.entityId, c.column)?.tags.some((t) => t.source === 'argus')).toBe(false);
    }
  });

  test('a second sweep writes nothing again and each proposal is written once', async () => {
    const second = await sweep({ catalog: { kind: 'file', path: file } });
    expect(second.written).toBe(0);
    const writes = [...audit(report, w.tw.stateDir), ...audit(second, w.tw.stateDir)].filter((e) => e.type === 'write');
    const ids = writes.map((e) => e.proposalId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(report.written);
  });
});

test("the worker sends beats well inside every activity's heartbeat timeout (a loaded server still keeps attempts alive)", () => {
  const throttle = w.tw.worker.options.maxHeartbeatThrottleIntervalMs;
  const timeouts = [
    CATALOG_OPTIONS,
    WRITE_OPTIONS,
    REPORT_OPTIONS,
    modelActivityOptions({ throttleAttemptsBeforeRotation: 3, endpoints: [] }),
  ].map((o) => msOf(o.heartbeatTimeout!));
  expect(throttle).toBeGreaterThan(0);
  // The SDK sends at most once per min(0.8 x timeout, this): each beat may reach the server late by most of a timeout.
  for (const t of timeouts) expect(t - Math.min(0.8 * t, throttle)).toBeGreaterThanOrEqual(0.75 * t);
});

describe('sweepWorkflow input and failures', () => {
  test('invalid input fails at once, non-retryable, naming the fields', async () => {
    const id = uniqueId('sweep/bad');
    const err = await w.client.workflow
      .execute('sweepWorkflow', {
        taskQueue: w.tw.taskQueue,
        workflowId: id,
        args: [{ catalog: { kind: 'nope' }, pageSize: 0, colour: 'red' }],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    const af = cause as ApplicationFailure;
    expect(af.type).toBe(FailureType.InvalidSweepInput);
    expect(af.nonRetryable).toBe(true);
    expect(af.message).toMatch(/catalog/);
    expect(af.message).toMatch(/pageSize/);
    expect(af.message).toMatch(/colour/);
    const hist = await w.client.workflow.getHandle(id).fetchHistory();
    const tasksFailed = (hist.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).length;
    expect(tasksFailed).toBe(0);
  });

  test('one invalid entity becomes a named failure; the sweep completes and says partial', async () => {
    const file = catalogCopy('one-bad');
    const c = readCatalog(file) as unknown as { entities: Record<string, unknown>[] };
    c.entities.push({ id: 'raw.broken_entity', database: 'shop', name: 'broken_entity', kind: 'table', columns: [] });
    writeCatalog(file, c);
    const r = await sweep({ catalog: { kind: 'file', path: file } });
    expect(r.failures).toEqual([
      expect.objectContaining({
        entity: 'raw.broken_entity',
        stage: 'load',
        category: 'invalid_entity',
        retryable: false,
      }),
    ]);
    expect(r.entities.requested).toBe(c.entities.length);
    expect(r.entities.processed).toBe(c.entities.length - 1);
    expect(r.partial).toBe(true);
    expect(r.partialReasons.join(' ')).toMatch(/1 of \d+ entities failed/);
    expect(r.written).toBeGreaterThan(0);
  });

  test('a dry run reviews everything and writes nothing', async () => {
    const file = catalogCopy('dry');
    const text = readFileSync(file, 'utf8');
    const r = await sweep({ catalog: { kind: 'file', path: file }, dryRun: true });
    expect(r.outcomes.approved).toBeGreaterThan(0);
    expect(r.written).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  test('undo restores what one sweep wrote', async () => {
    const file = catalogCopy('undo');
    const original = readCatalog(file);
    const r = await sweep({ catalog: { kind: 'file', path: file } });
    expect(r.written).toBeGreaterThan(0);
    const res = await undoSweep(w.tw.stateDir, r.sweepId);
    expect(res[0]?.undone).toBe(r.written);
    expect(res[0]?.conflicts).toEqual([]);
    const restored = readCatalog(file);
    const norm = (c: typeof original) =>
      c.entities.map((e) => ({
        id: e.id,
        d: e.description ?? null,
        up: e.upstream ?? [],
        cols: e.columns.map((x) => ({ n: x.name, d: x.description ?? null, t: (x.tags ?? []).map((t) => t.category) })),
      }));
    expect(norm(restored)).toEqual(norm(original));
    // The file itself, not only its content: key order, left-out defaults, escapes and layout all as they were.
    expect(readFileSync(file, 'utf8')).toBe(readFileSync(DEMO_CATALOG, 'utf8'));
    const again = await undoSweep(w.tw.stateDir, r.sweepId);
    expect(again[0]?.undone).toBe(0);
    expect(again[0]?.alreadyUndone).toBe(r.written);
  });
});
