import type { ReportProposal, SweepReport } from '../domain/report';

export const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** Proposal kinds in report order, with the words people read. */
export const KINDS = ['description', 'pii_tag', 'lineage_flag'] as const;
export const KIND_LABEL: Record<(typeof KINDS)[number], string> = {
  description: 'descriptions',
  pii_tag: 'PII tags',
  lineage_flag: 'lineage flags',
};

/** First line of every rendering: a partial run says PARTIAL before anything else. */
/** The before/after rows of the business outcome: description coverage and PII governance. */
export function coverageRows(r: SweepReport): string[][] {
  return [
    [
      'Description coverage (tables and columns)',
      `${pct(r.coverage.descriptionsBefore)} (${r.coverage.describedBefore} of ${r.coverage.describable})`,
      `${pct(r.coverage.descriptionsAfter)} (${r.coverage.describedAfter} of ${r.coverage.describable})`,
    ],
    [
      'PII-looking columns tagged',
      `${r.piiGovernance.taggedBefore} of ${r.piiGovernance.piiLooking}`,
      `${r.piiGovernance.tagged} of ${r.piiGovernance.piiLooking} (${pct(r.piiGovernance.ratio)})`,
    ],
  ];
}

export const RETIRED_HEADER = ['endpoint', 'reason', 'status', 'window', 'resets at', 'provider said', 'retired at'];

/** One row per retired endpoint, with the provider's own words. */
export function retiredRows(r: SweepReport): (string | number | null)[][] {
  return r.endpoints.retired.map((e) => [
    e.endpointId,
    e.reason,
    e.status,
    e.window,
    e.resetAt,
    e.providerMessage,
    e.retiredAt,
  ]);
}

/** Header and rows of a proposals table (the markdown and HTML reports list proposals the same way). */
export function proposalTable(
  ps: ReportProposal[],
  withWritten: boolean,
  max: number,
): { header: string[]; rows: string[][] } {
  return {
    header: ['entity', 'kind', 'change', 'reason', 'reviewer', ...(withWritten ? ['written'] : [])],
    rows: ps
      .slice(0, max)
      .map((p) => [
        p.entityId,
        p.kind,
        changeSummary(p),
        p.reason,
        p.reviewer,
        ...(withWritten ? [p.written ? 'yes' : (p.writeNote ?? 'no')] : []),
      ]),
  };
}

/** Left-aligned plain-text columns, for terminal listings (reviews, schedules). */
export function plainTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function reportHeadline(r: SweepReport): string {
  return `${r.partial ? `PARTIAL SWEEP — ${r.partialReasons.length} reason(s)` : 'COMPLETE SWEEP'}: ${r.sweepId}`;
}

/** One line saying what a proposal would change. */
export function changeSummary(p: Pick<ReportProposal, 'entityId' | 'change'>): string {
  const c = p.change;
  switch (c.kind) {
    case 'description':
      return `describe ${c.target === 'column' ? `${p.entityId}.${c.column ?? '?'}` : p.entityId}: "${c.text}"`;
    case 'pii_tag':
      return `tag ${p.entityId}.${c.column} as ${c.category} (${c.confidence.toFixed(2)})`;
    case 'lineage_flag':
      return c.finding === 'dangling_edge'
        ? `drop dangling upstream ${c.upstream} of ${p.entityId}`
        : `record upstream ${c.upstream} of ${p.entityId} (read by its SQL)`;
  }
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '))
    .join('\n');
}

/** The human-readable report. A partial run says so in its first line. */
export function renderReportText(r: SweepReport, opts: { uiLink?: string } = {}): string {
  const out: string[] = [];
  out.push(reportHeadline(r));
  out.push(
    `Catalog ${r.catalog}, ${r.mode} review${r.dryRun ? ' (dry run: nothing written)' : ''}, ${r.startedAt} → ${r.finishedAt}`,
  );
  if (r.partial) for (const why of r.partialReasons) out.push(`  ! ${why}`);
  out.push('');
  out.push(
    `Entities: ${r.entities.processed} of ${r.entities.requested} processed${r.entities.failed ? `, ${r.entities.failed} failed` : ''}`,
  );
  out.push(
    `Outcomes: ${r.outcomes.approved} approved, ${r.outcomes.rejected} rejected, ${r.outcomes.not_reviewed} not reviewed` +
      (r.partial ? ' (partial totals)' : ''),
  );
  out.push('');
  out.push(
    table([
      ['kind', 'proposed', 'approved', 'rejected', 'not reviewed', 'written'],
      ...KINDS.map((k) => {
        const c = r.byKind[k];
        return [
          k,
          String(c.proposed),
          String(c.approved),
          String(c.rejected),
          String(c.not_reviewed),
          String(c.written),
        ];
      }),
    ]),
  );
  out.push('');
  if (r.written > 0)
    out.push(
      `Written: ${r.written} repairs${r.alreadyApplied ? `; ${r.alreadyApplied} approved repairs were already in the catalog` : ''}.`,
    );
  else if (r.dryRun) out.push('Written: nothing (dry run).');
  else if (r.alreadyApplied > 0 || r.outcomes.approved === 0)
    out.push(
      `Written: nothing new — every approved repair is already in the catalog${r.alreadyApplied ? ` (${r.alreadyApplied} written by earlier sweeps)` : ''}.`,
    );
  else out.push('Written: nothing.');
  if (r.keptHumanText) out.push(`Kept ${r.keptHumanText} human-written texts (not overwritten).`);
  out.push(
    `Description coverage: ${pct(r.coverage.descriptionsBefore)} → ${pct(r.coverage.descriptionsAfter)} ` +
      `(${r.coverage.describedBefore} → ${r.coverage.describedAfter} of ${r.coverage.describable} tables and columns)`,
  );
  out.push(
    `PII governance: ${r.piiGovernance.tagged} of ${r.piiGovernance.piiLooking} PII-looking columns tagged (${pct(r.piiGovernance.ratio)})`,
  );
  if (r.endpoints.retired.length) {
    out.push('');
    out.push(`Retired endpoints${r.endpoints.breakerTripped ? ' (breaker tripped: every endpoint spent)' : ''}:`);
    for (const e of r.endpoints.retired)
      out.push(`  - ${e.endpointId}: ${e.reason}${e.providerMessage ? ` — provider said: ${e.providerMessage}` : ''}`);
  }
  if (r.failures.length) {
    out.push('');
    out.push(`Failures (${r.failures.length + r.failuresTruncated}):`);
    for (const f of r.failures.slice(0, 10))
      out.push(
        `  - ${f.entity} at ${f.stage}: ${f.category}${f.retryable ? ' (retryable)' : ''} — ${f.message.slice(0, 160)}`,
      );
    if (r.failures.length > 10) out.push(`  … ${r.failures.length - 10 + r.failuresTruncated} more in the JSON report`);
  }
  out.push('');
  out.push(`Full report: ${r.reportFile}`);
  if (opts.uiLink) out.push(`Web UI: ${opts.uiLink}`);
  return out.join('\n');
}
