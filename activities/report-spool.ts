import * as path from 'node:path';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { ReportProposal, SweepReport } from '../domain/report';
import { writeFileAtomic } from '../state/file/fs';
import { faultPoint } from './fault-points';

/**
 * The report file, written page by page: up to 5,000 proposals are held in memory and the report comes out
 * indented for people; past that every proposal goes to a spool file as the pages are read, so a report of
 * ~76,000 proposals never sits in memory whole, and the report is compact with the proposals last.
 */
const SMALL_REPORT = 5000;

export class ReportSpool {
  private held: ReportProposal[] = [];
  private count = 0;
  private spool: { file: string; fh: FileHandle } | undefined;
  constructor(private readonly file: string) {}

  async add(rows: ReportProposal[]): Promise<void> {
    if (rows.length === 0) return;
    if (!this.spool && this.held.length + rows.length <= SMALL_REPORT) {
      this.held.push(...rows);
      return;
    }
    if (!this.spool) {
      await fsp.mkdir(path.dirname(this.file), { recursive: true });
      const file = `${this.file}.${process.pid}.${Math.random().toString(36).slice(2)}.proposals.tmp`;
      this.spool = { file, fh: await fsp.open(file, 'w') };
      rows = [...this.held, ...rows];
      this.held = [];
    }
    await this.spool.fh.writeFile(rows.map((r) => (this.count++ === 0 ? '' : ',') + JSON.stringify(r)).join(''));
  }

  async abort(): Promise<void> {
    if (!this.spool) return;
    await this.spool.fh.close().catch(() => undefined);
    await fsp.rm(this.spool.file, { force: true });
  }

  /** Write the report file atomically: the report's fields with every spooled proposal. */
  async finish(report: SweepReport): Promise<void> {
    faultPoint('report-spool');
    const whole = { ...report, proposalsTruncated: 0 };
    if (!this.spool) {
      await writeFileAtomic(this.file, JSON.stringify({ ...whole, proposals: this.held }, null, 2));
      return;
    }
    const spool = this.spool;
    await spool.fh.close();
    try {
      const { proposals: _kept, ...rest } = whole;
      void _kept;
      const tmp = `${this.file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      const out = await fsp.open(tmp, 'w');
      try {
        const head = JSON.stringify(rest);
        await out.writeFile(`${head.slice(0, -1)},"proposals":[`);
        const src = await fsp.open(spool.file, 'r');
        try {
          const buf = Buffer.alloc(1 << 20);
          for (;;) {
            const { bytesRead } = await src.read(buf, 0, buf.length, null);
            if (bytesRead === 0) break;
            await out.writeFile(buf.subarray(0, bytesRead));
          }
        } finally {
          await src.close();
        }
        await out.writeFile(']}');
        await out.close();
        await fsp.rename(tmp, this.file);
      } catch (e) {
        await out.close().catch(() => undefined);
        await fsp.rm(tmp, { force: true });
        throw e;
      }
    } finally {
      await fsp.rm(spool.file, { force: true });
    }
  }
}
