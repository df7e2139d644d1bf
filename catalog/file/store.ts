import {
  promises as fs,
  closeSync,
  constants as fsc,
  fstatSync,
  fsync,
  openSync,
  read,
  readFile,
  readSync,
  write,
  writeSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import {
  CatalogColumn,
  CatalogEntity,
  CatalogFileEnvelope,
  CATALOG_FORMAT,
  CATALOG_FORMAT_VERSION,
} from '../../domain/catalog';
import { locateEntities, renderPreserving, type EntityOffsets, type JsonPath } from './json-text';
import { CatalogError, type CatalogSnapshot, type InvalidEntity } from '../adapter';
import { formatIssues } from '../../domain/issues';

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
  file: string;
  mtimeMs: number;
  size: number;
  name: string;
  /**
   * A descriptor open on the bytes the offsets describe (the file as read, then as last written by this process);
   * -1 once this parsed form is dropped. Entities are read through it when asked for: the catalog's text stays in
   * the file (and the page cache), not in this process's memory.
   */
  fd: number;
  /** Where each entity's text is in those bytes. A write copies the bytes around the entities it changes. */
  starts: Float64Array;
  ends: Float64Array;
  /** Indentation of the line each entity starts on; undefined when it does not start a line (a one-line file). */
  indents: (string | undefined)[];
  byId: Map<string, number>;
  ids: string[];
  invalid: Map<string, string>;
  /**
   * The validated entities most recently asked for, in two generations of at most `keptMax / 2` each: the same
   * object to every reader and writer while it is kept; once dropped, the entity is read from the file again. An
   * entity asked for is (re)put in `young`; when `young` is full it becomes `old` and the old `old` is dropped
   * whole. (One Map in least-recent order costs more: deleting its first key again and again leaves V8 a run of
   * deleted slots to step over at every eviction, 5 s of a 100,000-entity sweep.) `young` is looked in first, so
   * an entity changed since `old` was filled is never read from `old`.
   */
  kept: { young: Map<number, CatalogEntity>; old: Map<number, CatalogEntity> };
  keptMax: number;
  /** The entities the commit under way has handed to its mutations: what everyone gets until the file holds them. */
  pinned: Map<number, CatalogEntity>;
  /**
   * Per entity, settled when it is first validated: CANONICAL when its text is exactly what JSON.stringify makes
   * of its validated form in this file's layout (no default left out, keys in the file's order), else VALIDATED.
   * For a canonical entity the preserving render and a plain stringify give the same text, and the stringify is
   * several times cheaper (most catalogs written by a program are like this); and its text parses to its validated
   * form, so reading it again from the file needs no validation. A change keeps an entity canonical.
   */
  canonical: Uint8Array;
  /** True while this process writes the file: its mtime and size change before they are recorded here. */
  committing: boolean;
}

/**
 * Validated entities kept per catalog file by default (20,000 to 40,000: see {@link Parsed.kept}), some 50 to 100 MB
 * of generated ones (about 2.5 KB each), where a 100,000-entity catalog held whole kept 250 MB of text and twice
 * that parsed alive for the whole sweep. A sweep's working set is about that size (ten pages of a thousand in
 * flight and the upstream entities their descriptions rest on): an entity dropped is read again, for a canonical
 * one a read and a JSON.parse, and judgment's caches (kept per object) work again for the new object. At 100,000
 * entities the sweep took 120 s and its worker peaked at 963 MiB (one least-recent Map of 20,000 took 128 s,
 * 5 s of it evicting, and 760 MiB).
 */
const ENTITIES_KEPT = 40_000;

/** Values of {@link Parsed.canonical}; 0: not validated yet. */
const VALIDATED = 1;
const CANONICAL = 2;

/** How long a commit waits for another writer to join it, again after each one that does (see drain). */
const JOIN_WAIT_MS = 40;

const cache = new Map<string, Parsed>();
// Reads that find no current parsed form share one parse of the file (a restarted worker's pages all arrive at once).
const pending = new Map<string, Promise<Parsed>>();

