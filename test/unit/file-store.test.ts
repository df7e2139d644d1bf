import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { applyChange, revertChange } from '../../catalog/entity-repairs';
import { CatalogFileError, FileCatalogStore } from '../../catalog/file/store';
import { generateCatalog } from '../../scripts/generate-catalog';
import type { CatalogEntity } from '../../domain/catalog';
import type { ProposalChange } from '../../domain/proposal';

function catalogFile(indent: number | undefined, entities = 30): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'store-')), 'c.json');
  writeFileSync(file, JSON.stringify(generateCatalog({ entities, seed: 7, name: 'store-test' }), null, indent) + '\n');
  return file;
}

async function describeFirst(store: FileCatalogStore, text: string): Promise<string> {
  const { ids } = await store.snapshot();
  const id = ids[0]!;
  await store.update((get) => {
    get(id)!.description = text;
  });
  return id;
}

describe('FileCatalogStore writes', () => {
  test('a one-line file stays on one line, with the change and every other entity as it was', async () => {
    const file = catalogFile(undefined);
    const before = JSON.parse(readFileSync(file, 'utf8'));
    const id = await describeFirst(new FileCatalogStore(file), 'Changed by the test.');
    const text = readFileSync(file, 'utf8');
    expect(text.trimEnd().split('\n')).toHaveLength(1);
    const after = JSON.parse(text);
    expect(after.entities.find((e: { id: string }) => e.id === id).description).toBe('Changed by the test.');
    expect(after.entities.slice(1)).toEqual(before.entities.slice(1));
    expect({ ...after, entities: [] }).toEqual({ ...before, entities: [] });
  });

  test('an entity read (and so validated, with defaults filled in) but not changed is written back as it was', async () => {
    const file = catalogFile(undefined);
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    delete doc.entities[2].upstream;
    delete doc.entities[2].pii_exceptions;
    for (const c of doc.entities[2].columns) delete c.tags;
    writeFileSync(file, JSON.stringify(doc) + '\n');
    const store = new FileCatalogStore(file);
    const [read] = (await store.getEntities([doc.entities[2].id])).entities;
    expect(read!.upstream).toEqual([]);
    await describeFirst(store, 'Changed by the test.');
    expect(JSON.parse(readFileSync(file, 'utf8')).entities[2]).toEqual(doc.entities[2]);
  });

  test('envelope fields after the entities (even ones holding "[]") stay where they were', async () => {
    const file = catalogFile(2);
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    const reordered = {
      format: doc.format,
      version: doc.version,
      entities: doc.entities,
      name: doc.name,
      description: 'Has [] in it.',
    };
    writeFileSync(file, JSON.stringify(reordered, null, 2) + '\n');
    await describeFirst(new FileCatalogStore(file), 'Changed by the test.');
    const after = JSON.parse(readFileSync(file, 'utf8'));
    expect(Object.keys(after)).toEqual(['format', 'version', 'entities', 'name', 'description']);
    expect(after.description).toBe('Has [] in it.');
    expect(after.entities).toHaveLength(doc.entities.length);
  });

  test('an indented file stays indented', async () => {
    const file = catalogFile(2);
    const before = JSON.parse(readFileSync(file, 'utf8'));
    await describeFirst(new FileCatalogStore(file), 'Changed by the test.');
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n').length).toBeGreaterThan(100);
    expect(text).toMatch(/^\{\n {2}"format": "argus-catalog",\n/);
    expect(JSON.parse(text).entities.slice(1)).toEqual(before.entities.slice(1));
  });

  test('reads while this process commits use the parsed catalog instead of parsing the file again', async () => {
    const file = catalogFile(undefined, 400);
    const store = new FileCatalogStore(file);
    const { ids } = await store.snapshot();
    const [first] = (await store.getEntities([ids[1]!])).entities;
    // Readers keep arriving while a write is under way; each one must see the same objects.
    const writing = describeFirst(store, 'Concurrent write.');
    const seen: unknown[] = [];
    let done = false;
    void writing.then(() => (done = true));
    while (!done) {
      seen.push((await store.getEntities([ids[1]!])).entities[0]);
      await new Promise((r) => setImmediate(r));
    }
    await writing;
    seen.push((await store.getEntities([ids[1]!])).entities[0]);
    expect(seen.length).toBeGreaterThan(1);
    for (const e of seen) expect(e).toBe(first);
    // Another process's write is still noticed: a new store object shares the cache, a changed file does not.
    const other = JSON.parse(readFileSync(file, 'utf8'));
    other.entities[1].description = 'Written elsewhere.';
    writeFileSync(file, JSON.stringify(other) + '\n');
    const [fresh] = (await new FileCatalogStore(file).getEntities([ids[1]!])).entities;
    expect(fresh).not.toBe(first);
    expect(fresh!.description).toBe('Written elsewhere.');
  });
});

function tmpFile(name = 'c.json'): string {
  return path.join(mkdtempSync(path.join(os.tmpdir(), 'store-')), name);
}

interface Written {
  entityId: string;
  change: ProposalChange;
  before: unknown;
  after: unknown;
}

/**
 * What a sweep does to an entity: descriptions, PII tags on untagged columns, and, on some entities (lineage
 * findings are rare), an edge dropped or added — also on tables that record no lineage at all.
 */
function sweepChanges(e: CatalogEntity, n: number): ProposalChange[] {
  const changes: ProposalChange[] = [{ kind: 'description', target: 'table', text: `The ${e.name} ${e.kind}.` }];
  e.columns.forEach((c, i) => {
    if (i % 2 === 0)
      changes.push({ kind: 'description', target: 'column', column: c.name, text: `Column ${c.name}: caf\u00e9.` });
    if (i % 3 !== 1 && !c.tags.some((t) => t.kind === 'pii'))
      changes.push({
        kind: 'pii_tag',
        column: c.name,
        category: 'email',
        confidence: 0.8,
        explanation: `${c.name} "may" hold e-mail.`,
      });
  });
  if (n % 4 === 0 && e.upstream.length > 0)
    changes.push({ kind: 'lineage_flag', finding: 'dangling_edge', upstream: e.upstream[0]! });
  else if (n % 4 === 1) changes.push({ kind: 'lineage_flag', finding: 'unrecorded_read', upstream: 'raw.somewhere' });
  return changes;
}

async function sweep(store: FileCatalogStore): Promise<Written[]> {
  const { ids } = await store.snapshot();
  return store.update((get) => {
    const written: Written[] = [];
    ids.forEach((id, n) => {
      const e = get(id)!;
      sweepChanges(e, n).forEach((change, k) => {
        const r = applyChange(e, change, `p-${n}-${k}`, true);
        if (r.status === 'written') written.push({ entityId: id, change, before: r.before, after: r.after });
      });
    });
    return written;
  });
}

async function undo(store: FileCatalogStore, written: Written[]): Promise<void> {
  await store.update((get) => {
    for (const w of [...written].reverse())
      expect(revertChange(get(w.entityId)!, w.change, w.before, w.after).ok).toBe(true);
  });
}

describe("FileCatalogStore keeps the file's bytes", () => {
  const demo = path.join(__dirname, '../../catalog/demo/shop-warehouse.json');

  test('a sweep and its undo leave the demo catalog byte for byte as it was (same process)', async () => {
    const file = tmpFile();
    copyFileSync(demo, file);
    const original = readFileSync(file, 'utf8');
    const store = new FileCatalogStore(file);
    const written = await sweep(store);
    expect(written.length).toBeGreaterThan(200);
    const swept = readFileSync(file, 'utf8');
    expect(swept).not.toBe(original);
    await undo(store, written);
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  test('…and when the undo reads the swept file afresh, as `argus undo` in another process does', async () => {
    const file = tmpFile();
    copyFileSync(demo, file);
    const original = readFileSync(file, 'utf8');
    const written = await sweep(new FileCatalogStore(file));
    // A copy under another path has no cached parsed form: the undo starts from the swept text alone.
    const copy = tmpFile();
    copyFileSync(file, copy);
    await undo(new FileCatalogStore(copy), written);
    expect(readFileSync(copy, 'utf8')).toBe(original);
  });

  test.each([
    ['indented', 2],
    ['compact', undefined],
  ])('a sweep and its undo leave a generated %s catalog (defaults written out) as it was', async (_l, indent) => {
    const file = catalogFile(indent, 60);
    const original = readFileSync(file, 'utf8');
    const written = await sweep(new FileCatalogStore(file));
    const swept = readFileSync(file, 'utf8');
    expect(swept.trimEnd().includes('\n')).toBe(indent !== undefined);
    const copy = tmpFile();
    copyFileSync(file, copy);
    await undo(new FileCatalogStore(copy), written);
    expect(readFileSync(copy, 'utf8')).toBe(original);
  });

  test('a write keeps untouched entities, escapes, odd spacing and the envelope byte for byte', async () => {
    const file = tmpFile();
    const head = '{ "format" : "argus-catalog",\t"version": 1, "name": "caf\\u00e9",\n"entities" :  [\n';
    const a =
      '{"id":"a","database":"d","name":"a","kind":"table","description":"Caf\\u00e9 \\u2013 \\"x\\"","columns":[ {"name":"id" , "type":"INT"} ]}';
    const b =
      '{\n   "id" : "b", "database":"d","name":"b","kind":"table",\n   "columns":[{"name":"email","type":"TEXT"}]   }';
    const c =
      '{"id":"c","database":"d","name":"c","kind":"view","columns":[{"name":"x\\u00e9","type":"INT"}],"upstream":["a"]}';
    const tail = '\n ] , "description": "tail \\u00e9" }\n\n';
    writeFileSync(file, head + a + ' ,\n' + b + ',' + c + tail);
    const store = new FileCatalogStore(file);
    await store.allEntities();
    await store.update((get) => {
      get('b')!.description = 'Now described.';
    });
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith(head + a + ' ,\n')).toBe(true);
    expect(text.endsWith(',' + c + tail)).toBe(true);
    expect(text).toContain('"columns":[{"name":"email","type":"TEXT"}],\n   "description" : "Now described."   }');
  });

  test('a compact file stays compact and an added value is written compactly', async () => {
    const file = catalogFile(undefined, 20);
    const store = new FileCatalogStore(file);
    const { ids } = await store.snapshot();
    await store.update((get) => {
      get(ids[3]!)!.columns[0]!.tags.push({
        kind: 'pii',
        category: 'email',
        confidence: 1,
        explanation: 'x',
        source: 'argus',
      });
    });
    const text = readFileSync(file, 'utf8');
    expect(text.trimEnd().split('\n')).toHaveLength(1);
    expect(text).toContain(
      '"tags":[{"kind":"pii","category":"email","confidence":1,"explanation":"x","source":"argus"}]',
    );
  });
});

describe('FileCatalogStore with fewer entities kept in memory than the catalog has', () => {
  test.each([
    ['an indented', 2],
    ['a compact', undefined],
  ])(
    '%s catalog: a sweep writes what a store keeping them all writes, and its undo restores every byte',
    async (_l, indent) => {
      const file = catalogFile(indent, 60);
      const original = readFileSync(file, 'utf8');
      const reference = tmpFile();
      copyFileSync(file, reference);
      await sweep(new FileCatalogStore(reference));
      // Three kept, one sweep touching all sixty: what a mutation got must stay its object until the write.
      const store = new FileCatalogStore(file, { entitiesKept: 3 });
      const written = await sweep(store);
      expect(readFileSync(file, 'utf8')).toBe(readFileSync(reference, 'utf8'));
      // Read back from the file (all but three): the objects the other store changed and kept.
      const { ids } = await store.snapshot();
      expect((await store.getEntities(ids)).entities).toEqual(
        (await new FileCatalogStore(reference).getEntities(ids)).entities,
      );
      await undo(store, written);
      expect(readFileSync(file, 'utf8')).toBe(original);
    },
  );

  test('a read once over the whole catalog does not push out what is kept, unless the catalog fits', async () => {
    const file = catalogFile(undefined, 30);
    const small = new FileCatalogStore(file, { entitiesKept: 8 });
    const { ids } = await small.snapshot();
    const page = (await small.getEntities(ids.slice(0, 3))).entities;
    const scan = await small.getEntities(ids, { once: true });
    expect(scan.entities.map((e) => e.id)).toEqual(ids);
    // The page's entities are still the objects it read (and what judgment remembered of them with them).
    expect((await small.getEntities(ids.slice(0, 3))).entities).toEqual(page);
    (await small.getEntities(ids.slice(0, 3))).entities.forEach((e, i) => expect(e).toBe(page[i]));
    // Read once and not kept: a later read parses the record again.
    expect((await small.getEntities([ids[20]!])).entities[0]).not.toBe(scan.entities[20]);
    // A catalog that fits in what the store keeps is kept whole by the same read (another file: a file's parsed
    // form, with what it keeps, is shared by its stores).
    const other = catalogFile(undefined, 30);
    const large = new FileCatalogStore(other, { entitiesKept: 100 });
    const whole = await large.getEntities(ids, { once: true });
    for (const k of [0, 20, 29]) expect((await large.getEntities([ids[k]!])).entities[0]).toBe(whole.entities[k]);
    // A catalog of exactly what the store keeps does not fit whole (two generations of half each): read once, it
    // leaves the kept entities as they were.
    const edge = new FileCatalogStore(catalogFile(undefined, 30), { entitiesKept: 30 });
    const kept = (await edge.getEntities(ids.slice(0, 3))).entities;
    await edge.getEntities(ids, { once: true });
    (await edge.getEntities(ids.slice(0, 3))).entities.forEach((e, i) => expect(e).toBe(kept[i]));
  });

  test('the entities a commit changes are what every reader gets until the file holds them, and after', async () => {
    const file = catalogFile(undefined, 30);
    const store = new FileCatalogStore(file, { entitiesKept: 1 });
    const { ids } = await store.snapshot();
    const changed = ids.slice(2, 8);
    const seen: (string | undefined)[][] = [];
    const read = async () => seen.push((await store.getEntities(changed)).entities.map((e) => e.description));
    await store.update(
      (get) => {
        for (const id of changed) get(id)!.description = `Changed ${id}.`;
      },
      {
        beforeReplace: async () => {
          // Other reads push the changed entities out of `kept`: they are not read from the old file.
          await store.getEntities(ids.slice(10, 20));
          await read();
        },
      },
    );
    await store.getEntities(ids.slice(20, 30));
    await read();
    const written = changed.map((id) => `Changed ${id}.`);
    expect(seen).toEqual([written, written]);
  });

  test('invalid and duplicated entities are reported as before, naming the fields', async () => {
    const file = tmpFile();
    const entity = (id: string, extra = '') =>
      `{"id":"${id}","database":"d","name":"${id}","kind":"table","columns":[{"name":"c","type":"INT"}]${extra}}`;
    writeFileSync(
      file,
      '{"format":"argus-catalog","version":1,"name":"n","entities":[' +
        [
          entity('a'),
          entity('b'),
          entity('a', ',"layer":"x"'),
          '{"id":"bad","database":"d","name":"bad","kind":"sofa","columns":[]}',
        ].join(',') +
        ']}',
    );
    const store = new FileCatalogStore(file, { entitiesKept: 1 });
    expect((await store.snapshot()).ids).toEqual(['a', 'b', 'bad']);
    for (let round = 0; round < 2; round++) {
      const { entities, invalid } = await store.getEntities(['a', 'b', 'bad', 'nope']);
      expect(entities.map((e) => e.id)).toEqual(['b']);
      expect(invalid).toEqual([
        { id: 'a', message: 'duplicate entity id "a"' },
        { id: 'bad', message: expect.stringMatching(/^kind: .*; columns: /) },
        { id: 'nope', message: 'entity "nope" is not in the catalog' },
      ]);
    }
  });
});

describe('FileCatalogStore.update beforeReplace', () => {
  /** Three calls: the first is committed alone, the other two arrive while it commits and share the next group. */
  async function threeCalls(store: FileCatalogStore, hook: (marker: string) => (result: string) => Promise<void>) {
    const { ids } = await store.snapshot();
    const call = (i: number) => {
      const marker = `Marker ${i}.`;
      return store.update(
        (get) => {
          get(ids[i]!)!.description = marker;
          return marker;
        },
        { beforeReplace: hook(marker) },
      );
    };
    return Promise.allSettled([call(0), call(1), call(2)]);
  }

  test('runs for every caller of a group after the mutations and before the file is replaced', async () => {
    const file = catalogFile(2, 10);
    const store = new FileCatalogStore(file);
    const seen: { result: string; fileHasIt: boolean; tmpFiles: number }[] = [];
    const results = await threeCalls(store, (marker) => async (result) => {
      seen.push({
        result,
        fileHasIt: readFileSync(file, 'utf8').includes(marker),
        tmpFiles: readdirSync(path.dirname(file)).filter((f) => f.endsWith('.tmp')).length,
      });
    });
    expect(results.map((r) => r.status === 'fulfilled' && r.value)).toEqual(['Marker 0.', 'Marker 1.', 'Marker 2.']);
    expect(seen).toEqual(
      ['Marker 0.', 'Marker 1.', 'Marker 2.'].map((result) => ({ result, fileHasIt: false, tmpFiles: 1 })),
    );
    const text = readFileSync(file, 'utf8');
    for (const m of ['Marker 0.', 'Marker 1.', 'Marker 2.']) expect(text).toContain(m);
  });

  test('on a large catalog, writers arriving one after another within moments share one rewrite', async () => {
    const file = catalogFile(2, 2500);
    const store = new FileCatalogStore(file);
    const { ids } = await store.snapshot();
    const groups: string[] = [];
    const calls: Promise<string>[] = [];
    for (let i = 0; i < 5; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 10));
      const marker = `Joined ${i}.`;
      calls.push(
        store.update(
          (get) => {
            get(ids[i]!)!.description = marker;
            return marker;
          },
          {
            // Each group writes one temporary file: its name tells the groups apart.
            beforeReplace: async () => {
              groups.push(readdirSync(path.dirname(file)).find((f) => f.endsWith('.tmp'))!);
            },
          },
        ),
      );
    }
    expect(await Promise.all(calls)).toEqual([0, 1, 2, 3, 4].map((i) => `Joined ${i}.`));
    expect(groups).toHaveLength(5);
    expect(new Set(groups).size).toBe(1);
    const text = readFileSync(file, 'utf8');
    for (let i = 0; i < 5; i++) expect(text).toContain(`Joined ${i}.`);
  });

  test('a throwing hook leaves the file as it was, removes the temp file and rejects every caller of the group', async () => {
    const file = catalogFile(2, 10);
    const store = new FileCatalogStore(file);
    const boom = new Error('intent record could not be written');
    let afterFirst = '';
    const results = await threeCalls(store, (marker) => async () => {
      if (marker === 'Marker 0.') return;
      afterFirst ||= readFileSync(file, 'utf8');
      if (marker === 'Marker 2.') throw boom;
    });
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect(results.slice(1).map((r) => r.status === 'rejected' && r.reason)).toEqual([boom, boom]);
    expect(readFileSync(file, 'utf8')).toBe(afterFirst);
    expect(afterFirst).toContain('Marker 0.');
    expect(readdirSync(path.dirname(file)).filter((f) => f !== 'c.json')).toEqual([]);
    // The group's in-memory changes are gone too: the next read parses the file again.
    const { ids } = await store.snapshot();
    const { entities } = await store.getEntities([ids[1]!, ids[2]!]);
    expect(entities.map((e) => e.description)).not.toContain('Marker 1.');
    expect(entities.map((e) => e.description)).not.toContain('Marker 2.');
  });
});

