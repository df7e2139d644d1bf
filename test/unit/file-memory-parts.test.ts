// The file store's memory beyond one document's worth of entities: a document naming a generation of parts, none
// larger than a part's share, read back whole; a save is one commit (a kill before it leaves the memory saved
// before); the generation replaced stays for a load in flight, older and orphaned ones go once surely dead; a
// missing or foreign part makes the memory untrusted (judged anew), never read as less than it was. Real files.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { armStoreFaults } from '../../state/fault-points';
import { fileMemory } from '../../state/file/memory';
import { localExclusive } from '../../state/file/local-lock';
import { LEFTOVER_AGE_MS } from '../../state/file/fs';
import type { MemoryEntry, MemoryUpdate } from '../../state/memory';

const KEY = '/state/audit/parts-0123456789.jsonl';
const PART = 40;
const entry = (id: string, sweep: string): MemoryEntry => ({
  fp: `fp-${id}`,
  final: true,
  sweep,
  d: [[`p-${id}`, 'approved', 'gate']],
});
const update = (sweep: string, ids: string[], deletes: string[] = []): MemoryUpdate => ({
  judgmentKey: 'jk',
  sweepId: sweep,
  replace: false,
  upserts: Object.fromEntries(ids.map((id) => [id, entry(id, sweep)])),
  deletes,
});
const ids = (n: number, prefix = 'e') => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);

function setup() {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'argus-memory-parts-'));
  const dir = path.join(stateDir, 'memory');
  const book = fileMemory(stateDir, localExclusive, PART);
  const doc = () =>
    JSON.parse(readFileSync(path.join(dir, 'parts-0123456789.json'), 'utf8')) as Record<string, unknown>;
  const generations = () =>
    readdirSync(dir)
      .filter((n) => n.includes('.parts.'))
      .sort();
  const ageAll = () => {
    const old = new Date(Date.now() - LEFTOVER_AGE_MS - 60_000);
    for (const g of generations()) utimesSync(path.join(dir, g), old, old);
  };
  return { stateDir, dir, book, doc, generations, ageAll };
}

afterEach(() => armStoreFaults(undefined));

test('a memory larger than a part is a document naming its parts, each at most a part, read back whole', async () => {
  const { dir, book, doc, generations } = setup();
  await book.save(KEY, update('s1', ids(100)));
  const d = doc();
  expect(d.entities).toEqual({});
  expect(d.parts).toMatchObject({ count: 3, entities: 100 });
  const [gen] = generations();
  expect(gen).toBe((d.parts as { dir: string }).dir);
  const sizes = readdirSync(path.join(dir, gen!)).map((f) => {
    const part = JSON.parse(readFileSync(path.join(dir, gen!, f), 'utf8')) as { entities: object };
    return Object.keys(part.entities).length;
  });
  expect(sizes.sort((a, b) => a - b)).toEqual([20, 40, 40]);
  const r = await book.load(KEY);
  expect(r.status).toBe('ok');
  if (r.status !== 'ok') return;
  expect(Object.keys(r.doc.entities).sort()).toEqual(ids(100));
  expect(r.doc.entities.e0042).toEqual(entry('e0042', 's1'));
  expect(r.doc).not.toHaveProperty('parts');
  expect(r.doc).toMatchObject({ format: 'argus-memory', judgmentKey: 'jk', sweepId: 's1', catalogKey: KEY });
});

test('each save is a new generation; the one replaced stays, older ones go once surely dead', async () => {
  const { book, doc, generations, ageAll } = setup();
  await book.save(KEY, update('s1', ids(100)));
  const first = generations();
  await book.save(KEY, update('s2', ids(10, 'n'), ['e0000']));
  const second = generations();
  expect(second).toHaveLength(2); // the new one, and the one a load in flight may still read
  ageAll();
  await book.save(KEY, update('s3', ids(5, 'm')));
  const third = generations();
  expect(third).toHaveLength(2);
  expect(third).not.toContain(first[0]);
  expect(third).toContain((doc().parts as { dir: string }).dir);
  const r = await book.load(KEY);
  expect(r.status === 'ok' && Object.keys(r.doc.entities).length).toBe(100 - 1 + 10 + 5);
  expect(r.status === 'ok' && r.doc.entities.e0000).toBeFalsy();
  expect(r.status === 'ok' && r.doc.entities.n0003?.sweep).toBe('s2');
});

test('a save killed before its commit leaves the memory as saved before; its orphaned parts go once surely dead', async () => {
  const { book, generations, ageAll } = setup();
  await book.save(KEY, update('s1', ids(100)));
  armStoreFaults((p, tear) => {
    if (p !== 'memory-write') return;
    tear?.();
    throw new Error('killed at memory-write');
  });
  await expect(book.save(KEY, update('s2', ids(50, 'x')))).rejects.toThrow('killed');
  armStoreFaults(undefined);
  expect(generations()).toHaveLength(2); // the saved one and the orphan, parts written, never named
  const r = await book.load(KEY);
  expect(r.status === 'ok' && Object.keys(r.doc.entities).sort()).toEqual(ids(100));
  ageAll();
  await book.save(KEY, update('s3', ['z']));
  // Now: the new generation and the one it replaced; the orphan is gone.
  expect(generations()).toHaveLength(2);
  const again = await book.load(KEY);
  expect(again.status === 'ok' && Object.keys(again.doc.entities).length).toBe(101);
});

test('a part missing, cut short or another catalog’s: the memory is untrusted, and the next save rewrites it', async () => {
  const { dir, book, doc } = setup();
  await book.save(KEY, update('s1', ids(100)));
  const gen = (doc().parts as { dir: string }).dir;
  const part = path.join(dir, gen, '1.json');
  const text = readFileSync(part, 'utf8');
  for (const damage of [
    () => rmSync(part),
    () => writeFileSync(part, text.slice(0, text.length / 2)),
    () => writeFileSync(part, text.replace(JSON.stringify(KEY), JSON.stringify('/other/audit/x.jsonl'))),
  ]) {
    damage();
    const r = await book.load(KEY);
    expect(r.status).toBe('untrusted');
    expect(r.status === 'untrusted' && r.why).toContain(path.join(gen));
    writeFileSync(part, text);
    expect((await book.load(KEY)).status).toBe('ok');
  }
  rmSync(part);
  await book.save(KEY, { ...update('s2', ['only']), replace: true });
  const r = await book.load(KEY);
  expect(r.status === 'ok' && Object.keys(r.doc.entities)).toEqual(['only']);
});

test('shrinking to a part or less makes it one document again; forget works on parts', async () => {
  const { dir, book, doc } = setup();
  await book.save(KEY, update('s1', ids(100)));
  await book.forget(KEY, ['e0001', 'e0099']);
  const r = await book.load(KEY);
  expect(r.status === 'ok' && Object.keys(r.doc.entities).length).toBe(98);
  expect(r.status === 'ok' && r.doc.entities.e0001).toBeUndefined();
  await book.forget(KEY, ids(90));
  const d = doc();
  expect(d).not.toHaveProperty('parts');
  expect(Object.keys(d.entities as object).sort()).toEqual(ids(100).slice(90, 99));
  const small = await book.load(KEY);
  expect(small.status === 'ok' && Object.keys(small.doc.entities).length).toBe(9);
  expect(statSync(path.join(dir, 'parts-0123456789.json')).size).toBeGreaterThan(0);
});
