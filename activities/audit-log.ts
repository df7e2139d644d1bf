import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Decision, ProposalChange } from '../domain/proposal';

/** One line of the append-only audit log. `write` lines carry before/after so a sweep can be undone. */
export type AuditEntry =
  | {
      type: 'decision';
      time: string;
      sweepId: string;
      proposalId: string;
      entityId: string;
      change: ProposalChange;
      evidence: string[];
      outcome: Decision;
      reason: string;
      reviewer: string;
    }
  | {
      type: 'write';
      time: string;
      sweepId: string;
      proposalId: string;
      entityId: string;
      change: ProposalChange;
      reviewer: string;
      before: unknown;
      after: unknown;
    }
  | { type: 'undo'; time: string; sweepId: string; proposalId: string; entityId: string; undoneBy: string };

interface Index {
  offset: number;
  applied: Map<string, string>; // proposalId -> sweepId that wrote it (undone ones removed)
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
export class AuditLog {
  constructor(readonly file: string) {}

  async append(entries: AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    const fh = await fs.open(this.file, 'a');
    try {
      // In slices, so a page of thousands of decisions never sits in memory as one string; synced once. Each
      // slice is one write() on a file opened for appending, so slices of concurrent appenders never interleave
      // inside a line (FileHandle.writeFile would split a large slice into several writes).
      for (let i = 0; i < entries.length; i += APPEND_SLICE) {
        const slice = Buffer.from(
          entries
            .slice(i, i + APPEND_SLICE)
            .map((e) => JSON.stringify(e) + '\n')
            .join(''),
        );
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
    return text
      .split('\n')
      .filter((l) => l.trim().length > 0)
      .map((l) => JSON.parse(l) as AuditEntry);
  }

  /** Proposal ids currently applied (written and not undone), with the sweep that wrote each. */
  applied(): Promise<Map<string, string>> {
    // One reader at a time per file: the index's offset must advance once per byte read.
    const prev = reading.get(this.file) ?? Promise.resolve();
    const next = prev.catch(() => undefined).then(() => this.readNew());
    reading.set(this.file, next);
    return next;
  }

  private async readNew(): Promise<Map<string, string>> {
    let idx = indexes.get(this.file);
    if (!idx) {
      idx = { offset: 0, applied: new Map() };
      indexes.set(this.file, idx);
    }
    let fh;
    try {
      fh = await fs.open(this.file, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        idx.offset = 0;
        idx.applied.clear();
        return idx.applied;
      }
      throw e;
    }
    try {
      const { size } = await fh.stat();
      if (size < idx.offset) {
        idx.offset = 0;
        idx.applied.clear();
      }
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
          const e = JSON.parse(line) as AuditEntry;
          if (e.type === 'write') idx.applied.set(e.proposalId, e.sweepId);
          else if (e.type === 'undo') idx.applied.delete(e.proposalId);
        }
        idx.offset += lastNl + 1;
      }
    } finally {
      await fh.close();
    }
    return idx.applied;
  }
}