describe('FileCatalogStore lock file', () => {
  function deadPid(): number {
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    return Number(child.stdout);
  }

  test('a lock left by a dead process on this host is taken at once', async () => {
    const file = catalogFile(undefined, 10);
    const pid = deadPid();
    writeFileSync(
      `${file}.lock`,
      JSON.stringify({ pid, hostname: os.hostname(), acquiredAt: new Date().toISOString() }),
    );
    const started = Date.now();
    await describeFirst(new FileCatalogStore(file), 'After a crash.');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  test('a fresh lock of a live holder (or of another host) is waited for; an old one of another host is broken', async () => {
    const file = catalogFile(undefined, 10);
    const lock = `${file}.lock`;
    writeFileSync(
      lock,
      JSON.stringify({ pid: 1, hostname: 'elsewhere.example', acquiredAt: new Date().toISOString() }),
    );
    const store = new FileCatalogStore(file);
    let done = false;
    const writing = describeFirst(store, 'Waited.').then(() => (done = true));
    await new Promise((r) => setTimeout(r, 400));
    expect(done).toBe(false);
    // The holder's mtime stops being refreshed: 31 s old, it is taken as abandoned.
    const old = new Date(Date.now() - 31000);
    utimesSync(lock, old, old);
    await writing;
    expect(JSON.parse(readFileSync(file, 'utf8')).entities[0].description).toBe('Waited.');
  });

  test('the lock names its holder while a commit runs', async () => {
    const file = catalogFile(undefined, 10);
    let owner: unknown;
    const store = new FileCatalogStore(file);
    const { ids } = await store.snapshot();
    await store.update((get) => void (get(ids[0]!)!.description = 'x'), {
      beforeReplace: async () => {
        owner = JSON.parse(readFileSync(`${file}.lock`, 'utf8'));
      },
    });
    expect(owner).toEqual({ pid: process.pid, hostname: os.hostname(), acquiredAt: expect.any(String) });
  });
});

describe('FileCatalogStore path errors', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'store-errors-'));
  /** A file of the folder with this text, by its path. */
  const written = (name: string, text: string): string => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  const cases: [string, () => string, RegExp][] = [
    ['a missing file', () => path.join(dir, 'missing.json'), /^catalog file not found: .*missing\.json$/],
    [
      'a directory',
      () => (mkdirSync(path.join(dir, 'folder.json')), path.join(dir, 'folder.json')),
      /folder\.json is a directory, not a catalog file$/,
    ],
    ['an empty file', () => written('empty.json', '\n'), /empty\.json is empty$/],
    ['malformed JSON', () => written('bad.json', '{"format":'), /bad\.json is not valid JSON/],
    [
      'an entity closed twice',
      () => written('brace.json', '{"format":"argus-catalog","version":1,"name":"n","entities":[{"id":"a"}}]}'),
      /brace\.json is not valid JSON: /,
    ],
    [
      'an entity that is not an object',
      () => written('scalar.json', '{"format":"argus-catalog","version":1,"name":"n","entities":[{"id":"a"},"b"]}'),
      /scalar\.json is not an argus-catalog v1 file: entities\.1: Invalid input: expected record, received string$/,
    ],
    [
      'another format version',
      () => written('v2.json', '{"format":"argus-catalog","version":2,"name":"n","entities":[]}'),
      /v2\.json has catalog format version 2; this ARGUS reads version 1/,
    ],
  ];
  test.each([
    ['a missing comma', '{"format":"argus-catalog","version":1,"name":"n","entities":[{"id":"a"} {"id":"b"}]}'],
    ['a doubled comma', '{"format":"argus-catalog","version":1,"name":"n","entities":[{"id":"a"},,{"id":"b"}]}'],
    ['a broken entity', '{"format":"argus-catalog","version":1,"name":"n","entities":[{"id":"a"},{"id": tru}]}'],
    ['text after the catalog', '{"format":"argus-catalog","version":1,"name":"n","entities":[]} x'],
  ])('%s is reported as JSON.parse of the whole file reports it', async (_label, text) => {
    const file = path.join(dir, 'whole.json');
    writeFileSync(file, text);
    let expected = '';
    try {
      JSON.parse(text);
    } catch (e) {
      expected = (e as Error).message;
    }
    const err = await new FileCatalogStore(file).snapshot().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CatalogFileError);
    expect((err as Error).message).toBe(`${file} is not valid JSON: ${expected}`);
  });

  test.each(cases)('%s is a CatalogFileError naming the path', async (_label, make, message) => {
    const file = make();
    const err = await new FileCatalogStore(file).snapshot().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CatalogFileError);
    expect((err as CatalogFileError).message).toMatch(message);
    expect((err as CatalogFileError).path).toBe(path.resolve(file));
  });

  const root = process.getuid?.() === 0;
  (root ? test.skip : test)(
    'an unreadable file says permission denied (skipped when running as root, who can read it)',
    async () => {
      const file = path.join(dir, 'secret.json');
      writeFileSync(file, '{}');
      chmodSync(file, 0o000);
      const err = await new FileCatalogStore(file).snapshot().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CatalogFileError);
      expect((err as Error).message).toBe(`${file} cannot be read: permission denied`);
    },
  );
});

describe('FileCatalogStore release', () => {
  test('lets go of the entities it keeps; reads and writes go on from the file, as they were', async () => {
    const file = catalogFile(2, 40);
    const store = new FileCatalogStore(file);
    const { ids } = await store.snapshot();
    const first = (await store.getEntities(ids)).entities;
    const again = (await store.getEntities(ids)).entities;
    expect(again.every((e, i) => e === first[i])).toBe(true); // kept: the same objects
    store.release();
    const fresh = (await store.getEntities(ids)).entities;
    expect(fresh.some((e, i) => e === first[i])).toBe(false); // read anew
    expect(fresh).toEqual(first);
    // A write after a release lands, and what is read next is what it wrote.
    store.release();
    const id = await describeFirst(new FileCatalogStore(file), 'Written after a release.');
    const [read] = (await store.getEntities([id])).entities;
    expect(read!.description).toBe('Written after a release.');
    expect(JSON.parse(readFileSync(file, 'utf8')).entities[0].description).toBe('Written after a release.');
  });
});
