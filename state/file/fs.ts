import * as fs from 'node:fs';
import * as path from 'node:path';

// Folders this process has made or found: a ledger writes many files into each page's folder, and a mkdir per
// write was a tenth of a model sweep's file-store time. Bounded; a folder removed since is made again on ENOENT.
const MADE_DIRS_KEPT = 4096;
const madeDirs = new Set<string>();

export async function writeFileAtomic(file: string, data: string): Promise<void> {
  const dir = path.dirname(file);
  if (!madeDirs.has(dir)) {
    await fs.promises.mkdir(dir, { recursive: true });
    if (madeDirs.size >= MADE_DIRS_KEPT) madeDirs.clear();
    madeDirs.add(dir);
  }
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await fs.promises.writeFile(tmp, data);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    madeDirs.delete(dir);
    await fs.promises.mkdir(dir, { recursive: true });
    await fs.promises.writeFile(tmp, data);
  }
  await fs.promises.rename(tmp, file);
}

export async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await fs.promises.readFile(file, 'utf8')) as T;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}
