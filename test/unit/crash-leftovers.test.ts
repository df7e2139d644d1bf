// What a process killed in the middle of a write leaves on disk, and that no reader takes it for data: the
// temporary files of every atomic write (empty, or cut short), a torn audit line, the catalog's unrenamed copy,
// the report's spool. Leftovers are made two ways: planted under the names the writers use, and left by the
// stores' own fault points (armed here with a hook that throws where a worker would SIGKILL itself).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { armStoreFaults, type StoreFaultPoint } from '../../state/fault-points';
import { FileLedger } from '../../state/file/ledger';
import { fileStateStore, findFileSweepMetas } from '../../state/file/store';
import { fileMemory } from '../../state/file/memory';
import { fileAnswers } from '../../state/file/answers';
import { localExclusive } from '../../state/file/local-lock';
import { AuditLog } from '../../state/file/audit-log';
import { isTempName, LEFTOVER_AGE_MS, tempFilesOf, writeFileAtomic } from '../../state/file/fs';
import { FileCatalogStore } from '../../catalog/file/store';
import { undoSweep } from '../../activities/undo';
import { generateCatalog } from '../../scripts/generate-catalog';
import type { Proposal } from '../../domain/proposal';
import type { SweepMeta, WriteRecord } from '../../state/store';
import type { MemoryUpdate } from '../../state/memory';

/** What a kill inside write() leaves of a record: nothing yet, or its first part. */
const LEFTOVERS: [string, (record: string) => string][] = [
  ['empty', () => ''],
  ['cut short', (record) => record.slice(0, Math.max(1, Math.floor(record.length / 2)))],
];

const tmpDir = (name: string) => mkdtempSync(path.join(os.tmpdir(), `argus-${name}-`));
/** The temporary name writeFileAtomic gives `file` (state/file/fs.ts), for a process that is gone. */
const tempOf = (file: string) => `${file}.999999.k3x9q2.tmp`;
const plant = (file: string, text: string) => {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(tempOf(file), text);
};
const age = (file: string) => {
  const old = new Date(Date.now() - LEFTOVER_AGE_MS - 60_000);
  utimesSync(file, old, old);
};

class Killed extends Error {}
/** Arm one store fault point: the write tears as a kill would, then throws instead of dying. */
function killAt(point: StoreFaultPoint): void {
  armStoreFaults((p, tear) => {
    if (p !== point) return;
    tear?.();
    throw new Killed(`killed at ${p}`);
  });
}
afterEach(() => armStoreFaults(undefined));

const proposal = (id: string): Proposal => ({
  id,
  entityId: 'raw.orders',
  agent: 'description-drafter',
  change: { kind: 'description', target: 'table', text: `Text of ${id}.` },
  evidence: [],
});
const meta = (stateDir: string, sweepId: string, ledgerKey: string, catalogFile = '/nowhere.json'): SweepMeta => ({
  sweepId,
  ledgerKey,
  catalogRef: { kind: 'file', path: catalogFile },
  catalogKey: catalogFile,
  catalogLabel: catalogFile,
  catalogName: 'leftovers',
  auditFile: path.join(stateDir, 'audit', 'leftovers.jsonl'),
  startedAt: '2026-12-01T00:00:00.000Z',
});

