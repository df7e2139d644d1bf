import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import {
  applyMemoryUpdate,
  checkMemoryDoc,
  type MemoryBook,
  type MemoryDoc,
  type MemoryEntry,
  type MemoryRead,
} from '../memory';
import { safeName } from '../safe-name';
import { LEFTOVER_AGE_MS, readJson, removeLeftovers, tempFilesOf, writeFileAtomic } from './fs';

/** Entities per file of a catalog's memory: a larger memory is kept in parts of at most this many. */
export const MEMORY_PART_ENTITIES = 5000;

/** Where a memory's entities are when they are not in its document: `<folder>` beside it, `count` parts. */
interface PartsRef {
  dir: string;
  count: number;
  entities: number;
}

/** One part: a slice of a memory's entities, for the catalog its document names. */
interface MemoryPart {
  format: 'argus-memory-part';
  catalogKey: string;
  entities: Record<string, MemoryEntry>;
}

/**
 * The file store's memory, one catalog at a time, under `<state>/memory/`. A memory of at most
 * MEMORY_PART_ENTITIES entities is one document, `<catalog>.json`. A larger one is that document without its
 * entities (a `parts` reference) and a folder of parts, `<catalog>.parts.<generation>/<n>.json`, each of at most
 * MEMORY_PART_ENTITIES entities: no file, and no string a save builds, grows with the catalog. A save writes a new
 * generation's parts, then renames the document into place (the save's one commit), so a kill at any moment leaves
 * the memory as it was saved before or as it is saved now. The generation the document named before stays (a load
 * in another process may be reading it); older ones, and those of saves killed before their commit, are removed by
 * a later save once they are a quarter of an hour old. Saves and forgets of one process are serialized (`lock`).
 */
export function fileMemory(
  stateDir: string,
  lock: <T>(key: string, fn: () => Promise<T>) => Promise<T>,
  partEntities = MEMORY_PART_ENTITIES,
): MemoryBook {
  const dir = path.join(stateDir, 'memory');
  const nameOf = (key: string) => safeName(path.basename(key, '.jsonl'));
  const file = (key: string) => path.join(dir, `${nameOf(key)}.json`);

  /** The document as stored (its entities, or its parts' reference), or why it cannot be read. */
  const readDoc = async (key: string): Promise<{ doc?: unknown } | { why: string }> => {
    try {
      return { doc: await readJson<unknown>(file(key)) };
    } catch (e) {
      return { why: `the memory file ${file(key)} is unreadable (${(e as Error).message})` };
    }
  };
  const partsOf = (doc: unknown): PartsRef | undefined => {
    const p = (doc as { parts?: Partial<PartsRef> } | null)?.parts;
    return p && typeof p.dir === 'string' && typeof p.count === 'number' ? (p as PartsRef) : undefined;
  };

  /** The memory as stored, and the parts its document names (what a save keeps while others may read them). */
  const loadStored = async (key: string): Promise<{ read: MemoryRead; parts?: PartsRef }> => {
    const r = await readDoc(key);
    if ('why' in r) return { read: { status: 'untrusted', why: r.why } };
    if (r.doc === undefined) return { read: { status: 'none' } };
    const parts = partsOf(r.doc);
    if (!parts) return { read: checkMemoryDoc(r.doc, key) };
    const untrusted = (why: string) => ({ read: { status: 'untrusted' as const, why }, parts });
    // A document naming parts: every part must be there, for this catalog, holding what the document counts.
    if (parts.dir !== path.basename(parts.dir) || !parts.dir.startsWith(`${nameOf(key)}.parts.`))
      return untrusted(`the memory file ${file(key)} names parts outside its folder`);
    const entities: Record<string, MemoryEntry> = {};
    for (let n = 0; n < parts.count; n++) {
      const at = path.join(dir, parts.dir, `${n}.json`);
      let part: Partial<MemoryPart> | undefined;
      try {
        part = await readJson<Partial<MemoryPart>>(at);
      } catch (e) {
        return untrusted(`the memory part ${at} is unreadable (${(e as Error).message})`);
      }
      if (!part || part.format !== 'argus-memory-part' || part.catalogKey !== key || !part.entities)
        return untrusted(`the memory part ${at} is missing or not this catalog's`);
      Object.assign(entities, part.entities);
    }
    if (Object.keys(entities).length !== parts.entities)
      return untrusted(`the memory parts in ${path.join(dir, parts.dir)} are incomplete`);
    const { parts: _named, ...doc } = r.doc as Record<string, unknown>;
    return { read: checkMemoryDoc({ ...doc, entities }, key), parts };
  };

  /** Write `doc` as one document, or as parts and a document naming them; then clear up what no load needs. */
  const write = async (key: string, doc: MemoryDoc, before: PartsRef | undefined) => {
    const ids = Object.keys(doc.entities);
    let parts: PartsRef | undefined;
    if (ids.length <= partEntities) await writeFileAtomic(file(key), JSON.stringify(doc), 'memory-write');
    else {
      const generation = `${nameOf(key)}.parts.${Date.now().toString(36)}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
      const count = Math.ceil(ids.length / partEntities);
      for (let n = 0; n < count; n++) {
        const entities: Record<string, MemoryEntry> = {};
        for (const id of ids.slice(n * partEntities, (n + 1) * partEntities)) entities[id] = doc.entities[id]!;
        const part: MemoryPart = { format: 'argus-memory-part', catalogKey: key, entities };
        await writeFileAtomic(path.join(dir, generation, `${n}.json`), JSON.stringify(part));
      }
      parts = { dir: generation, count, entities: ids.length };
      await writeFileAtomic(file(key), JSON.stringify({ ...doc, entities: {}, parts }), 'memory-write');
    }
    await clearUp(key, [parts?.dir, before?.dir]);
  };

  /**
   * A killed save leaves a temporary copy of the document, and perhaps a generation of parts no document names:
   * removed once surely dead (LEFTOVER_AGE_MS), as are generations older than the one replaced now (`keep`).
   */
  const clearUp = async (key: string, keep: (string | undefined)[]) => {
    const names = await fs.readdir(dir).catch(() => [] as string[]);
    await removeLeftovers(dir, tempFilesOf(path.basename(file(key)), names));
    const now = Date.now();
    for (const name of names) {
      if (!name.startsWith(`${nameOf(key)}.parts.`) || keep.includes(name)) continue;
      const at = path.join(dir, name);
      const st = await fs.stat(at).catch(() => undefined);
      if (st?.isDirectory() && now - st.mtimeMs > LEFTOVER_AGE_MS) await fs.rm(at, { recursive: true, force: true });
    }
  };

  return {
    load: async (key) => (await loadStored(key)).read,
    save: (key, u) =>
      lock(`memory:${file(key)}`, async () => {
        const { read, parts } = await loadStored(key);
        await write(key, applyMemoryUpdate(read.status === 'ok' ? read.doc : undefined, key, u), parts);
      }),
    forget: (key, ids) =>
      lock(`memory:${file(key)}`, async () => {
        const { read, parts } = await loadStored(key);
        if (read.status !== 'ok') return;
        for (const id of ids) delete read.doc.entities[id];
        await write(key, read.doc, parts);
      }),
  };
}
