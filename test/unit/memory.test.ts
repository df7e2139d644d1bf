import { mkdtempSync, writeFileSync, mkdirSync, cpSync, appendFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { applyMemoryUpdate, checkMemoryDoc, MEMORY_VERSION, type MemoryRead } from '../../state/memory';
import { fileMemory } from '../../state/file/memory';
import { localExclusive } from '../../state/file/local-lock';
import { classify } from '../../activities/incremental-activities';
import { judgmentKey, agentsToRejudge, rulesVersion } from '../../activities/judgment-key';
import type { JudgmentSettings } from '../../domain/sweep';

const KEY = '/state/audit/demo-0123456789.jsonl';
const settings: JudgmentSettings = {
  agentBackend: 'rules',
  agents: ['pii-classifier'],
  review: 'mechanical',
  models: [],
  overwriteHumanText: false,
};

function memoryOf(entities: Record<string, { fp: string; final: boolean }>, jk = 'jk'): MemoryRead {
  return {
    status: 'ok',
    doc: applyMemoryUpdate(undefined, KEY, {
      judgmentKey: jk,
      sweepId: 's1',
      replace: true,
      upserts: Object.fromEntries(Object.entries(entities).map(([id, e]) => [id, { ...e, sweep: 's1' }])),
      deletes: [],
    }),
  };
}

describe('classify: what a sweep judges against its memory', () => {
  const fps = new Map([
    ['a', 'A'],
    ['b', 'B2'],
    ['c', 'C'],
    ['d', 'D'],
    ['new', 'N'],
  ]);
  const memory = memoryOf({
    a: { fp: 'A', final: true },
    b: { fp: 'B', final: true },
    c: { fp: 'C', final: false },
    d: { fp: 'D', final: true },
    gone: { fp: 'G', final: true },
  });
  const opts = { judgmentKey: 'jk', incremental: true, goneLimit: 0.5 };

  test('new, changed, unchanged and gone; only unchanged final decisions are carried over', () => {
    const r = classify([...fps.keys()], fps, memory, opts);
    expect(r.counts).toEqual({ new: 1, changed: 1, unchanged: 3, gone: 1, carriedOver: 2, judged: 3 });
    expect(r.toJudge).toEqual(['b', 'c', 'new']);
    expect(r.goneIds).toEqual(['gone']);
    expect(r.replace).toBe(false);
    expect(r.failSafe).toBeUndefined();
  });

  test('a full sweep and another judgment key judge everything and say why', () => {
    const full = classify([...fps.keys()], fps, memory, { ...opts, incremental: false });
    expect(full.toJudge).toHaveLength(5);
    expect(full.note).toMatch(/full sweep/);
    const other = classify([...fps.keys()], fps, memory, { ...opts, judgmentKey: 'other' });
    expect(other.toJudge).toHaveLength(5);
    expect(other.replace).toBe(true);
    expect(other.note).toMatch(/judgment changed/);
  });

  test.each([
    ['unreadable', { status: 'untrusted', why: 'the memory file x is unreadable (Unexpected token)' } as MemoryRead],
    ['absent', { status: 'none' } as MemoryRead],
  ])('memory that is %s is never a reason to skip', (_what, read) => {
    const r = classify([...fps.keys()], fps, read, opts);
    expect(r.toJudge).toHaveLength(5);
    expect(r.counts.carriedOver).toBe(0);
    expect(r.replace).toBe(true);
    expect(r.note).toBeDefined();
  });

  test('the fail-safe trips when more than the set share of remembered entities is gone', () => {
    const r = classify(['a'], new Map([['a', 'A']]), memory, opts);
    expect(r.counts.gone).toBe(4);
    expect(r.failSafe).toMatch(/4 of the 5 entities remembered .* are gone/);
    expect(classify(['a'], new Map([['a', 'A']]), memory, { ...opts, goneLimit: 0.9 }).failSafe).toBeUndefined();
  });
});

describe('checkMemoryDoc', () => {
  const ok = memoryOf({ a: { fp: 'A', final: true } });
  const doc = ok.status === 'ok' ? ok.doc : undefined;
  test.each([
    ['not a memory document', { hello: 1 }, KEY, /not an ARGUS memory/],
    ['written by a newer ARGUS', { ...doc, version: MEMORY_VERSION + 1 }, KEY, /newer ARGUS/],
    ['for another catalog', doc, '/elsewhere/audit/x.jsonl', /another catalog/],
  ])('refuses memory %s', (_what, d, key, why) => {
    const r = checkMemoryDoc(d, key);
    expect(r.status).toBe('untrusted');
    expect(r.status === 'untrusted' && r.why).toMatch(why);
  });
  test('accepts its own', () => expect(checkMemoryDoc(doc, KEY).status).toBe('ok'));
});

describe('fileMemory', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'argus-memory-'));
  const book = fileMemory(dir, localExclusive);

  test('saves, merges, forgets, and starts afresh on another judgment key', async () => {
    expect((await book.load(KEY)).status).toBe('none');
    const entry = (fp: string) => ({ fp, final: true, sweep: 's' });
    await book.save(KEY, {
      judgmentKey: 'k1',
      sweepId: 's1',
      replace: false,
      upserts: { a: entry('A'), b: entry('B') },
      deletes: [],
    });
    await book.save(KEY, {
      judgmentKey: 'k1',
      sweepId: 's2',
      replace: false,
      upserts: { c: entry('C') },
      deletes: ['a'],
    });
    let r = await book.load(KEY);
    expect(r.status === 'ok' && Object.keys(r.doc.entities).sort()).toEqual(['b', 'c']);
    await book.forget(KEY, ['b']);
    r = await book.load(KEY);
    expect(r.status === 'ok' && Object.keys(r.doc.entities)).toEqual(['c']);
    await book.save(KEY, { judgmentKey: 'k2', sweepId: 's3', replace: false, upserts: { d: entry('D') }, deletes: [] });
    r = await book.load(KEY);
    expect(r.status === 'ok' && Object.keys(r.doc.entities)).toEqual(['d']);
  });

  test('an unreadable file is untrusted, not an error, and the next save rewrites it', async () => {
    const key = '/state/audit/broken-1.jsonl';
    mkdirSync(path.join(dir, 'memory'), { recursive: true });
    writeFileSync(path.join(dir, 'memory', 'broken-1.json'), '{"format": "argus-mem');
    const r = await book.load(key);
    expect(r.status).toBe('untrusted');
    await book.save(key, { judgmentKey: 'k', sweepId: 's', replace: true, upserts: {}, deletes: [] });
    expect((await book.load(key)).status).toBe('ok');
  });
});