function drop(p: Parsed): void {
  if (p.fd >= 0) closeSync(p.fd);
  p.fd = -1;
}

/** Make `p` the file's parsed form (the one it replaces is dropped). */
function keep(p: Parsed): void {
  const old = cache.get(p.file);
  if (old && old !== p) drop(old);
  cache.set(p.file, p);
}

/** Forget the file's parsed form: the next read parses the file again. */
function forget(file: string): void {
  const old = cache.get(file);
  if (old) drop(old);
  cache.delete(file);
}

function remember(p: Parsed, idx: number, entity: CatalogEntity): void {
  p.kept.young.set(idx, entity);
  if (p.kept.young.size >= Math.max(1, Math.floor(p.keptMax / 2))) p.kept = { young: new Map(), old: p.kept.young };
}

function recall(p: Parsed, idx: number): CatalogEntity | undefined {
  const young = p.kept.young.get(idx);
  if (young) return young;
  const old = p.kept.old.get(idx);
  if (old) remember(p, idx, old);
  return old;
}

/** Bytes `start` to `end` of an open file. */
function readBytes(fd: number, start: number, end: number, file: string): Buffer {
  const b = Buffer.allocUnsafe(end - start);
  for (let got = 0; got < b.length;) {
    const n = readSync(fd, b, got, b.length - got, start + got);
    if (n === 0) throw new Error(`${file} is shorter than when it was read`);
    got += n;
  }
  return b;
}

/** Bytes `start` to `end` of an open file, as text. */
function readText(fd: number, start: number, end: number, file: string): string {
  return readBytes(fd, start, end, file).toString('utf8');
}

/** Largest run of the file read at once while digesting records. */
const DIGEST_RUN_BYTES = 4 << 20;

/**
 * The digest of each record's bytes (sha1, 64 bits as hex) as `p` places them, read through `p.fd` in runs of at most
 * DIGEST_RUN_BYTES from one record asked for to the last one that fits (what lies between is read too: a page's
 * records are neighbours in the file) rather than one read each. Synchronous: the bytes are the ones `p` describes.
 */
function digestRecords(p: Parsed, idxs: readonly number[]): Map<number, string> {
  const out = new Map<number, string>();
  const order = [...new Set(idxs)].sort((a, b) => p.starts[a]! - p.starts[b]!);
  for (let i = 0; i < order.length;) {
    const from = p.starts[order[i]!]!;
    let j = i + 1;
    while (
      j < order.length &&
      p.ends[order[j]!]! - from <= DIGEST_RUN_BYTES &&
      p.starts[order[j]!]! >= p.ends[order[j - 1]!]!
    )
      j++;
    const to = p.ends[order[j - 1]!]!;
    const buf = readBytes(p.fd, from, to, p.file);
    for (let k = i; k < j; k++) {
      const idx = order[k]!;
      const bytes = buf.subarray(p.starts[idx]! - from, p.ends[idx]! - from);
      out.set(idx, createHash('sha1').update(bytes).digest('hex').slice(0, 16));
    }
    i = j;
  }
  return out;
}

function entityId(raw: Record<string, unknown>, index: number): string {
  return typeof raw.id === 'string' && raw.id.length > 0 ? raw.id : `#${index}`;
}

function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new CatalogFileError(`${file} is not valid JSON: ${(e as Error).message}`, { path: file, cause: e });
  }
}

/** The file's name, once its version and envelope are the ones this ARGUS reads. */
function checkEnvelope(json: unknown, file: string): string {
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
    const fields = formatIssues(env.error, { root: '(file)' });
    throw new CatalogFileError(`${file} is not an ${CATALOG_FORMAT} v${CATALOG_FORMAT_VERSION} file: ${fields}`, {
      path: file,
    });
  }
  return env.data.name;
}

/**
 * The error of a file that cannot be read entity by entity (not an object, not JSON, no entities array): the one
 * reading it as one JSON text gives, so that a broken file is reported as the JSON parser sees it.
 */
