import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';

/** The project root: the nearest folder above this file holding ARGUS's package.json (works from src and dist). */
export function projectRoot(): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    const pj = path.join(dir, 'package.json');
    if (fs.existsSync(pj)) {
      try {
        if ((JSON.parse(fs.readFileSync(pj, 'utf8')) as { name?: string }).name === 'argus-catalog') return dir;
      } catch {
        /* keep looking */
      }
    }
    dir = path.dirname(dir);
  }
  return process.cwd();
}

/** Where ARGUS keeps its state: the demo catalog copy, sweep ledgers, audit logs, reports. */
export function defaultStateDir(): string {
  return process.env.ARGUS_STATE_DIR ? path.resolve(process.env.ARGUS_STATE_DIR) : path.join(projectRoot(), '.argus');
}

export function bundledDemoCatalog(): string {
  return path.join(projectRoot(), 'catalog', 'demo', 'shop-warehouse.json');
}

/**
 * A folder or file name for an id, one-to-one: an id that is already a short safe name is kept as it is;
 * any other (sweep ids hold slashes and can be long) becomes a readable prefix plus a SHA-256 of the whole id,
 * so two ids never share a name, however long the part they have in common.
 */
export function safeName(id: string): string {
  if (/^[A-Za-z0-9._-]{1,120}$/.test(id) && id !== '.' && id !== '..') return id;
  const readable = id.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80);
  return `${readable}~${createHash('sha256').update(id).digest('hex').slice(0, 32)}`;
}

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
