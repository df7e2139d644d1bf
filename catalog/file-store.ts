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
  /** Whether the file is indented (ARGUS keeps a file's layout: indented stays indented, one line stays one line). */
  indented: boolean;
  /** Text of each entity as last written; undefined when it must be serialised again. */
  serialized: (string | undefined)[];
  valid: Map<string, CatalogEntity>;
  invalid: Map<string, string>;
  /** True while this process writes the file: its mtime and size change before they are recorded here. */
  committing: boolean;
}

const cache = new Map<string, Parsed>();
const ENTITIES_MARK = '\u0000argus:entities\u0000';
const ENTITIES_MARK_JSON = JSON.stringify(ENTITIES_MARK);

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
    // The envelope without its entities (the key stays where it was), so the file's objects are not kept twice.
    raw: { ...(json as Record<string, unknown>), entities: ENTITIES_MARK },
    rawEntities,
    byId,
    ids: [...byId.keys()],
    indented: /^\s*\{\s*\n/.test(text.slice(0, 200)),
    serialized: [],
    valid: new Map(),
    invalid,
    committing: false,
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
  // Keep the entity's text as the file has it (untouched entities are written back as they were), and let the
  // validated object stand for it from now on: one copy of each entity in memory instead of two.
  p.serialized[idx] ??= entityText(p, p.rawEntities[idx]!);
  p.rawEntities[idx] = r.data as unknown as Record<string, unknown>;
  p.valid.set(id, r.data);
  return r.data;
}

function entityText(p: Parsed, entity: unknown): string {
  return p.indented ? '    ' + JSON.stringify(entity, null, 2).replace(/\n/g, '\n    ') : JSON.stringify(entity);
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

type Mutation = (get: (id: string) => CatalogEntity | undefined) => unknown;
interface Queue {
  waiting: { fn: Mutation; resolve: (v: unknown) => void; reject: (e: unknown) => void }[];
  running: boolean;
}
// One writer at a time inside this process (with group commit); the lock file covers other processes.
const queues = new Map<string, Queue>();

/**
 * The whole file, in its own layout, from cached per-entity text: only entities changed since the last write
 * are serialised again, so a write costs a string join, not a walk of the whole catalog.
 */
function serialize(p: Parsed): string[] {
  const parts: string[] = [];
  for (let i = 0; i < p.rawEntities.length; i++) {
    let t = p.serialized[i];
    if (t === undefined) {
      t = entityText(p, p.rawEntities[i]);
      p.serialized[i] = t;
    }
    parts.push(t);
  }
  // Pieces of about a thousand entities: a large catalog is never built as one string (nor one buffer).
  const sep = p.indented ? ',\n' : ',';
  const pieces: string[] = [];
  for (let i = 0; i < parts.length; i += 1000) pieces.push((i === 0 ? '' : sep) + parts.slice(i, i + 1000).join(sep));
  // The envelope holds a marker where the entities go (p.raw keeps the key where the file had it).
  const head = JSON.stringify(p.raw, null, p.indented ? 2 : undefined);
  const at = head.indexOf(ENTITIES_MARK_JSON);
  const rest = head.slice(at + ENTITIES_MARK_JSON.length);
  return p.indented
    ? [`${head.slice(0, at)}[\n`, ...pieces, `\n  ]${rest}\n`]
    : [`${head.slice(0, at)}[`, ...pieces, `]${rest}\n`];
}

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
    // While this process commits, its parsed form is the newest state: without this, a read that lands between
    // the rename and the recorded mtime would parse the whole file again.
    if (hit && (hit.committing || (hit.mtimeMs === st.mtimeMs && hit.size === st.size))) return hit;
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

  /**
   * Apply a batch of mutations atomically. Calls that arrive while a write is in progress are committed
   * together in the next write (group commit), so concurrent pages cost one file write, not one each.
   */
  update<T>(fn: (get: (id: string) => CatalogEntity | undefined) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let q = queues.get(this.file);
      if (!q) {
        q = { waiting: [], running: false };
        queues.set(this.file, q);
      }
      q.waiting.push({ fn: fn as Mutation, resolve: resolve as (v: unknown) => void, reject });
      if (!q.running) void this.drain(q);
    });
  }

  private async drain(q: Queue): Promise<void> {
    q.running = true;
    try {
      // A large catalog costs a full rewrite per commit: wait a moment so concurrent pages share one.
      const entities = cache.get(this.file)?.rawEntities.length ?? 0;
      if (entities > 2000) await new Promise((r) => setTimeout(r, Math.min(250, entities / 40)));
      while (q.waiting.length > 0) {
        const batch = q.waiting.splice(0, q.waiting.length);
        try {
          const results = await this.commit(batch.map((b) => b.fn));
          batch.forEach((b, i) => b.resolve(results[i]));
        } catch (e) {
          for (const b of batch) b.reject(e);
        }
      }
    } finally {
      q.running = false;
    }
  }

  private async commit(fns: Mutation[]): Promise<unknown[]> {
    const release = await acquireLock(`${this.file}.lock`);
    try {
      const p = await this.load();
      const touched = new Set<number>();
      const get = (id: string) => {
        const e = validate(p, id);
        const idx = p.byId.get(id);
        if (e && idx !== undefined) touched.add(idx);
        return e;
      };
      let results: unknown[];
      try {
        results = fns.map((fn) => fn(get));
      } catch (e) {
        // A mutation failed half-way: forget the in-memory changes, the file is untouched.
        cache.delete(this.file);
        throw e;
      }
      if (touched.size > 0) {
        // Touched entities are validated ones, so rawEntities already holds the changed objects.
        for (const idx of touched) p.serialized[idx] = undefined;
        const pieces = serialize(p);
        const tmp = `${this.file}.${process.pid}.${Date.now()}.tmp`;
        p.committing = true;
        try {
          const fh = await fs.open(tmp, 'w');
          try {
            for (const piece of pieces) await fh.writeFile(piece);
            await fh.sync();
          } finally {
            await fh.close();
          }
          await fs.rename(tmp, this.file);
          // Keep the parsed form: ids and untouched entities are unchanged, touched ones are already current.
          const st = await fs.stat(this.file);
          p.mtimeMs = st.mtimeMs;
          p.size = st.size;
        } catch (e) {
          // The file may not hold what the parsed form does: read it again next time.
          cache.delete(this.file);
          throw e;
        } finally {
          p.committing = false;
        }
      }
      return results;
    } finally {
      await release();
    }
  }
}