function failWhole(buf: Buffer, file: string): never {
  const text = buf.toString('utf8');
  if (text.trim().length === 0) throw new CatalogFileError(`${file} is empty`, { path: file });
  checkEnvelope(parseJson(text, file), file);
  throw new CatalogFileError(`${file}: the entities array could not be located in the text`, { path: file });
}

function jsonSpace(c: number | undefined): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** Indentation of the line an entity starting at `start` starts on, when only spaces and tabs precede it there. */
function indentBefore(bytes: string, from: number, start: number): string | undefined {
  let j = start;
  while (j > from && (bytes.charCodeAt(j - 1) === 32 || bytes.charCodeAt(j - 1) === 9)) j--;
  return j > from && bytes.charCodeAt(j - 1) === 10 ? bytes.slice(j, start) : undefined;
}

/**
 * The file (`buf`, read through `fd`) read entity by entity: never the whole catalog parsed at once, and what is
 * kept of an entity is its id, its place in the file and its indentation. The checks and their errors are those
 * of parsing the whole text: JSON, then format version, then envelope.
 */
function parse(buf: Buffer, file: string, fd: number, mtimeMs: number, size: number, keptMax: number): Parsed {
  let first = 0;
  while (jsonSpace(buf[first])) first++;
  if (buf[first] !== 0x7b) failWhole(buf, file);
  // One character a byte: the offsets found in it are byte offsets, and a multi-byte character is no delimiter.
  const bytes = buf.toString('latin1');
  let at: EntityOffsets | undefined;
  try {
    at = locateEntities(bytes);
  } catch {
    at = undefined;
  }
  if (!at) failWhole(buf, file);
  const { starts, ends } = at;
  const n = starts.length;
  // The file with each entity replaced by 0 is JSON exactly when the file is, given that every entity is.
  let skeleton = buf.toString('utf8', 0, n > 0 ? starts[0] : buf.length);
  for (let k = 0; k < n; k++)
    skeleton += '0' + (k + 1 < n ? bytes.slice(ends[k], starts[k + 1]) : buf.toString('utf8', ends[k]));
  let json: unknown;
  try {
    json = JSON.parse(skeleton);
  } catch {
    failWhole(buf, file);
  }
  const indents = new Array<string | undefined>(n).fill(undefined);
  const interned = new Map<string, string>();
  const byId = new Map<string, number>();
  const invalid = new Map<string, string>();
  let records = true;
  for (let k = 0; k < n; k++) {
    const text = buf.toString('utf8', starts[k], ends[k]);
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      failWhole(buf, file);
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) records = false;
    else {
      const id = entityId(raw as Record<string, unknown>, k);
      if (byId.has(id)) invalid.set(id, `duplicate entity id "${id}"`);
      else byId.set(id, k);
    }
    const indent = indentBefore(bytes, k === 0 ? 0 : ends[k - 1]!, starts[k]!);
    if (indent !== undefined && !interned.has(indent)) interned.set(indent, indent);
    indents[k] = indent === undefined ? undefined : interned.get(indent);
  }
  // Every entity is a JSON object (what the envelope asks of them) or the envelope is checked with them all.
  const name = checkEnvelope(
    {
      ...(json as object),
      entities: records ? [] : starts.map((start, k) => JSON.parse(buf.toString('utf8', start, ends[k]))),
    },
    file,
  );
  return {
    file,
    mtimeMs,
    size,
    name,
    fd,
    starts: Float64Array.from(starts),
    ends: Float64Array.from(ends),
    indents,
    byId,
    ids: [...byId.keys()],
    invalid,
    kept: { young: new Map(), old: new Map() },
    keptMax,
    pinned: new Map(),
    canonical: new Uint8Array(n),
    committing: false,
  };
}

/**
 * The validated entity (kept, or read from the file and validated), or undefined with the reason in `p.invalid`;
 * `keep`: an entity read from the file is kept for the reads that follow.
 */
