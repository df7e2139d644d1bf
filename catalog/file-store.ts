import { promises as fs, openSync, closeSync, constants as fsc } from 'node:fs';
import * as path from 'node:path';
import { CatalogEntity, CatalogFileEnvelope, CATALOG_FORMAT, CATALOG_FORMAT_VERSION } from '../domain/catalog';
import type { CatalogSnapshot, CatalogStore, InvalidEntity } from './store';

/** Raised when the file itself (not one entity) cannot be used. */
export class CatalogFileError extends Error {
  override name = 'CatalogFileError';
}

interface Parsed {
  mtimeMs: number;
  size: number;
  name: string;
  raw: Record<string, unknown>;
  rawEntities: Record<string, unknown>[];
  byId: Map<string, number>;
  ids: string[];
  valid: Map<string, CatalogEntity>;
  invalid: Map<string, string>;
}

const cache = new Map<string, Parsed>();

function entityId(raw: Record<string, unknown>, index: number): string {
  return typeof raw.id === 'string' && raw.id.length > 0 ? raw.id : `#${index}`;
}

function parse(text: string, file: string, mtimeMs: number, size: number): Parsed {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new CatalogFileError(`${file} is not valid JSON: ${(e as Error).message}`, { cause: e });
  }
  if (
    json &&
    typeof json === 'object' &&
    'version' in json &&
    (json as { version: unknown }).version !== CATALOG_FORMAT_VERSION
  ) {
    throw new CatalogFileError(
      `${file} has catalog format version ${String((json as { version: unknown }).version)}; this ARGUS reads version ${CATALOG_FORMAT_VERSION}`,
    );
  }
  const env = CatalogFileEnvelope.safeParse(json);
  if (!env.success) {
    const fields = env.error.issues.map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`).join('; ');
    throw new CatalogFileError(`${file} is not an ${CATALOG_FORMAT} v${CATALOG_FORMAT_VERSION} file: ${fields}`);
  }
  const rawEntities = env.data.entities;
  const byId = new Map<string, number>();
  const invalid = new Map<string, string>();
  rawEntities.forEach((e, i) => {
    const id = entityId(e, i);
    if (byId.has(id)) invalid.set(id, `duplicate entity id "${id}"`);
    else byId.set(id, i);
  });
  return {
    mtimeMs,
    size,
    name: env.data.name,
    raw: json as Record<string, unknown>,
    rawEntities,
    byId,
    ids: [...byId.keys()],
    valid: new Map(),
    invalid,
  };
}

function validate(p: Parsed, id: string): CatalogEntity | undefined {
  const hit = p.valid.get(id);
  if (hit) return hit;
  if (p.invalid.has(id)) return undefined;
  const idx = p.byId.get(id);
  if (idx === undefined) return undefined;
  const r = CatalogEntity.safeParse(p.rawEntities[idx]);
  if (!r.success) {
    p.invalid.set(
      id,
      r.error.issues
        .map((i) => `${i.path.join('.') || '(entity)'}: ${i.message}`)
        .join('; ')
        .slice(0, 1500),
    );
    return undefined;
  }
  p.valid.set(id, r.data);
  return r.data;
}

async function acquireLock(lockPath: string, timeoutMs = 30000): Promise<() => Promise<void>> {
  const started = Date.now();
  for (;;) {
    try {
      const fd = openSync(lockPath, fsc.O_CREAT | fsc.O_EXCL | fsc.O_WRONLY);
      closeSync(fd);
      return () => fs.rm(lockPath, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      // A lock older than the timeout is left over from a crashed writer.
      const st = await fs.stat(lockPath).catch(() => null);
      if (st && Date.now() - st.mtimeMs > timeoutMs) await fs.rm(lockPath, { force: true });
      if (Date.now() - started > timeoutMs)
        throw new Error(`timed out waiting for catalog lock ${lockPath}`, { cause: e });
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
    }
  }
}

// One writer at a time inside this process; the lock file covers other processes.
const inProcess = new Map<string, Promise<unknown>>();

/** The default catalog adapter: one versioned JSON file, updated atomically (temp file + rename). */
export class FileCatalogStore implements CatalogStore {
  readonly file: string;
  constructor(file: string) {
    this.file = path.resolve(file);
  }

  private async load(): Promise<Parsed> {
    let st;
    try {
      st = await fs.stat(this.file);
    } catch {
      throw new CatalogFileError(`catalog file not found: ${this.file}`);
    }
    const hit = cache.get(this.file);
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit;
    const p = parse(await fs.readFile(this.file, 'utf8'), this.file, st.mtimeMs, st.size);
    cache.set(this.file, p);
    return p;
  }

  async snapshot(): Promise<CatalogSnapshot> {
    const p = await this.load();
    return { name: p.name, ids: p.ids };
  }

  async getEntities(ids: string[]): Promise<{ entities: CatalogEntity[]; invalid: InvalidEntity[] }> {
    const p = await this.load();
    const entities: CatalogEntity[] = [];
    const invalid: InvalidEntity[] = [];
    for (const id of ids) {
      const e = validate(p, id);
      if (e) entities.push(e);
      else invalid.push({ id, message: p.invalid.get(id) ?? `entity "${id}" is not in the catalog` });
    }
    return { entities, invalid };
  }

  async allEntities(): Promise<{ entities: CatalogEntity[]; invalid: InvalidEntity[] }> {
    const p = await this.load();
    const res = await this.getEntities([...p.byId.keys()]);
    for (const [id, message] of p.invalid)
      if (!p.byId.has(id) || !res.invalid.some((x) => x.id === id)) res.invalid.push({ id, message });
    return res;
  }

  async update<T>(fn: (get: (id: string) => CatalogEntity | undefined) => T): Promise<T> {
    const prev = inProcess.get(this.file) ?? Promise.resolve();
    const run = prev.catch(() => undefined).then(() => this.locked(fn));
    inProcess.set(this.file, run);
    try {
      return await run;
    } finally {
      if (inProcess.get(this.file) === run) inProcess.delete(this.file);
    }
  }

  private async locked<T>(fn: (get: (id: string) => CatalogEntity | undefined) => T): Promise<T> {
    const release = await acquireLock(`${this.file}.lock`);
    try {
      const p = await this.load();
      const touched = new Set<string>();
      const result = fn((id) => {
        const e = validate(p, id);
        if (e) touched.add(id);
        return e;
      });
      if (touched.size > 0) {
        // Only touched entities are re-serialised from their validated form; the rest stay byte-for-byte.
        const out = p.rawEntities.slice();
        for (const id of touched) {
          const idx = p.byId.get(id);
          const e = p.valid.get(id);
          if (idx !== undefined && e) out[idx] = e as unknown as Record<string, unknown>;
        }
        const doc = { ...p.raw, entities: out };
        const tmp = `${this.file}.${process.pid}.${Date.now()}.tmp`;
        const fh = await fs.open(tmp, 'w');
        try {
          await fh.writeFile(JSON.stringify(doc, null, 2) + '\n');
          await fh.sync();
        } finally {
          await fh.close();
        }
        await fs.rename(tmp, this.file);
        // Keep the parsed form: ids and untouched entities are unchanged, touched ones are already current.
        const st = await fs.stat(this.file);
        cache.set(this.file, { ...p, mtimeMs: st.mtimeMs, size: st.size, rawEntities: out, raw: doc });
      }
      return result;
    } finally {
      await release();
    }
  }
}
