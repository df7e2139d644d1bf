import type { ReportProposal, SweepReport } from '../domain/report';
import {
  reportKinds,
  KIND_LABEL,
  proposalTable,
  coverageRows,
  modelUsageText,
  humanReviewText,
  deferredText,
  incrementalText,
  RETIRED_HEADER,
  retiredRows,
  reportHeadline,
  groupByReason,
  groupSize,
  entityList,
  outcomeCount,
  groupedCountsNote,
  whereTheRestIs,
} from './render';

/** Proposals listed per outcome; the JSON report has them all. */
const MAX_LISTED = 50;
/** Reasons, and entity ids per reason, listed for not-reviewed proposals. */
const MAX_GROUPS = 20;
const MAX_ENTITIES = 20;

/** A path or command as inline code (a backtick inside would end the span, so it is dropped). */
const code = (s: string) => `\`${s.replace(/`/g, '')}\``;

/** A table cell: no pipes or newlines break the row, no HTML gets through to a renderer. */
function cell(v: string | number | boolean | null | undefined): string {
  return String(v ?? '—')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '\\|')
    .replace(/\r?\n/g, ' ');
}

function table(header: string[], rows: (string | number | boolean | null | undefined)[][]): string[] {
  return [
    `| ${header.map(cell).join(' | ')} |`,
    // Numbers right-aligned, text left.
    `| ${header.map((_, i) => (i > 0 && rows.every((r) => /^(\*\*)?\d/.test(String(r[i] ?? ''))) ? '---:' : '---')).join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ];
}

function proposalSection(
  r: SweepReport,
  title: string,
  outcome: ReportProposal['outcome'],
  withWritten: boolean,
): string[] {
  const ps = r.proposals.filter((p) => p.outcome === outcome);
  if (ps.length === 0) return [];
  const out = [`### ${title} (${outcomeCount(r, outcome, ps.length)})`, ''];
  const { header, rows } = proposalTable(ps, withWritten, MAX_LISTED);
  out.push(...table(header, rows));
  if (ps.length > MAX_LISTED) out.push('', `… ${ps.length - MAX_LISTED} more not shown. ${whereTheRestIs(r, code)}`);
  out.push('');
  return out;
}

/** Not-reviewed proposals, one row per distinct reason: the reason once, how many, which entities. */
function notReviewedSection(r: SweepReport): string[] {
  const ps = r.proposals.filter((p) => p.outcome === 'not_reviewed');
  if (ps.length === 0) return [];
  const groups = groupByReason(ps);
  const out = [`### Not reviewed (${outcomeCount(r, 'not_reviewed', ps.length)})`, ''];
  out.push(
    ...table(
      ['proposals', 'reason', 'entities'],
      groups.slice(0, MAX_GROUPS).map((g) => [groupSize(g), g.reason, entityList(g, MAX_ENTITIES)]),
    ),
  );
  const rest = groups.slice(MAX_GROUPS);
  if (rest.length) out.push('', `… ${rest.length} more reasons (${rest.reduce((n, g) => n + g.count, 0)} proposals).`);
  const note = groupedCountsNote(r);
  if (note) out.push('', `_${note}_`);
  if (rest.length || groups.some((g) => g.entities.length > MAX_ENTITIES) || r.proposalsTruncated)
    out.push('', whereTheRestIs(r, code));
  out.push('');
  return out;
}

/**
 * The report as Markdown (for a pull request, a wiki or a ticket). A partial run says PARTIAL in the heading and
 * lists why right below it, before any number.
 */
export function renderReportMarkdown(r: SweepReport, opts: { uiLink?: string } = {}): string {
  const out: string[] = [];
  out.push(`# ${r.partial ? '⚠️ ' : ''}${cell(reportHeadline(r))}`, '');
  if (r.partial) {
    out.push('> **PARTIAL**: this sweep did not do everything it was asked to. Why:', '>');
    for (const why of r.partialReasons) out.push(`> - ${cell(why)}`);
    out.push('');
  }
  for (const note of r.catalogNotes ?? []) out.push(`> Note on the catalog: ${cell(note)}`, '');
  for (const what of r.notRecorded ?? []) out.push(`> Not recorded: ${cell(what)}`, '');
  out.push(
    ...table(
      ['', ''],
      [
        ['Catalog', r.catalog],
        ['Review', `${r.mode}${r.dryRun ? ' (dry run: nothing written)' : ''}`],
        ['Started', r.startedAt],
        ['Finished', r.finishedAt],
        ['Entities', `${r.entities.processed} of ${r.entities.requested} processed, ${r.entities.failed} failed`],
        ['Executions', r.executions],
        ...(opts.uiLink ? [['Web UI', opts.uiLink]] : []),
      ],
    ),
    '',
  );

  out.push('## Outcomes by kind', '');
  const totals = { proposed: 0, approved: 0, rejected: 0, not_reviewed: 0, written: 0 };
  const rows = reportKinds(r).map((k) => {
    const c = r.byKind[k]!;
    for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += c[key];
    return [KIND_LABEL[k], c.proposed, c.approved, c.rejected, c.not_reviewed, c.written];
  });
  out.push(
    ...table(
      ['kind', 'proposed', 'approved', 'rejected', 'not reviewed', 'written'],
      [
        ...rows,
        ['**total**', totals.proposed, totals.approved, totals.rejected, totals.not_reviewed, totals.written].map(
          (v) => (typeof v === 'number' ? `**${v}**` : v),
        ),
      ],
    ),
    '',
  );
  if (r.partial) out.push('_Totals of a partial run: what was not processed is not counted._', '');
  if (r.written > 0)
    out.push(
      `Written: **${r.written}** repairs${r.alreadyApplied ? `; ${r.alreadyApplied} approved repairs were already in the catalog` : ''}.`,
    );
  else if (r.dryRun) out.push('Written: nothing (dry run).');
  else out.push(`Written: nothing new${r.alreadyApplied ? ` (${r.alreadyApplied} already in the catalog)` : ''}.`);
  if (r.keptHumanText) out.push('', `Kept ${r.keptHumanText} human-written texts (not overwritten).`);
  out.push('');

  out.push('## Coverage and PII governance', '');
  out.push(...table(['measure', 'before', 'after'], coverageRows(r)), '');
  out.push(`Model usage: ${modelUsageText(r)}`, '');
  const human = humanReviewText(r);
  if (human) out.push(`Human review: ${human}`, '');
  const deferred = deferredText(r);
  if (deferred) out.push(`Deferred: ${deferred}`, '');
  const incremental = incrementalText(r);
  if (incremental) out.push(`Incremental: ${incremental}`, '');

  const failureCount = r.failures.length + r.failuresTruncated;
  out.push(`## Failures (${failureCount})`, '');
  if (failureCount === 0) out.push('None.', '');
  else {
    out.push(
      ...table(
        ['entity', 'stage', 'category', 'retryable', 'message'],
        r.failures.map((f) => [f.entity, f.stage, f.category, f.retryable ? 'yes' : 'no', f.message.slice(0, 300)]),
      ),
      '',
    );
    if (r.failuresTruncated) out.push(`… ${r.failuresTruncated} more failures not listed.`, '');
  }

  out.push(`## Retired endpoints (${r.endpoints.retired.length})`, '');
  if (r.endpoints.retired.length === 0) out.push('None.', '');
  else {
    if (r.endpoints.breakerTripped)
      out.push('**Breaker tripped**: every endpoint was spent, so no further model call was made.', '');
    out.push(...table(RETIRED_HEADER, retiredRows(r)), '');
  }

  out.push('## Proposals', '');
  out.push(...proposalSection(r, 'Rejected', 'rejected', false));
  out.push(...notReviewedSection(r));
  out.push(...proposalSection(r, 'Approved', 'approved', true));
  if (r.proposals.length === 0) out.push('None.', '');
  if (r.proposalsTruncated)
    out.push(`${r.proposalsTruncated} more proposals are not listed in this report. ${whereTheRestIs(r, code)}`, '');
  out.push(`Full JSON report: ${code(r.reportFile)}`, '');
  return out.join('\n');
}
