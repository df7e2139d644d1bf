import { promises as fs, openSync, closeSync, writeSync, constants as fsc } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  CatalogColumn,
  CatalogEntity,
  CatalogFileEnvelope,
  CATALOG_FORMAT,
  CATALOG_FORMAT_VERSION,
} from '../domain/catalog';
import { renderPreserving, splitEntities, type JsonPath } from './json-text';
import { CatalogError } from './adapter';
import type { CatalogSnapshot, CatalogStore, InvalidEntity, UpdateOptions } from './store';

/** Raised when the file itself (not one entity) cannot be used: not found, not a file, unreadable, empty, not a catalog. */
export class CatalogFileError extends CatalogError {
  override name = 'CatalogFileError';
  /** Absolute path of the catalog file, when the error is about one. */
  readonly path: string | undefined;
  constructor(message: string, options?: { path?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.path = options?.path;
  }
}

interface Parsed {
  mtimeMs: number;
  size: number;
  name: string;
  /** The file's bytes around and between the entities, as read: `pieces[0] + texts[0] + pieces[1] + …`. */
  pieces: string[];
  /** Text of each entity as last written (or read); a touched entity is rendered against it. */
  texts: string[];
  rawEntities: Record<string, unknown>[];
  byId: Map<string, number>;
  ids: string[];
  valid: Map<string, CatalogEntity>;
  invalid: Map<string, string>;
  /**
   * Entities whose text is exactly what JSON.stringify makes of their validated form in this file's layout (no
   * default left out, keys in the schema's order): for them the preserving render and a plain stringify give the
   * same text, and the stringify is several times cheaper (most catalogs written by a program are like this).
   */
  canonical: Set<number>;
  /** True while this process writes the file: its mtime and size change before they are recorded here. */
  committing: boolean;
}

const cache = new Map<string, Parsed>();

function entityId(raw: Record<string, unknown>, index: number): string {
  return typeof raw.id === 'string' && raw.id.length > 0 ? raw.id : `#${index}`;
}

function parse(text: string, file: string, mtimeMs: number, size: number): Parsed {
  if (text.trim().length === 0) throw new CatalogFileError(`${file} is empty`, { path: file });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new CatalogFileError(`${file} is not valid JSON: ${(e as Error).message}`, { path: file, cause: e });
  }
  if (
    json &&
    typeof json === 'object' &&
    'version' in json &&
    (json as { version: unknown }).version !== CATALOG_FORMAT_VERSION
  ) {
    throw new CatalogFileError(
      `${file} has catalog format version ${String((json as { version: unknown }).version)}; this ARGUS reads version ${CATALOG_FORMAT_VERSION}`,
      { path: file },
    );
  }
  const env = CatalogFileEnvelope.safeParse(json);
  if (!env.success) {
    const fields = env.error.issues.map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`).join('; ');
    throw new CatalogFileError(`${file} is not an ${CATALOG_FORMAT} v${CATALOG_FORMAT_VERSION} file: ${fields}`, {
      path: file,
    });
  }
  const rawEntities = env.data.entities;
  // The entities' own bytes, so that what ARGUS does not change is written back exactly as it was read.
  const split = splitEntities(text);
  if (!split || split.entities.length !== rawEntities.length)
    throw new CatalogFileError(`${file}: the entities array could not be located in the text`, { path: file });
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
    pieces: split.pieces,
    texts: split.entities,
    rawEntities,
    byId,
    ids: [...byId.keys()],
    valid: new Map(),
    invalid,
    canonical: new Set(),
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
  // The entity's text stays as the file has it; the validated object stands for the parsed one from now on:
  // one copy of each entity in memory besides its text.
  // Keys in the file's order (zod builds objects in the schema's): a stringify then reproduces a program-written
  // file's text, which lets most entities skip the slower preserving render.
  const entity = inOrderOf(r.data, p.rawEntities[idx]) as CatalogEntity;
  p.rawEntities[idx] = entity as unknown as Record<string, unknown>;
  p.valid.set(id, entity);
  if (stringified(entity, entityIndent(p, idx)) === p.texts[idx]) p.canonical.add(idx);
  return entity;
}

/** Keys zod fills in when absent, with the values it fills in (derived from the schema, not restated). */
function filledDefaults(output: object, input: object): Readonly<Record<string, unknown>> {
  return Object.freeze(Object.fromEntries(Object.entries(output).filter(([k]) => !(k in input))));
}
const COLUMN_INPUT = { name: 'c', type: 't' };
const ENTITY_INPUT = { id: 'e', database: 'd', name: 'e', kind: 'table', columns: [COLUMN_INPUT] };
const ENTITY_DEFAULTS = filledDefaults(CatalogEntity.parse(ENTITY_INPUT), ENTITY_INPUT);
const COLUMN_DEFAULTS = filledDefaults(CatalogColumn.parse(COLUMN_INPUT), COLUMN_INPUT);

function entityDefaults(at: JsonPath): Readonly<Record<string, unknown>> | undefined {
  if (at.length === 0) return ENTITY_DEFAULTS;
  if (at.length === 2 && at[0] === 'columns') return COLUMN_DEFAULTS;
  return undefined;
}

/** `value` (zod's output) with its objects' keys in the order `raw` (what was parsed) has them, then the rest. */
function inOrderOf(value: unknown, raw: unknown): unknown {
  if (Array.isArray(value)) return Array.isArray(raw) ? value.map((v, i) => inOrderOf(v, raw[i])) : value;
  if (value === null || typeof value !== 'object' || raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return value;
  const v = value as Record<string, unknown>;
  const r = raw as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(r)) if (Object.hasOwn(v, k)) out[k] = inOrderOf(v[k], r[k]);
  for (const k of Object.keys(v)) if (!Object.hasOwn(out, k)) out[k] = v[k];
  return out;
}

/** Indentation of the line an entity's text starts on; undefined when it does not start a line (a one-line file). */
function entityIndent(p: Parsed, idx: number): string | undefined {
  const before = p.pieces[idx]!;
  const nl = before.lastIndexOf('\n');
  return nl >= 0 && /^[ \t]*$/.test(before.slice(nl + 1)) ? before.slice(nl + 1) : undefined;
}

/** JSON.stringify of an entity laid out as an entity of this file: one line, or two-space indented from `indent`. */
function stringified(entity: unknown, indent: string | undefined): string {
  return indent === undefined ? JSON.stringify(entity) : JSON.stringify(entity, null, 2).replace(/\n/g, '\n' + indent);
}

/** The text of a changed entity: its last text with only what changed rewritten, in the file's layout. */
function renderEntity(p: Parsed, idx: number): string {
  const indent = entityIndent(p, idx);
  // A change keeps an entity canonical: JSON keeps the order keys were added in, as the renderer appends them.
  if (p.canonical.has(idx)) return stringified(p.rawEntities[idx], indent);
  // The entities beside it tell how this file lays out what the entity itself no longer shows (say, an emptied list).
  const neighbours: string[] = [];
  for (let d = 1; d <= 5; d++) neighbours.push(...[p.texts[idx - d], p.texts[idx + d]].filter((x) => x !== undefined));
  return renderPreserving(p.texts[idx]!, p.rawEntities[idx], { defaults: entityDefaults, neighbours, indent });
}

const LOCK_TIMEOUT_MS = 30000;
// A holder touches its lock this often, so only a lock untouched for LOCK_TIMEOUT_MS is taken as abandoned.
const LOCK_REFRESH_MS = 5000;

/** What a lock file holds: who holds it, so a lock left by a dead process on this host is broken at once. */
interface LockOwner {
  pid: number;
  hostname: string;
  acquiredAt: string;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(text: string): LockOwner | undefined {
  try {
    const o = JSON.parse(text) as Partial<LockOwner>;
    if (typeof o.pid === 'number' && typeof o.hostname === 'string') return o as LockOwner;
  } catch {
    // Empty (being written) or a lock from an older ARGUS: only its age tells.
  }
  return undefined;
}

/** Whether the lock file with this content and mtime was left by a writer that is gone. */
function abandoned(text: string, mtimeMs: number, timeoutMs: number): boolean {
  const owner = readOwner(text);
  if (owner && owner.hostname === os.hostname() && owner.pid !== process.pid && !pidAlive(owner.pid)) return true;
  return Date.now() - mtimeMs > timeoutMs;
}

/** Take away an abandoned lock, unless another writer replaced it since it was judged abandoned. */
async function breakLock(lockPath: string, judged: string): Promise<void> {
  const aside = `${lockPath}.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2)}.stale`;
  try {
    await fs.rename(lockPath, aside);
  } catch {
    return; // already gone
  }
  const got = await fs.readFile(aside, 'utf8').catch(() => judged);
  // Someone took the lock between our read and our rename: give it back (link fails if a third writer holds it).
  if (got !== judged) await fs.link(aside, lockPath).catch(() => undefined);
  await fs.rm(aside, { force: true });
}

async function acquireLock(lockPath: string, timeoutMs = LOCK_TIMEOUT_MS): Promise<() => Promise<void>> {
  const started = Date.now();
  for (;;) {
    const owner = JSON.stringify({
      pid: process.pid,
      hostname: os.hostname(),
      acquiredAt: new Date().toISOString(),
    } satisfies LockOwner);
    try {
      const fd = openSync(lockPath, fsc.O_CREAT | fsc.O_EXCL | fsc.O_WRONLY);
      try {
        writeSync(fd, owner);
      } finally {
        closeSync(fd);
      }
      const refresh = setInterval(() => {
        const now = new Date();
        fs.utimes(lockPath, now, now).catch(() => undefined);
      }, LOCK_REFRESH_MS);
      refresh.unref();
      return async () => {
        clearInterval(refresh);
        // Remove only our own lock: if it was broken and taken by another writer, it is theirs now.
        const now = await fs.readFile(lockPath, 'utf8').catch(() => undefined);
        if (now === owner) await fs.rm(lockPath, { force: true });
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const [text, st] = await Promise.all([
        fs.readFile(lockPath, 'utf8').catch(() => undefined),
        fs.stat(lockPath).catch(() => undefined),
      ]);
      if (Date.now() - started > timeoutMs)
        throw new Error(`timed out waiting for catalog lock ${lockPath}`, { cause: e });
      if (text !== undefined && st && abandoned(text, st.mtimeMs, timeoutMs)) {
        await breakLock(lockPath, text);
        continue;
      }
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
    }
  }
}

type Mutation = (get: (id: string) => CatalogEntity | undefined) => unknown;
interface Waiter {
  fn: Mutation;
  opts: UpdateOptions<unknown> | undefined;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}
interface Queue {
  waiting: Waiter[];
  running: boolean;
}
// One writer at a time inside this process (with group commit); the lock file covers other processes.
const queues = new Map<string, Queue>();

/**
 * The whole file from the pieces read and each entity's current text, in chunks of about a thousand entities:
 * a large catalog is never built as one string (nor one buffer), and a write costs a join, not a walk.
 */
function serialize(p: Parsed): string[] {
  const chunks: string[] = [p.pieces[0]!];
  for (let i = 0; i < p.texts.length; i += 1000) {
    let chunk = '';
    for (let j = i; j < Math.min(i + 1000, p.texts.length); j++) chunk += p.texts[j]! + p.pieces[j + 1]!;
    chunks.push(chunk);
  }
  return chunks;
}

/** A file-system error on the catalog path, in plain words. */
function pathError(file: string, e: unknown): CatalogFileError {
  const code = (e as NodeJS.ErrnoException).code;
  const why: Record<string, string> = {
    ENOENT: `catalog file not found: ${file}`,
    ENOTDIR: `catalog file not found: ${file} (a parent of it is not a directory)`,
    EISDIR: `${file} is a directory, not a catalog file`,
    EACCES: `${file} cannot be read: permission denied`,
    EPERM: `${file} cannot be read: operation not permitted`,
  };
  return new CatalogFileError(why[code ?? ''] ?? `${file} cannot be read: ${(e as Error).message}`, {
    path: file,
    cause: e,
  });
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
    } catch (e) {
      throw pathError(this.file, e);
    }
    if (st.isDirectory())
      throw new CatalogFileError(`${this.file} is a directory, not a catalog file`, { path: this.file });
    const hit = cache.get(this.file);
    // While this process commits, its parsed form is the newest state: without this, a read that lands between
    // the rename and the recorded mtime would parse the whole file again.
    if (hit && (hit.committing || (hit.mtimeMs === st.mtimeMs && hit.size === st.size))) return hit;
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (e) {
      throw pathError(this.file, e);
    }
    const p = parse(text, this.file, st.mtimeMs, st.size);
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
   * `opts.beforeReplace` runs once the group's new file is on disk and before it replaces the catalog; if it
   * throws, the catalog is left as it was and every caller of the group gets the error. Path and format
   * problems reject with `CatalogFileError`.
   */
  update<T>(fn: (get: (id: string) => CatalogEntity | undefined) => T, opts?: UpdateOptions<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let q = queues.get(this.file);
      if (!q) {
        q = { waiting: [], running: false };
        queues.set(this.file, q);
      }
      q.waiting.push({
        fn: fn as Mutation,
        opts: opts as UpdateOptions<unknown> | undefined,
        resolve: resolve as (v: unknown) => void,
        reject,
      });
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
          const results = await this.commit(batch);
          batch.forEach((b, i) => b.resolve(results[i]));
        } catch (e) {
          for (const b of batch) b.reject(e);
        }
      }
    } finally {
      q.running = false;
    }
  }

  /** Every caller's hook, in the order the calls arrived; the first that throws stops the group. */
  private static async beforeReplace(batch: Waiter[], results: unknown[]): Promise<void> {
    for (let i = 0; i < batch.length; i++) await batch[i]!.opts?.beforeReplace?.(results[i]);
  }

  private async commit(batch: Waiter[]): Promise<unknown[]> {
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
      const texts = new Map<number, string>();
      try {
        results = batch.map((b) => b.fn(get));
        // Touched entities are validated ones, so rawEntities already holds the changed objects.
        for (const idx of touched) {
          const text = renderEntity(p, idx);
          if (text !== p.texts[idx]) texts.set(idx, text);
        }
      } catch (e) {
        // A mutation failed half-way: forget the in-memory changes, the file is untouched.
        cache.delete(this.file);
        throw e;
      }
      if (texts.size === 0) {
        // Nothing changed on disk: no write, but the hooks still see the group's results.
        try {
          await FileCatalogStore.beforeReplace(batch, results);
        } catch (e) {
          cache.delete(this.file);
          throw e;
        }
        return results;
      }
      const previous = new Map<number, string>();
      for (const [idx, text] of texts) {
        previous.set(idx, p.texts[idx]!);
        p.texts[idx] = text;
      }
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
        await FileCatalogStore.beforeReplace(batch, results);
        await fs.rename(tmp, this.file);
        // Keep the parsed form: ids and untouched entities are unchanged, touched ones are already current.
        const st = await fs.stat(this.file);
        p.mtimeMs = st.mtimeMs;
        p.size = st.size;
      } catch (e) {
        await fs.rm(tmp, { force: true }).catch(() => undefined);
        // The file may not hold what the parsed form does: read it again next time.
        cache.delete(this.file);
        throw e;
      } finally {
        p.committing = false;
      }
      return results;
    } finally {
      await release();
    }
  }
}
