import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AuditLog } from '../../state/file/audit-log';
import type { AuditEntry } from '../../state/store';

const write = (proposalId: string, sweepId = 's1'): Extract<AuditEntry, { type: 'write' }> => ({
  type: 'write',
  time: '2026-11-29T00:00:00.000Z',
  sweepId,
  proposalId,
  entityId: 'raw.customers',
  change: { kind: 'description', target: 'table', text: `Table — “${proposalId}” ← non-ASCII on purpose` },
  reviewer: 'mechanical-gate',
  before: null,
  after: null,
});

describe('AuditLog applied index', () => {
  test('concurrent readers and appenders see every write exactly once', async () => {
    const log = new AuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'audit-')), 'a.jsonl'));
    const ids = Array.from({ length: 200 }, (_, i) => `p-${i}`);
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < ids.length; i += 10) {
      work.push(log.append(ids.slice(i, i + 10).map((id) => write(id))));
      work.push(log.applied());
    }
    await Promise.all(work);
    const applied = await log.applied();
    expect([...applied.keys()].sort()).toEqual([...ids].sort());
    // A second instance (another process) rebuilds the same index from the file.
    const again = await new AuditLog(log.file).applied();
    expect(again.size).toBe(ids.length);
  });

  test('an undo line removes the proposal from the applied index', async () => {
    const log = new AuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'audit-')), 'b.jsonl'));
    await log.append([write('p-1'), write('p-2')]);
    expect((await log.applied()).has('p-1')).toBe(true);
    await log.append([
      { type: 'undo', time: 't', sweepId: 's1', proposalId: 'p-1', entityId: 'raw.customers', undoneBy: 'test' },
    ]);
    const applied = await log.applied();
    expect([...applied.keys()]).toEqual(['p-2']);
  });

  test('decision lines never enter the index, and a line whose keys come in another order still counts', async () => {
    const log = new AuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'audit-')), 'c.jsonl'));
    const decision: AuditEntry = {
      type: 'decision',
      time: 't',
      sweepId: 's1',
      proposalId: 'p-decided',
      entityId: 'raw.customers',
      change: { kind: 'description', target: 'table', text: 'x' },
      evidence: [],
      outcome: 'approved',
      reason: 'r',
      reviewer: 'mechanical-gate',
    };
    await log.append([decision, write('p-1')]);
    // Another writer (or a hand edit) that puts `type` last: still a write.
    const { type, ...rest } = write('p-2', 's2');
    const { appendFileSync } = await import('node:fs');
    appendFileSync(log.file, JSON.stringify({ ...rest, type }) + '\n');
    const applied = await log.applied();
    expect([...applied.entries()].map(([id, by]) => [id, by.sweepId]).sort()).toEqual([
      ['p-1', 's1'],
      ['p-2', 's2'],
    ]);
  });

  test('a log of many megabytes, with one line longer than a read slice, is indexed whole', async () => {
    const log = new AuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'audit-')), 'd.jsonl'));
    const long = (id: string, chars: number): AuditEntry => ({ ...write(id), after: 'é'.repeat(chars) });
    const ids = Array.from({ length: 3000 }, (_, i) => `p-${i}`);
    await log.append(ids.map((id) => long(id, 1000))); // ~6 MB of two-byte characters
    await log.append([long('p-huge', 3_000_000)]); // one line of ~6 MB
    await log.append([write('p-last')]);
    const { size } = await (await import('node:fs/promises')).stat(log.file);
    expect(size).toBeGreaterThan(12_000_000);
    const applied = await new AuditLog(log.file).applied();
    expect(applied.size).toBe(ids.length + 2);
    expect(applied.has('p-huge') && applied.has('p-last') && applied.has('p-2999')).toBe(true);
  });

  test('large appends running at once (slices of over a megabyte) never interleave inside a line', async () => {
    const log = new AuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'audit-')), 'f.jsonl'));
    const big = (id: string): AuditEntry => ({ ...write(id), after: 'x'.repeat(600) });
    const pages = Array.from({ length: 4 }, (_, p) => Array.from({ length: 2500 }, (_, i) => big(`p-${p}-${i}`)));
    await Promise.all(pages.map((entries) => log.append(entries)));
    const applied = await new AuditLog(log.file).applied();
    expect(applied.size).toBe(4 * 2500);
    expect((await log.readAll()).length).toBe(4 * 2500);
  });

  test('a line cut short by a crash is skipped, and the next append starts on a line of its own', async () => {
    const log = new AuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'audit-')), 'g.jsonl'));
    await log.append([write('p-1')]);
    const { appendFileSync } = await import('node:fs');
    // What a process killed inside write() leaves: half a line, no newline.
    appendFileSync(log.file, JSON.stringify(write('p-cut')).slice(0, 40));
    await log.append([write('p-2')]);
    const applied = await new AuditLog(log.file).applied();
    expect([...applied.keys()].sort()).toEqual(['p-1', 'p-2']);
    expect((await log.readAll()).map((e) => (e.type === 'write' ? e.proposalId : e.type))).toEqual(['p-1', 'p-2']);
  });

  test('a page line marks that page of that run as fully logged, and the writer run is kept', async () => {
    const log = new AuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'audit-')), 'h.jsonl'));
    await log.append([
      { ...write('p-1'), ledgerKey: 'sweep/a@run-1' },
      { type: 'page', time: 't', sweepId: 'sweep/a', ledgerKey: 'sweep/a@run-1', page: 3, decisions: 1, writes: 1 },
    ]);
    expect(await log.pageLogged('sweep/a@run-1', 3)).toBe(true);
    expect(await log.pageLogged('sweep/a@run-1', 2)).toBe(false);
    expect(await log.pageLogged('sweep/a@run-2', 3)).toBe(false);
    expect((await log.applied()).get('p-1')).toEqual({ sweepId: 's1', ledgerKey: 'sweep/a@run-1' });
  });

  test("the writes of one run share one writer record, so the index's size is its proposal ids", async () => {
    const log = new AuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'audit-')), 'i.jsonl'));
    const run = (id: string, ledgerKey?: string) => ({ ...write(id), ...(ledgerKey ? { ledgerKey } : {}) });
    await log.append([run('p-1', 'sweep/a@run-1'), run('p-2', 'sweep/a@run-1'), run('p-3', 'sweep/a@run-2')]);
    await log.applied(); // the index reads the log so far; the next read starts where this one ended
    await log.append([run('p-4', 'sweep/a@run-1'), run('p-5'), run('p-6')]);
    const applied = await log.applied();
    const by = (id: string) => applied.get(id);
    expect(by('p-1')).toBe(by('p-2'));
    expect(by('p-1')).toBe(by('p-4')); // read by the index's second read
    expect(by('p-5')).toBe(by('p-6'));
    expect(by('p-3')).not.toBe(by('p-1'));
    expect(by('p-5')).not.toBe(by('p-1'));
    expect([by('p-3'), by('p-5')]).toEqual([{ sweepId: 's1', ledgerKey: 'sweep/a@run-2' }, { sweepId: 's1' }]);
  });
});
