import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileCatalogStore } from '../../catalog/file-store';
import { generateCatalog } from '../../catalog/generate';

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