/** A ledger with one record of every kind on page 0, and what each reader reads of it. */
async function fullLedger() {
  const stateDir = tmpDir('ledger');
  const ledger = new FileLedger(stateDir, 'sweep/leftovers@run-1');
  const write: WriteRecord = {
    type: 'write',
    time: 't',
    sweepId: 'sweep/leftovers',
    ledgerKey: ledger.ledgerKey,
    proposalId: 'p-1',
    entityId: 'raw.orders',
    change: proposal('p-1').change,
    reviewer: 'gate',
    before: null,
    after: 'x',
  };
  const writes = { written: ['p-1'], already: [], keptHuman: [], conflicts: [], notes: {} };
  const stats = { entities: 1 } as never;
  await ledger.writeMeta(meta(stateDir, 'sweep/leftovers', ledger.ledgerKey));
  await ledger.writePageIds(0, ['raw.orders']);
  await ledger.writeProposals(0, 'description-drafter', [proposal('p-1')]);
  await ledger.putOutcomes(0, 'gate', 'gate', [
    { proposalId: 'p-1', decision: 'approved', reason: 'r', reviewer: 'g' },
  ]);
  await ledger.writeIntent(0, [JSON.stringify(write)]);
  await ledger.writeWrites(0, writes);
  await ledger.writeStats(0, 'before', stats);
  await ledger.writeCalls(0, 'pii-classifier', []);
  await ledger.writeFailures(0, 'lineage-checker', []);
  await ledger.writeSelection(['raw.orders']);
  await ledger.writeDoc('incremental', { n: 1 });
  const reads = async () => ({
    meta: (await ledger.meta()).ledgerKey,
    ids: await ledger.pageIds(0),
    proposals: (await ledger.proposals(0)).map((p) => p.id),
    outcomes: (await ledger.outcomes(0)).map((o) => o.proposalId),
    intent: (await ledger.intent(0)).map((r) => r.proposalId),
    writes: await ledger.writes(0),
    later: await ledger.writes(0, 1),
    allWrites: await ledger.allWrites(0),
    stats: await ledger.stats(0, 'before'),
    after: await ledger.stats(0, 'after'),
    calls: await ledger.calls(0),
    failures: await ledger.failures(0),
    pages: await ledger.pageNumbers(),
    selection: await ledger.selection(),
    doc: await ledger.doc('incremental'),
    metas: (await findFileSweepMetas(stateDir, 'sweep/leftovers')).map((m) => m.ledgerKey),
  });
  return { stateDir, ledger, reads, expected: await reads() };
}

/** The temporary files anywhere under `dir`. */
const tempFilesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => isTempName(path.basename(f)));

/** Every record file a ledger's page 0 and sweep folder may hold, written or not yet. */
const recordFiles = (ledger: FileLedger) => {
  const page = (f: string) => path.join(ledger.dir, 'pages', '000000', f);
  return [
    path.join(ledger.dir, 'meta.json'),
    path.join(ledger.dir, 'selection.json'),
    path.join(ledger.dir, 'docs', 'incremental.json'),
    path.join(ledger.dir, 'docs', 'pass-1.json'),
    ...[
      'ids.json',
      'proposals-description-drafter.json',
      'proposals-pii-classifier.json',
      'outcomes-gate.json',
      'outcomes-model-raw.orders.json',
      'write-intent.json',
      'write-intent-r1.json',
      'writes.json',
      'writes-r1.json',
      'stats-before.json',
      'stats-after.json',
      'calls-pii-classifier.json',
      'calls-description-drafter-batch-0.json',
      'failures-lineage-checker.json',
      'failures-pii-classifier.json',
    ].map(page),
  ];
};

