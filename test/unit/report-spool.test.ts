import * as os from 'node:os';
import * as path from 'node:path';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { ReportSpool } from '../../activities/report-spool';
import type { ReportProposal, SweepReport } from '../../domain/report';

const row = (i: number): ReportProposal => ({
  id: `p${i}`,
  entityId: `raw.t${i % 97}`,
  agent: 'pii-classifier',
  kind: 'pii_tag',
  change: { kind: 'pii_tag', column: `c${i}`, category: 'email', confidence: 0.9, explanation: 'test row' },
  outcome: i % 3 === 0 ? 'rejected' : 'approved',
  reason: 'test',
  reviewer: 'mechanical-gate',
  written: i % 3 !== 0,
});

// Only the fields the spool itself touches matter; the rest of a report passes through untouched.
const report = (kept: ReportProposal[], truncated: number) =>
  ({ sweepId: 's', partial: false, proposals: kept, proposalsTruncated: truncated }) as unknown as SweepReport;

async function spoolRows(count: number, pageSize: number) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'argus-spool-'));
  const file = path.join(dir, 'report.json');
  const spool = new ReportSpool(file);
  const rows = Array.from({ length: count }, (_, i) => row(i));
  for (let i = 0; i < rows.length; i += pageSize) await spool.add(rows.slice(i, i + pageSize));
  await spool.finish(report(rows.slice(0, 1000), Math.max(0, count - 1000)));
  return { dir, file, rows, text: readFileSync(file, 'utf8') };
}

describe('the report file', () => {
  it('is indented for people and holds every proposal when small', async () => {
    const { text, rows } = await spoolRows(1200, 100);
    expect(text.split('\n').length).toBeGreaterThan(100);
    const full = JSON.parse(text) as SweepReport;
    expect(full.proposals).toEqual(rows);
    expect(full.proposalsTruncated).toBe(0);
  });

  it('is compact, spooled page by page, and still whole when large; no temporary file is left', async () => {
    const { text, rows, dir } = await spoolRows(12_345, 1000);
    expect(text.split('\n').filter(Boolean)).toHaveLength(1);
    const full = JSON.parse(text) as SweepReport;
    expect(full.proposals).toHaveLength(rows.length);
    expect(full.proposals[12_344]).toEqual(rows[12_344]);
    expect(full.proposalsTruncated).toBe(0);
    expect(full.sweepId).toBe('s');
    expect(readdirSync(dir)).toEqual(['report.json']);
  });

  it('abort removes the spool and writes nothing', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'argus-spool-'));
    const spool = new ReportSpool(path.join(dir, 'report.json'));
    await spool.add(Array.from({ length: 6000 }, (_, i) => row(i)));
    await spool.abort();
    expect(readdirSync(dir)).toEqual([]);
  });
});