describe('judgment key', () => {
  test('changes when any rule source changes, with nobody bumping a number', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'argus-rules-'));
    cpSync(path.join(__dirname, '../../judgment'), path.join(root, 'judgment'), { recursive: true });
    const before = rulesVersion(root);
    expect(rulesVersion(root)).toBe(before);
    appendFileSync(path.join(root, 'judgment', 'words.ts'), '\n// a changed rule\n');
    const afterTop = rulesVersion(root);
    expect(afterTop).not.toBe(before);
    // The rooms of judgment/ (pii/, sql/, claims/, gate/) count as much as its top level.
    for (const room of ['pii/vocabulary.ts', 'sql/tokens.ts', 'claims/phrases.ts', 'gate/pii-review.ts']) {
      const previous = rulesVersion(root);
      appendFileSync(path.join(root, 'judgment', room), '\n// a changed rule\n');
      expect(rulesVersion(root)).not.toBe(previous);
    }
  });

  test('without rule sources it never matches another process', () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'argus-norules-'));
    expect(rulesVersion(empty)).not.toBe(rulesVersion(empty));
  });

  test.each([
    ['agent backend', { agentBackend: 'model' as const, models: ['m1'] }],
    ['models', { review: 'model' as const, models: ['m2'] }],
    ['review mode', { review: 'model' as const }],
    ['human review', { humanReviewKinds: ['pii_tag'] }],
    ['agents', { agents: ['pii-classifier', 'lineage-checker'] }],
  ])('changes with the %s', (_what, change) => {
    expect(judgmentKey({ ...settings, ...change }, 'rules')).not.toBe(judgmentKey(settings, 'rules'));
  });

  test.each([
    ['the rules', { rules: 'r2' }, 'all'],
    ['the review mode', { review: 'model' as const }, 'all'],
    ['the human-review kinds', { humanReviewKinds: ['pii_tag'] }, 'all'],
    ['value sampling', { sampleRows: 20 }, ['pii-classifier']],
    ['overwriteHumanText', { overwriteHumanText: true }, ['description-drafter']],
    ['an agent added', { agents: ['description-drafter', 'lineage-checker', 'pii-classifier', 'pii-classifier'] }, []],
    ['an agent dropped', { agents: ['description-drafter', 'pii-classifier'] }, []],
    ['nothing', {}, []],
  ])('a change of %s re-judges %j', (_what, change, expected) => {
    const { rules = 'r1', ...s } = change as { rules?: string };
    const before = judgmentKey(
      { ...settings, agents: ['description-drafter', 'lineage-checker', 'pii-classifier'] },
      'r1',
    );
    const now = judgmentKey(
      { ...settings, agents: ['description-drafter', 'lineage-checker', 'pii-classifier'], ...s },
      rules,
    );
    expect(agentsToRejudge(before, now)).toEqual(expected);
  });

  test('an agent added is the only one to judge again; a key of the older form re-judges all', () => {
    const two = judgmentKey({ ...settings, agents: ['description-drafter', 'lineage-checker'] }, 'r');
    const three = judgmentKey(
      { ...settings, agents: ['description-drafter', 'lineage-checker', 'pii-classifier'] },
      'r',
    );
    expect(agentsToRejudge(two, three)).toEqual(['pii-classifier']);
    expect(agentsToRejudge(three, two)).toEqual([]);
    expect(agentsToRejudge('r-0123456789abcdef', three)).toBe('all');
  });

  test('model ids do not matter when no model judges', () => {
    expect(judgmentKey({ ...settings, models: ['m1'] }, 'r')).toBe(judgmentKey(settings, 'r'));
  });
});