function validate(p: Parsed, id: string, keep = true): CatalogEntity | undefined {
  const idx = p.byId.get(id);
  if (idx === undefined || p.invalid.has(id)) return undefined;
  const pinned = p.pinned.get(idx);
  if (pinned) return pinned;
  const hit = recall(p, idx);
  if (hit) return hit;
  const text = readText(p.fd, p.starts[idx]!, p.ends[idx]!, p.file);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    // It was JSON when the file was read: the file was changed in place since (not replaced, as writers do).
    throw new Error(`${p.file} changed while ARGUS was reading it`, { cause: e });
  }
  if (p.canonical[idx] === CANONICAL) {
    if (keep) remember(p, idx, raw as CatalogEntity);
    return raw as CatalogEntity;
  }
  const r = CatalogEntity.safeParse(raw);
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
  // Keys in the file's order (zod builds objects in the schema's): a stringify then reproduces a program-written
  // file's text, which lets most entities skip the slower preserving render.
  const entity = inOrderOf(r.data, raw) as CatalogEntity;
  if (p.canonical[idx] === 0) p.canonical[idx] = stringified(entity, p.indents[idx]) === text ? CANONICAL : VALIDATED;
  if (keep) remember(p, idx, entity);
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

/** JSON.stringify of an entity laid out as an entity of this file: one line, or two-space indented from `indent`. */
function stringified(entity: unknown, indent: string | undefined): string {
  return indent === undefined ? JSON.stringify(entity) : JSON.stringify(entity, null, 2).replace(/\n/g, '\n' + indent);
}

/** The text of a changed entity: its last text (`textOf`) with only what changed rewritten, in the file's layout. */
function renderEntity(
  p: Parsed,
  idx: number,
  entity: CatalogEntity,
  textOf: (idx: number) => string | undefined,
): string {
  const indent = p.indents[idx];
  // A change keeps an entity canonical: JSON keeps the order keys were added in, as the renderer appends them.
  if (p.canonical[idx] === CANONICAL) return stringified(entity, indent);
  // The entities beside it tell how this file lays out what the entity itself no longer shows (say, an emptied list).
  const neighbours: string[] = [];
  for (let d = 1; d <= 5; d++) neighbours.push(...[textOf(idx - d), textOf(idx + d)].filter((x) => x !== undefined));
  return renderPreserving(textOf(idx)!, entity, { defaults: entityDefaults, neighbours, indent });
}

/** The entities' texts as they are in the file, read through a descriptor on the bytes `p` describes (each once). */
function fileTexts(fd: number, p: Parsed): (idx: number) => string | undefined {
  const read = new Map<number, string>();
  return (idx) => {
    if (idx < 0 || idx >= p.starts.length) return undefined;
    let text = read.get(idx);
    if (text === undefined) {
      text = readText(fd, p.starts[idx]!, p.ends[idx]!, p.file);
      read.set(idx, text);
    }
    return text;
  };
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

/** The new file a commit writes beside the catalog before renaming it into place. */
const tempFileOf = (file: string) => `${file}.${process.pid}.${Date.now()}.tmp`;
// Catalogs whose folder this process cleared of leftovers (once each: a later leftover is the next process's).
const cleared = new Set<string>();

/**
 * Remove what killed commits left beside the catalog: their new files (a whole copy of the catalog each), never
 * renamed. Called holding the catalog's lock: every commit writes its file holding it, so one found then is no
 * live writer's.
 */
async function removeCommitLeftovers(file: string): Promise<void> {
  if (cleared.has(file)) return;
  cleared.add(file);
  const base = path.basename(file);
  const dir = path.dirname(file);
  for (const name of await fs.readdir(dir).catch(() => [] as string[]))
    if (name.startsWith(base) && /^\.\d+\.\d+\.tmp$/.test(name.slice(base.length)))
      await fs.rm(path.join(dir, name), { force: true }).catch(() => undefined);
}

const COPY_CHUNK = 1 << 20;

function readAt(fd: number, buf: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) =>
    read(fd, buf, offset, length, position, (e, n) => (e ? reject(e) : resolve(n))),
  );
}

function writeAll(fd: number, data: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    const from = (at: number): void => {
      if (at >= data.length) return resolve();
      write(fd, data, at, data.length - at, null, (e, n) => (e ? reject(e) : from(at + n)));
    };
    from(0);
  });
}