describe('the file ledger after a killed write', () => {
  test.each(LEFTOVERS)(
    'every reader reads what it read before, beside %s leftovers of every record',
    async (_, cut) => {
      const { ledger, reads, expected } = await fullLedger();
      const someRecord = JSON.stringify([proposal('p-9'), proposal('p-10')]);
      for (const f of recordFiles(ledger)) plant(f, cut(someRecord));
      // Leftovers in the folders listed whole: beside the page folders, and beside the sweep folders.
      plant(path.join(ledger.dir, 'pages', '000001'), cut(someRecord));
      writeFileSync(path.join(path.dirname(ledger.dir), 'stray.json'), cut(someRecord));
      expect(await reads()).toEqual(expected);
    },
  );

  test.each([
    ['meta', (l: FileLedger, s: string) => l.writeMeta(meta(s, 'sweep/leftovers', l.ledgerKey))],
    ['page ids', (l: FileLedger) => l.writePageIds(0, ['raw.other'])],
    ['proposals', (l: FileLedger) => l.writeProposals(0, 'pii-classifier', [proposal('p-2')])],
    ['outcomes', (l: FileLedger) => l.putOutcomes(0, 'model', 'model-1', [])],
    ['a write intent', (l: FileLedger) => l.writeIntent(0, ['{"type":"write"}'], 1)],
    [
      'writes',
      (l: FileLedger) => l.writeWrites(0, { written: [], already: [], keptHuman: [], conflicts: [], notes: {} }, 1),
    ],
    ['stats', (l: FileLedger) => l.writeStats(0, 'after', { entities: 2 } as never)],
    ['calls', (l: FileLedger) => l.writeCalls(0, 'review-1', [])],
    ['failures', (l: FileLedger) => l.writeFailures(0, 'pii-classifier', [])],
    ['the selection', (l: FileLedger) => l.writeSelection([])],
    ['a document', (l: FileLedger) => l.writeDoc('pass-1', { n: 2 })],
  ])('a kill at ledger-write while writing %s leaves half a temporary file that no reader takes', async (_, write) => {
    const { stateDir, ledger, reads, expected } = await fullLedger();
    killAt('ledger-write');
    await expect(write(ledger, stateDir)).rejects.toBeInstanceOf(Killed);
    armStoreFaults(undefined);
    expect(tempFilesUnder(ledger.dir)).toHaveLength(1);
    expect(await reads()).toEqual(expected);
  });

  test('a leftover old enough to be surely dead is removed when its page is read; a fresh one is left alone', async () => {
    const { ledger, reads, expected } = await fullLedger();
    const page = path.join(ledger.dir, 'pages', '000000');
    plant(path.join(page, 'outcomes-gate.json'), '');
    plant(path.join(page, 'calls-x.json'), '[{"agent":');
    age(tempOf(path.join(page, 'outcomes-gate.json')));
    expect(await reads()).toEqual(expected);
    expect(readdirSync(page).filter(isTempName)).toEqual([path.basename(tempOf('calls-x.json'))]);
  });

  test('the report: what a killed attempt left beside it goes when an attempt publishes it', async () => {
    const { ledger } = await fullLedger();
    const report = ledger.reportFile();
    writeFileSync(report, '{"sweepId":"sweep/leftovers"}');
    writeFileSync(`${report}.999999.ab12.proposals.tmp`, '{"id":"p-1"},{"id":"p-');
    writeFileSync(`${report}.999999.cd34.tmp`, '');
    await ledger.publishReport();
    expect(readdirSync(ledger.dir).sort()).toEqual(['docs', 'meta.json', 'pages', 'report.json', 'selection.json']);
    expect(readFileSync(report, 'utf8')).toBe('{"sweepId":"sweep/leftovers"}');
  });
});

test('a write that fails while its process lives leaves no temporary file: only a kill leaves one', async () => {
  const dir = tmpDir('failed-write');
  // The record's name is taken by a folder: the rename fails.
  mkdirSync(path.join(dir, 'x.json', 'inside'), { recursive: true });
  await expect(writeFileAtomic(path.join(dir, 'x.json'), '{}')).rejects.toThrow();
  expect(readdirSync(dir)).toEqual(['x.json']);
});

