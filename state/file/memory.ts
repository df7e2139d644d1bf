import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { applyMemoryUpdate, checkMemoryDoc, type MemoryBook, type MemoryRead } from '../memory';
import { safeName } from '../safe-name';
import { readJson, removeLeftovers, tempFilesOf, writeFileAtomic } from './fs';

/** The file store's memory: `<state>/memory/<catalog>.json`, rewritten whole (atomically) under a local lock. */
export function fileMemory(stateDir: string, lock: <T>(key: string, fn: () => Promise<T>) => Promise<T>): MemoryBook {
  const file = (key: string) => path.join(stateDir, 'memory', `${safeName(path.basename(key, '.jsonl'))}.json`);
  const load = async (key: string): Promise<MemoryRead> => {
    let doc: unknown;
    try {
      doc = await readJson<unknown>(file(key));
    } catch (e) {
      return { status: 'untrusted', why: `the memory file ${file(key)} is unreadable (${(e as Error).message})` };
    }
    return doc === undefined ? { status: 'none' } : checkMemoryDoc(doc, key);
  };
  // A killed save leaves a copy of the whole document beside it: the next save removes it once it is surely dead.
  const removeOld = async (key: string) => {
    const dir = path.dirname(file(key));
    await removeLeftovers(dir, tempFilesOf(path.basename(file(key)), await fs.readdir(dir).catch(() => [])));
  };
  return {
    load,
    save: (key, u) =>
      lock(`memory:${file(key)}`, async () => {
        const r = await load(key);
        await writeFileAtomic(
          file(key),
          JSON.stringify(applyMemoryUpdate(r.status === 'ok' ? r.doc : undefined, key, u)),
          'memory-write',
        );
        await removeOld(key);
      }),
    forget: (key, ids) =>
      lock(`memory:${file(key)}`, async () => {
        const r = await load(key);
        if (r.status !== 'ok') return;
        for (const id of ids) delete r.doc.entities[id];
        await writeFileAtomic(file(key), JSON.stringify(r.doc), 'memory-write');
      }),
  };
}