/**
 * The file anew into `out`: its bytes as they are (read through `from`), with the changed entities' texts, in
 * file order, in place of theirs. One buffer of memory whatever the catalog's size. Returns the texts' byte lengths.
 */
async function writeChanged(
  out: number,
  from: number,
  p: Parsed,
  changed: readonly (readonly [number, string])[],
): Promise<number[]> {
  const buf = Buffer.allocUnsafe(COPY_CHUNK);
  let fill = 0;
  const flush = async () => {
    if (fill > 0) await writeAll(out, buf.subarray(0, fill));
    fill = 0;
  };
  const copy = async (pos: number, end: number) => {
    while (pos < end) {
      if (fill === buf.length) await flush();
      const n = await readAt(from, buf, fill, Math.min(buf.length - fill, end - pos), pos);
      if (n === 0) throw new Error(`${p.file} is shorter than when it was read`);
      fill += n;
      pos += n;
    }
  };
  const lengths: number[] = [];
  let pos = 0;
  for (const [idx, text] of changed) {
    await copy(pos, p.starts[idx]!);
    const length = Buffer.byteLength(text);
    if (length > buf.length - fill) await flush();
    if (length > buf.length) await writeAll(out, Buffer.from(text));
    else fill += buf.write(text, fill);
    lengths.push(length);
    pos = p.ends[idx]!;
  }
  await copy(pos, p.size);
  await flush();
  return lengths;
}

/** Each entity's offsets moved to where `writeChanged` put its text. */
function moveOffsets(p: Parsed, changed: readonly (readonly [number, string])[], lengths: readonly number[]): void {
  let shift = 0;
  let k = 0;
  for (let i = changed[0]?.[0] ?? p.starts.length; i < p.starts.length; i++) {
    let length = p.ends[i]! - p.starts[i]!;
    p.starts[i] = p.starts[i]! + shift;
    if (changed[k]?.[0] === i) {
      shift += lengths[k]! - length;
      length = lengths[k]!;
      k++;
    }
    p.ends[i] = p.starts[i]! + length;
  }
}