describe('memory, answers, usage and calibration after a killed write', () => {
  const KEY = '/state/audit/leftovers-0123456789.jsonl';
  const update = (id: string): MemoryUpdate => ({
    judgmentKey: 'jk',
    sweepId: 's1',
    replace: false,
    upserts: { [id]: { fp: `fp-${id}`, final: true, sweep: 's1' } },
    deletes: [],
  });

  test.each(LEFTOVERS)('memory: a load reads the last saved document beside %s leftovers', async (_, cut) => {
    const stateDir = tmpDir('memory');
    const book = fileMemory(stateDir, localExclusive);
    await book.save(KEY, update('a'));
    const file = path.join(stateDir, 'memory', 'leftovers-0123456789.json');
    plant(file, cut(readFileSync(file, 'utf8')));
    const r = await book.load(KEY);
    expect(r.status === 'ok' && Object.keys(r.doc.entities)).toEqual(['a']);
  });

  test('memory: a kill at memory-write leaves the document saved before, and the next save goes through', async () => {
    const stateDir = tmpDir('memory');
    const book = fileMemory(stateDir, localExclusive);
    await book.save(KEY, update('a'));
    killAt('memory-write');
    await expect(book.save(KEY, update('b'))).rejects.toBeInstanceOf(Killed);
    armStoreFaults(undefined);
    const dir = path.join(stateDir, 'memory');
    expect(tempFilesOf('leftovers-0123456789.json', readdirSync(dir))).toHaveLength(1);
    const r = await book.load(KEY);
    expect(r.status === 'ok' && Object.keys(r.doc.entities)).toEqual(['a']);
    await book.save(KEY, update('c'));
    const again = await book.load(KEY);
    expect(again.status === 'ok' && Object.keys(again.doc.entities).sort()).toEqual(['a', 'c']);
    // A fresh leftover may be a live writer's on a shared folder: it stays; once surely dead, a save removes it.
    const [left] = tempFilesOf('leftovers-0123456789.json', readdirSync(dir));
    expect(left).toBeDefined();
    age(path.join(dir, left!));
    await book.save(KEY, update('d'));
    expect(readdirSync(dir)).toEqual(['leftovers-0123456789.json']);
  });

  test.each(LEFTOVERS)('answers: a recall and a count take kept answers only, beside %s leftovers', async (_, cut) => {
    const stateDir = tmpDir('answers');
    const book = fileAnswers(stateDir, 2);
    // Four digests in one shard (`01`): two kept, two whose writes were killed (one of them long ago).
    const [a, b, c, e] = ['a', 'b', 'c', 'e'].map((x) => `01${x.repeat(14)}`) as [string, string, string, string];
    await book.keep(a, { content: 'one', cutShort: false });
    const shard = path.join(stateDir, 'answers', '01');
    plant(path.join(shard, `${b}.json`), cut('{"content":"two","cutShort":false}'));
    plant(path.join(shard, `${c}.json`), cut('{"content":"three","cutShort":false}'));
    age(tempOf(path.join(shard, `${c}.json`)));
    expect(await book.recall(a)).toEqual({ content: 'one', cutShort: false });
    expect(await book.recall(b)).toBeUndefined();
    // The second keep counts the folder (kept = 2): two answers, so nothing is pruned; the old leftover goes.
    await book.keep(e, { content: 'four', cutShort: false });
    expect(readdirSync(shard).sort()).toEqual([`${a}.json`, path.basename(tempOf(`${b}.json`)), `${e}.json`].sort());
    expect(await book.recall(e)).toEqual({ content: 'four', cutShort: false });
  });

  test.each(LEFTOVERS)('usage and calibration read what was saved beside %s leftovers', async (_, cut) => {
    const stateDir = tmpDir('usage');
    const store = fileStateStore(stateDir);
    await store.usage.add('endpoint-a', '2026-12-01', 100, 1);
    await store.calibration.save('m|review', [0.5]);
    plant(path.join(stateDir, 'usage', 'endpoint-a.json'), cut('{"key":"endpoint-a","day":"2026-12-01","tokens":9'));
    plant(path.join(stateDir, 'calibration.json'), cut('{"m|review":[0.9]}'));
    expect(await store.usage.get('endpoint-a', '2026-12-01')).toEqual({ tokens: 100, requests: 1 });
    expect(await store.calibration.load(['m|review'])).toEqual({ 'm|review': [0.5] });
  });
});

describe('the audit log after a kill inside its append', () => {
  const write = (id: string): WriteRecord => ({
    type: 'write',
    time: 't',
    sweepId: 's1',
    ledgerKey: 's1@run',
    proposalId: id,
    entityId: 'raw.orders',
    change: proposal(id).change,
    reviewer: 'gate',
    before: null,
    after: 'x',
  });

  test('audit-append tears the slice: the torn line is read by no one, the next append starts a line of its own', async () => {
    const log = new AuditLog(path.join(tmpDir('audit'), 'a.jsonl'));
    await log.append([write('p-1')]);
    killAt('audit-append');
    await expect(
      log.append([
        write('p-2'),
        { type: 'page', time: 't', sweepId: 's1', ledgerKey: 's1@run', page: 0, decisions: 0, writes: 1 },
      ]),
    ).rejects.toBeInstanceOf(Killed);
    armStoreFaults(undefined);
    const text = readFileSync(log.file, 'utf8');
    expect(text.endsWith('\n')).toBe(false);
    // A fresh reader (another process) and this one both see the first write only, and the page not logged.
    for (const reader of [new AuditLog(log.file), log]) {
      expect([...(await reader.applied()).keys()]).toEqual(['p-1']);
      expect(await reader.pageLogged('s1@run', 0)).toBe(false);
    }
    await log.append([write('p-2')]);
    expect((await log.readAll()).map((e) => (e.type === 'write' ? e.proposalId : e.type))).toEqual(['p-1', 'p-2']);
    expect([...(await new AuditLog(log.file).applied()).keys()]).toEqual(['p-1', 'p-2']);
  });
});

