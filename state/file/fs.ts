import * as fs from 'node:fs';
import * as path from 'node:path';
import { storeFault, type StoreFaultPoint } from '../fault-points';

// Folders this process has made or found: a ledger writes many files into each page's folder, and a mkdir per
// write was a tenth of a model sweep's file-store time. Bounded; a folder removed since is made again on ENOENT.
const MADE_DIRS_KEPT = 4096;
const madeDirs = new Set<string>();

/**
 * The name writeFileAtomic gives a file before it is renamed into place: `<name>.<pid>.<random>.tmp`. Nothing
 * ARGUS reads ends in `.tmp`, so a kill between the write and the rename leaves a file no reader takes for a record.
 */
const TEMP = /\.\d+\.[0-9a-z]+\.tmp$/;
export const isTempName = (name: string): boolean => TEMP.test(name);

/**
 * Which of `names` are temporary files of the file named `base`: `<base>.<pid>.<random>[.<what>].tmp`, as
 * writeFileAtomic and the report's spool name theirs.
 */
export function tempFilesOf(base: string, names: readonly string[]): string[] {
  return names.filter(
    (n) => n.startsWith(`${base}.`) && /^\d+\.[0-9a-z]+(\.[a-z]+)?\.tmp$/.test(n.slice(base.length + 1)),
  );
}

/**
 * A leftover is a temporary file older than this: no write of a state file takes a second, so one this old
 * belongs to a process that died between its write and its rename (or one stopped so long its attempt has
 * been retried elsewhere). Removing it then costs that process a failed rename, and so a retry, at worst.
 */
export const LEFTOVER_AGE_MS = 15 * 60 * 1000;

/**
 * Write `file` whole or not at all: a temporary file, then a rename. `fault` names the store's fault point
 * between the two (state/fault-points.ts); a kill there leaves the temporary file half written.
 */
export async function writeFileAtomic(file: string, data: string, fault?: StoreFaultPoint): Promise<void> {
  const dir = path.dirname(file);
  if (!madeDirs.has(dir)) {
    await fs.promises.mkdir(dir, { recursive: true });
    if (madeDirs.size >= MADE_DIRS_KEPT) madeDirs.clear();
    madeDirs.add(dir);
  }
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    try {
      await fs.promises.writeFile(tmp, data);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      madeDirs.delete(dir);
      await fs.promises.mkdir(dir, { recursive: true });
      await fs.promises.writeFile(tmp, data);
    }
  } catch (e) {
    // A write that fails while the process lives (a full disk) leaves no temporary file behind; only a kill does.
    await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
  if (fault) storeFault(fault, () => fs.truncateSync(tmp, Math.floor(Buffer.byteLength(data) / 2)));
  try {
    await fs.promises.rename(tmp, file);
  } catch (e) {
    await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
}

/** A JSON file, or undefined when it is not there (nor the folder it would be in). */
export async function readJson<T>(file: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await fs.promises.readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw e;
  }
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new DamagedRecordError(file, e);
  }
}

/**
 * A record that is there but is not JSON. Records are only ever renamed into place whole (writeFileAtomic), so
 * this is damage (a disk fault, a hand edit), not a write in flight: reading it again cannot help, and the
 * activity that meets it fails at once (activities/failures.ts) instead of retrying for minutes.
 */
export class DamagedRecordError extends Error {
  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    super(`the state record ${file} is damaged: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'DamagedRecordError';
  }
}

/**
 * Remove the leftovers among `names` (a listing of `dir`): temporary files older than LEFTOVER_AGE_MS. Costs
 * nothing while a folder holds none; a file that went meanwhile is no error.
 */
export async function removeLeftovers(dir: string, names: readonly string[], now = Date.now()): Promise<void> {
  for (const name of names) {
    if (!isTempName(name)) continue;
    const file = path.join(dir, name);
    const st = await fs.promises.stat(file).catch(() => undefined);
    if (st?.isFile() && now - st.mtimeMs > LEFTOVER_AGE_MS) await fs.promises.rm(file, { force: true });
  }
}