function readWhole(fd: number): Promise<Buffer> {
  return new Promise((resolve, reject) => readFile(fd, (e, b) => (e ? reject(e) : resolve(b))));
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

/** Options of one `CatalogStore.update` call. */
export interface UpdateOptions<T> {
  /**
   * Called with this call's result once every mutation of its group commit has run and the new catalog is
   * durably written beside the old one, before it replaces it. If it throws, nothing is replaced and every
   * call of the group rejects with that error. It is called even when the group changes nothing.
   */
  beforeReplace?: (result: T) => Promise<void>;
}

/**
 * The store under the file adapter: reads entities by id and applies a batch of mutations atomically (all of a
 * batch or none).
 */
export interface CatalogStore {
  snapshot(): Promise<CatalogSnapshot>;
  getEntities(ids: string[]): Promise<{ entities: CatalogEntity[]; invalid: InvalidEntity[] }>;
  allEntities(): Promise<{ entities: CatalogEntity[]; invalid: InvalidEntity[] }>;
  /** Apply mutations under an exclusive lock; the callback sees fresh entities. */
  update<T>(fn: (get: (id: string) => CatalogEntity | undefined) => T, opts?: UpdateOptions<T>): Promise<T>;
}

/**
 * The default catalog adapter: one versioned JSON file, updated atomically (temp file + rename). In memory: each
 * entity's id and place in the file, and the entities most recently read (see ENTITIES_KEPT).
 */
export class FileCatalogStore implements CatalogStore {
  readonly file: string;
  private readonly entitiesKept: number;
  /** `entitiesKept`: validated entities kept in memory (default ENTITIES_KEPT), when this store parses the file. */
  constructor(file: string, options?: { entitiesKept?: number }) {
    this.file = path.resolve(file);
    this.entitiesKept = Math.max(1, options?.entitiesKept ?? ENTITIES_KEPT);
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
    let loading = pending.get(this.file);
    if (!loading) {
      loading = this.read().finally(() => pending.delete(this.file));
      pending.set(this.file, loading);
    }
    return loading;
  }

  /** A parsed form that is not dropped: one whose descriptor the synchronous code that follows can read through. */
  private async live(): Promise<Parsed> {
    for (;;) {
      const p = await this.load();
      if (p.fd >= 0) return p;
    }
  }

  /** Parse the file; the descriptor it is read through stays open on those bytes (see {@link Parsed.fd}). */
  private async read(): Promise<Parsed> {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch (e) {
      throw pathError(this.file, e);
    }
    try {
      let st;
      let buf: Buffer;
      try {
        st = fstatSync(fd);
        buf = await readWhole(fd);
      } catch (e) {
        throw pathError(this.file, e);
      }
      const p = parse(buf, this.file, fd, st.mtimeMs, st.size, this.entitiesKept);
      keep(p);
      return p;
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  /** The parsed form and a descriptor of our own on the very bytes it describes (a write copies from it). */
  private async current(): Promise<{ p: Parsed; from: number }> {
    for (;;) {
      const p = await this.live();
      let from: number;
      try {
        from = openSync(this.file, 'r');
      } catch (e) {
        throw pathError(this.file, e);
      }
      let st;
      try {
        st = fstatSync(from);
      } catch (e) {
        closeSync(from);
        throw pathError(this.file, e);
      }
      if (p.fd >= 0 && st.mtimeMs === p.mtimeMs && st.size === p.size) return { p, from };
      // Replaced between the look and the open: parse what is there now.
      closeSync(from);
      if (cache.get(this.file) === p) forget(this.file);
    }
  }

  /** Let go of the entities kept for fast reads (Parsed.kept); the file's layout stays parsed, reads read the file. */
  release(): void {
    const p = cache.get(this.file);
    if (p) p.kept = { young: new Map(), old: new Map() };
  }

  async snapshot(): Promise<CatalogSnapshot> {
    const p = await this.load();
    return { name: p.name, ids: p.ids };
  }

  /**
   * Entities by id. With `digests`, also each one's record digest (recordDigests), of the very bytes it was read
   * from. With `once` (a pass over the whole catalog), entities not kept already are not kept for it, unless the
   * whole catalog fits in what this store keeps: the pages that follow then read each of them kept, with what
   * judgment remembered of it.
   */
  async getEntities(
    ids: string[],
    opts?: { digests?: boolean; once?: boolean },
  ): Promise<{ entities: CatalogEntity[]; invalid: InvalidEntity[]; digests?: Map<string, string> }> {
    const p = await this.live();
    const entities: CatalogEntity[] = [];
    const invalid: InvalidEntity[] = [];
    // Two generations of keptMax / 2: a catalog of keptMax read in order turns them over twice and keeps only its
    // second half, so only a smaller one fits whole.
    const keep = !opts?.once || p.ids.length < p.keptMax;
    for (const id of ids) {
      const e = validate(p, id, keep);
      if (e) entities.push(e);
      else invalid.push({ id, message: p.invalid.get(id) ?? `entity "${id}" is not in the catalog` });
    }
    if (!opts?.digests) return { entities, invalid };
    return {
      entities,
      invalid,
      digests: this.digestsIn(
        p,
        entities.map((e) => e.id),
      ),
    };
  }

  /**
   * Each record's digest: of its bytes exactly as the file holds them (an id not in the file has none). The same
   * digest is the same text, so the same entity: a sweep that kept what it computed of a record with its digest need
   * not read it again while the digest stays.
   */
  async recordDigests(ids: readonly string[]): Promise<Map<string, string>> {
    return this.digestsIn(await this.live(), ids);
  }

  private digestsIn(p: Parsed, ids: readonly string[]): Map<string, string> {
    const idxs: number[] = [];
    for (const id of ids) {
      const idx = p.byId.get(id);
      if (idx !== undefined) idxs.push(idx);
    }
    const byIdx = digestRecords(p, idxs);
    const out = new Map<string, string>();
    for (const id of ids) {
      const d = byIdx.get(p.byId.get(id) ?? -1);
      if (d !== undefined) out.set(id, d);
    }
    return out;
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
      // A large catalog costs a full rewrite per commit: wait a moment so concurrent pages share one. The wait
      // ends once a short while passes with no one joining (pages in flight together arrive close together),
      // and at most after what one rewrite of this size costs.
      const entities = cache.get(this.file)?.starts.length ?? 0;
      if (entities > 2000) {
        const until = Date.now() + Math.min(250, entities / 40);
        let seen = -1;
        while (q.waiting.length !== seen && Date.now() < until) {
          seen = q.waiting.length;
          await new Promise((r) => setTimeout(r, Math.min(JOIN_WAIT_MS, Math.max(0, until - Date.now()))));
        }
      }
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
      await removeCommitLeftovers(this.file);
      const { p, from } = await this.current();
      try {
        return await this.commitTo(p, from, batch);
      } finally {
        p.pinned.clear();
        closeSync(from);
      }
    } finally {
      await release();
    }
  }

  /** Run a group's mutations on `p` and write the file anew from `from` (a descriptor on the bytes `p` describes). */
  private async commitTo(p: Parsed, from: number, batch: Waiter[]): Promise<unknown[]> {
    // What a mutation gets stays the entity's one object until the file holds what is made of it.
    const get = (id: string) => {
      const e = validate(p, id);
      const idx = p.byId.get(id);
      if (e && idx !== undefined) p.pinned.set(idx, e);
      return e;
    };
    let results: unknown[];
    const texts = new Map<number, string>();
    try {
      results = batch.map((b) => b.fn(get));
      const textOf = fileTexts(from, p);
      for (const [idx, entity] of p.pinned) {
        const text = renderEntity(p, idx, entity, textOf);
        if (text !== textOf(idx)) texts.set(idx, text);
      }
    } catch (e) {
      // A mutation failed half-way: forget the in-memory changes, the file is untouched.
      forget(this.file);
      throw e;
    }
    if (texts.size === 0) {
      // Nothing changed on disk: no write, but the hooks still see the group's results.
      for (const [idx, entity] of p.pinned) remember(p, idx, entity);
      try {
        await FileCatalogStore.beforeReplace(batch, results);
      } catch (e) {
        forget(this.file);
        throw e;
      }
      return results;
    }
    const changed = [...texts].sort((a, b) => a[0] - b[0]);
    const tmp = tempFileOf(this.file);
    p.committing = true;
    let out = -1;
    try {
      // Read and write: once renamed, this descriptor is the one entities are read through.
      out = openSync(tmp, 'w+');
      const lengths = await writeChanged(out, from, p, changed);
      await promisify(fsync)(out);
      // The bytes copied must be the ones parsed: a file changed in place meanwhile is not replaced by a mix.
      const copied = fstatSync(from);
      if (copied.mtimeMs !== p.mtimeMs || copied.size !== p.size)
        throw new Error(`${this.file} changed while ARGUS rewrote it; it was left as it is`);
      await FileCatalogStore.beforeReplace(batch, results);
      await fs.rename(tmp, this.file);
      const st = fstatSync(out);
      // Keep the parsed form (unless a read replaced it meanwhile): ids and untouched entities are unchanged, the
      // touched ones are current, and the offsets move to the new file, all before anything else can read.
      if (cache.get(this.file) === p) {
        moveOffsets(p, changed, lengths);
        closeSync(p.fd);
        p.fd = out;
        out = -1;
        p.mtimeMs = st.mtimeMs;
        p.size = st.size;
        for (const [idx, entity] of p.pinned) remember(p, idx, entity);
      }
    } catch (e) {
      await fs.rm(tmp, { force: true }).catch(() => undefined);
      // The file may not hold what the parsed form does: read it again next time.
      forget(this.file);
      throw e;
    } finally {
      if (out >= 0) closeSync(out);
      p.committing = false;
    }
    return results;
  }
}