describe('the file catalog after a killed commit', () => {
  const catalogFile = (dir: string) => {
    const file = path.join(dir, 'catalog.json');
    writeFileSync(file, JSON.stringify(generateCatalog({ entities: 3, seed: 1, name: 'leftovers' }), null, 2));
    return file;
  };

  test.each(LEFTOVERS)(
    'reads ignore %s copies a killed commit left, and the next commit removes them',
    async (_, cut) => {
      const dir = tmpDir('catalog');
      const file = catalogFile(dir);
      const text = readFileSync(file, 'utf8');
      // What FileCatalogStore names its new file (`<catalog>.<pid>.<ms>.tmp`), from two commits that died.
      writeFileSync(`${file}.999999.1767225600000.tmp`, cut(text));
      writeFileSync(`${file}.999998.1767225600001.tmp`, cut(text));
      // Not a commit's: another program's file beside the catalog stays.
      writeFileSync(path.join(dir, 'catalog.json.notes.tmp'), 'mine');
      const store = new FileCatalogStore(file);
      const { entities } = await store.allEntities();
      expect(entities.map((e) => e.id)).toHaveLength(3);
      const id = entities[0]!.id;
      await store.update((get) => {
        get(id)!.description = 'Written after the crash.';
      });
      expect(readdirSync(dir).sort()).toEqual(['catalog.json', 'catalog.json.notes.tmp']);
      const again = await new FileCatalogStore(file).getEntities([id]);
      expect(again.entities[0]?.description).toBe('Written after the crash.');
    },
  );
});

describe('undo among leftovers', () => {
  test('undo reads records only: torn audit line, half-written intents and calls, a stray file; every write undone', async () => {
    const stateDir = tmpDir('undo');
    const dir = tmpDir('undo-catalog');
    const file = path.join(dir, 'catalog.json');
    const catalog = generateCatalog({ entities: 3, seed: 1, name: 'leftovers' });
    const target = catalog.entities[1]!;
    delete target.description;
    delete target.description_source;
    const original = JSON.stringify(catalog, null, 2);
    writeFileSync(file, original);
    // The sweep's write, as applyApprovedRepairs makes it: the catalog changed, its intent and audit line stored.
    const text = 'A table the sweep described.';
    await new FileCatalogStore(file).update((get) => {
      const e = get(target.id)!;
      e.description = text;
      e.description_source = 'argus';
    });
    const ledger = new FileLedger(stateDir, 'sweep/undo@run-1');
    const m = meta(stateDir, 'sweep/undo', ledger.ledgerKey, file);
    await ledger.writeMeta(m);
    await ledger.writePageIds(0, [target.id]);
    const record: WriteRecord = {
      type: 'write',
      time: 't',
      sweepId: m.sweepId,
      ledgerKey: ledger.ledgerKey,
      proposalId: 'p-undo',
      entityId: target.id,
      change: { kind: 'description', target: 'table', text },
      reviewer: 'gate',
      before: { description: null, description_source: null },
      after: { description: text, description_source: 'argus' },
    };
    await ledger.writeIntent(0, [JSON.stringify(record)]);
    const audit = new AuditLog(m.auditFile);
    await audit.append([record]);
    // A later attempt killed in its own append, its intent write and its call record's write.
    killAt('audit-append');
    await expect(audit.append([{ ...record, proposalId: 'p-torn' }])).rejects.toBeInstanceOf(Killed);
    killAt('ledger-write');
    await expect(
      ledger.writeIntent(0, [JSON.stringify({ ...record, proposalId: 'p-half' })], 1),
    ).rejects.toBeInstanceOf(Killed);
    await expect(ledger.writeCalls(0, 'review-0', [])).rejects.toBeInstanceOf(Killed);
    armStoreFaults(undefined);
    plant(path.join(ledger.dir, 'pages', '000000', 'calls-review-1.json'), '[{"agent":"review","digest":"');
    writeFileSync(path.join(stateDir, 'sweeps', '.DS_Store'), '');
    const [undo] = await undoSweep(stateDir, m.sweepId);
    expect(undo).toMatchObject({ undone: 1, conflicts: [], alreadyUndone: 0, answersForgotten: 0 });
    expect(readFileSync(file, 'utf8')).toBe(original);
    // Run twice, it undoes nothing more.
    const [again] = await undoSweep(stateDir, m.sweepId);
    expect(again).toMatchObject({ undone: 0, conflicts: [], alreadyUndone: 1 });
  });
});
