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
      await fh.write(entries.map((e) => JSON.stringify(e)).join('\n') + '\n');
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
  async applied(): Promise<Map<string, string>> {
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
      if (size > idx.offset) {
        const buf = Buffer.alloc(size - idx.offset);
        await fh.read(buf, 0, buf.length, idx.offset);
        const text = buf.toString('utf8');
        const lastNl = text.lastIndexOf('\n');
        if (lastNl >= 0) {
          for (const line of text.slice(0, lastNl).split('\n')) {
            if (!line.trim()) continue;
            const e = JSON.parse(line) as AuditEntry;
            if (e.type === 'write') idx.applied.set(e.proposalId, e.sweepId);
            else if (e.type === 'undo') idx.applied.delete(e.proposalId);
          }
          idx.offset += Buffer.byteLength(text.slice(0, lastNl + 1));
        }
      }
    } finally {
      await fh.close();
    }
    return idx.applied;
  }
}
