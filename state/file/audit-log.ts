import { promises as fs, writeSync } from 'node:fs';
import * as path from 'node:path';
import { catalogKey } from '../../domain/ids';
import { digest64 } from '../../domain/digest';
import type { CatalogIdentity } from '../../catalog/adapter';
import { storeFault } from '../fault-points';
import { auditPageKey, type AppliedBy, type AuditEntry, type AuditTrail } from '../store';

/** One audit log per catalog: named after the catalog, keyed by its identity (for a file, its absolute path). */
export function auditFileFor(stateDir: string, identity: CatalogIdentity, catalogName: string): string {
  return path.join(stateDir, 'audit', `${catalogKey(catalogName)}-${digest64(identity.key).slice(0, 10)}.jsonl`);
}

interface Index {
  offset: number;
  applied: Map<string, AppliedBy>; // proposalId -> who wrote it (undone ones removed)
  /** One AppliedBy per sweep and run: a large catalog's log has a few writers and a hundred thousand writes. */
  writers: Map<string, AppliedBy>;
  pagesLogged: Set<string>; // `${ledgerKey}#${page}` of fully logged pages
  /** Lines that do not parse: a write cut short by a crash. Skipped, counted, never fatal. */
  brokenLines: number;
}

const indexes = new Map<string, Index>();
const APPEND_SLICE = 2000;
const READ_SLICE = 4 * 1024 * 1024;
/** How a decision line starts when `type` is its first key, as ARGUS writes them (others are parsed: still right). */
const DECISION_PREFIX = '{"type":"decision",';
const reading = new Map<string, Promise<unknown>>();

/**
 * The audit log of one catalog: JSON lines, append-only. The applied-proposal index is rebuilt
 * incrementally from the file, so every process sees writes made by the others.
 */
export class AuditLog implements AuditTrail {
  constructor(readonly file: string) {}

  /** Append entries; an entry may come already serialised (one JSON line without its newline). */
  async append(entries: (AuditEntry | string)[]): Promise<void> {
    if (entries.length === 0) return;
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    const fh = await fs.open(this.file, 'a+');
    try {
      // A process killed inside a write can leave a line without its newline: start on a line of our own, so the
      // cut line stays one broken line (skipped by readers) instead of corrupting the first line appended here.
      const { size } = await fh.stat();
      if (size > 0) {
        const last = Buffer.alloc(1);
        await fh.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) await fh.write('\n');
      }
      // In slices, so a page of thousands of decisions never sits in memory as one string; synced once. Each
      // slice is one write() on a file opened for appending, so slices of concurrent appenders never interleave
      // inside a line (FileHandle.writeFile would split a large slice into several writes).
      for (let i = 0; i < entries.length; i += APPEND_SLICE) {
        const slice = Buffer.from(
          entries
            .slice(i, i + APPEND_SLICE)
            .map((e) => (typeof e === 'string' ? e : JSON.stringify(e)) + '\n')
            .join(''),
        );
        // A kill inside this write(): half the slice's bytes reach the file, the last of its lines torn.
        if (i === 0) storeFault('audit-append', () => writeSync(fh.fd, slice, 0, slice.length >> 1));
        const { bytesWritten } = await fh.write(slice);
        if (bytesWritten !== slice.length)
          throw new Error(`audit log ${this.file}: wrote ${bytesWritten} of ${slice.length} bytes (disk full?)`);
      }
      await fh.sync();
    } finally {
      await fh.close();
    }
  }

  async readAll(): Promise<AuditEntry[]> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    const out: AuditEntry[] = [];
    for (const l of text.split('\n')) {
      if (!l.trim()) continue;
      const e = parseLine(l);
      if (e) out.push(e);
    }
    return out;
  }

  /** Proposal ids currently applied (written and not undone), with the sweep and run that wrote each. */
  async applied(): Promise<Map<string, AppliedBy>> {
    return (await this.index()).applied;
  }

  /** Whether a page's write step logged all its lines (its `page` line is in the log). */
  async pageLogged(ledgerKey: string, page: number, round = 0): Promise<boolean> {
    return (await this.index()).pagesLogged.has(auditPageKey(ledgerKey, page, round));
  }

  async lastReviewed(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const e of await this.readAll())
      if (e.type === 'decision' && (out.get(e.entityId) ?? '') < e.time) out.set(e.entityId, e.time);
    return out;
  }

  private index(): Promise<Index> {
    // One reader at a time per file: the index's offset must advance once per byte read.
    const prev = reading.get(this.file) ?? Promise.resolve();
    const next = prev.catch(() => undefined).then(() => this.readNew());
    reading.set(this.file, next);
    return next;
  }

  private async readNew(): Promise<Index> {
    let idx = indexes.get(this.file);
    if (!idx) {
      idx = { offset: 0, applied: new Map(), writers: new Map(), pagesLogged: new Set(), brokenLines: 0 };
      indexes.set(this.file, idx);
    }
    const reset = (i: Index) => {
      i.offset = 0;
      i.applied.clear();
      i.writers.clear();
      i.pagesLogged.clear();
      i.brokenLines = 0;
    };
    let fh;
    try {
      fh = await fs.open(this.file, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        reset(idx);
        return idx;
      }
      throw e;
    }
    try {
      const { size } = await fh.stat();
      if (size < idx.offset) reset(idx);
      // A few megabytes at a time, so a large log (a fresh process meets all of it) never sits in memory whole.
      let buf = Buffer.alloc(Math.min(READ_SLICE, Math.max(0, size - idx.offset)));
      while (size > idx.offset) {
        const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - idx.offset), idx.offset);
        // Work in bytes: a read can end inside a line (or a multi-byte character) another writer is appending.
        const lastNl = buf.subarray(0, bytesRead).lastIndexOf(0x0a);
        if (lastNl < 0) {
          if (bytesRead < buf.length) break; // the rest is a line still being written
          buf = Buffer.alloc(buf.length * 2); // one very long line: read more of it at once
          continue;
        }
        for (const line of buf.subarray(0, lastNl).toString('utf8').split('\n')) {
          // Decision lines (most of the log) never change the index: skip them without parsing.
          if (line.startsWith(DECISION_PREFIX) || !line.trim()) continue;
          const e = parseLine(line);
          if (!e) idx.brokenLines++;
          else if (e.type === 'write') idx.applied.set(e.proposalId, writerOf(idx, e.sweepId, e.ledgerKey));
          else if (e.type === 'undo') idx.applied.delete(e.proposalId);
          else if (e.type === 'page') idx.pagesLogged.add(auditPageKey(e.ledgerKey, e.page, e.round));
        }
        idx.offset += lastNl + 1;
      }
    } finally {
      await fh.close();
    }
    return idx;
  }
}

/** The shared AppliedBy of a sweep's run (callers only read it). */
function writerOf(idx: Index, sweepId: string, ledgerKey: string | undefined): AppliedBy {
  const key = `${sweepId}\u0000${ledgerKey ?? ''}`;
  let by = idx.writers.get(key);
  if (!by) {
    by = Object.freeze({ sweepId, ...(ledgerKey ? { ledgerKey } : {}) });
    idx.writers.set(key, by);
  }
  return by;
}

/** One audit line, or undefined for a line a crash cut short (it ends where the next append begins). */
function parseLine(line: string): AuditEntry | undefined {
  try {
    return JSON.parse(line) as AuditEntry;
  } catch {
    return undefined;
  }
}
