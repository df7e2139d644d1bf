import type { ReportProposal, SweepReport } from '../domain/report';
import { PROPOSAL_KINDS, type ProposalKind } from '../domain/proposal';

export const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** Proposal kinds in report order, with the words people read. */
export const KINDS = PROPOSAL_KINDS;
export const KIND_LABEL: Record<ProposalKind, string> = {
  description: 'descriptions',
  pii_tag: 'PII tags',
  lineage_flag: 'lineage flags',
  description_removal: 'description removals',
};

/** The kinds a report counts, in report order: one from before a kind existed has no row for it. */
export function reportKinds(r: Pick<SweepReport, 'byKind'>): ProposalKind[] {
  return KINDS.filter((k) => r.byKind[k] !== undefined);
}

/** The before/after rows of the business outcome: description coverage and PII governance. */
export function coverageRows(r: SweepReport): string[][] {
  return [
    [
      'Description coverage (tables and columns)',
      `${pct(r.coverage.descriptionsBefore)} (${r.coverage.describedBefore} of ${r.coverage.describable})`,
      `${pct(r.coverage.descriptionsAfter)} (${r.coverage.describedAfter} of ${r.coverage.describable})`,
    ],
    ['Informative descriptions by source (after)', '', sourcesText(r)],
    [
      'PII-looking columns tagged',
      `${r.piiGovernance.taggedBefore} of ${r.piiGovernance.piiLooking}`,
      `${r.piiGovernance.tagged} of ${r.piiGovernance.piiLooking} (${pct(r.piiGovernance.ratio)})`,
    ],
  ];
}

/**
 * Where the counted descriptions came from, and what was not counted: "human 17, inherited 7, derived 57,
 * model 0; 3 restatements not counted". Reports from before the sources were kept say so.
 */
export function sourcesText(r: SweepReport): string {
  const s = r.coverage.sources;
  if (s === undefined) return 'not recorded by this report version';
  const left = r.coverage.restatementsNotCounted ?? 0;
  return (
    `human ${s.human}, inherited ${s.inherited}, derived ${s.derived}, model ${s.model}` +
    (left > 0 ? `; ${left} ${left === 1 ? 'restatement' : 'restatements'} of the schema not counted` : '')
  );
}

const n = (x: number) => x.toLocaleString('en-US');

/**
 * The sweep's model calls and tokens in one line (estimates marked), or why there are none. Reports from
 * before token accounting say so.
 */
export function modelUsageText(r: SweepReport): string {
  const u = r.modelUsage;
  if (u === undefined) return 'not recorded by this report version';
  const kept = u.remembered
    ? `${n(u.remembered)} answers remembered from earlier requests (not sent again)`
    : undefined;
  if (u.calls === 0) return kept ? `no model calls; ${kept}` : 'no model calls';
  const group = (name: string, t: { calls: number; promptTokens: number; completionTokens: number }) =>
    `${name} ${n(t.calls)} calls, ${n(t.promptTokens)} + ${n(t.completionTokens)}`;
  const agents = Object.entries(u.byAgent).map(([a, t]) => group(a, t));
  const endpoints = Object.entries(u.byEndpoint).map(([e, t]) => group(`on ${e}`, t));
  return (
    `${n(u.calls)} calls, ${n(u.promptTokens)} prompt + ${n(u.completionTokens)} completion tokens ` +
    `(per entity: ${u.perEntity.calls} calls, ${u.perEntity.promptTokens} + ${u.perEntity.completionTokens} tokens)` +
    (u.estimatedCalls > 0 ? `, ${n(u.estimatedCalls)} calls estimated (no usage from the provider)` : '') +
    (kept ? `, ${kept}` : '') +
    `; ${[...agents, ...endpoints].join('; ')}`
  );
}

/** The human review in one line: how many waited, what people decided, how long the sweep waited (or nothing). */
export function humanReviewText(r: SweepReport): string | undefined {
  const h = r.humanReview;
  if (!h) return undefined;
  const mins = h.waitedMs < 60_000 ? `${Math.round(h.waitedMs / 1000)} s` : `${Math.round(h.waitedMs / 60_000)} min`;
  return (
    `${n(h.waited)} proposals waited for people: ${n(h.approved)} approved, ${n(h.rejected)} rejected, ` +
    `${n(h.expired)} expired unreviewed; the sweep waited ${mins} after its automated work` +
    (h.deadline ? ` (deadline ${h.deadline})` : '') +
    (h.notParked > 0 ? `; ${n(h.notParked)} more were not parked (review queue full) and stay not reviewed` : '')
  );
}

/** What the memory of earlier sweeps changed about this one, in one line (or nothing). */
export function incrementalText(r: SweepReport): string | undefined {
  const i = r.incremental;
  if (!i) return undefined;
  return (
    `${n(i.new)} new, ${n(i.changed)} changed, ${n(i.unchanged)} unchanged, ${n(i.gone)} gone since the last sweep; ` +
    `${n(i.carriedOver)} carried over (decided before, not judged again), ${n(i.judged)} judged` +
    (i.incremental ? '' : ' (a full sweep)') +
    (i.rounds > 1
      ? `; ${n(i.rejudged)} judged again in ${i.rounds - 1} later pass(es) after this sweep's writes` +
        (i.crossPageRejudged ? ` (${n(i.crossPageRejudged)} for another entity's repaired lineage)` : '')
      : '') +
    (i.unsettled > 0 ? `; ${n(i.unsettled)} changed by the last pass's writes are left for the next sweep` : '') +
    (i.failSafe ? `; FAIL-SAFE: ${i.failSafe}` : '') +
    (i.note ? ` (${i.note})` : '')
  );
}

/** What a budget-fitted sweep left for the next one, in one line (or nothing). */
export function deferredText(r: SweepReport): string | undefined {
  const d = r.deferred;
  if (!d) return undefined;
  return (
    `${n(d.count)} entities deferred to the next sweep to fit the model budget (not reviewed, not counted); ` +
    `first: ${d.first.slice(0, 5).join(', ')}${d.count > 5 ? ', …' : ''}. Plan: ${d.plan}`
  );
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

/** Not-reviewed proposals that share one reason: the reason once, how many, and which entities. */
export interface ReasonGroup {
  reason: string;
  /** Proposals with this reason, among the proposals listed in the report. */
  count: number;
  /** Distinct entity ids, in the order the proposals list them. */
  entities: string[];
  byKind: Partial<Record<ReportProposal['kind'], number>>;
}

/**
 * Groups proposals by their reason, most frequent first (ties keep first appearance). The key is the reason
 * exactly as written: stripping per-proposal detail (request ids, timestamps) could merge reasons that differ.
 */
export function groupByReason(ps: ReportProposal[]): ReasonGroup[] {
  const groups = new Map<string, { g: ReasonGroup; seen: Set<string> }>();
  for (const p of ps) {
    let entry = groups.get(p.reason);
    if (!entry) {
      entry = { g: { reason: p.reason, count: 0, entities: [], byKind: {} }, seen: new Set() };
      groups.set(p.reason, entry);
    }
    entry.g.count++;
    entry.g.byKind[p.kind] = (entry.g.byKind[p.kind] ?? 0) + 1;
    if (!entry.seen.has(p.entityId)) {
      entry.seen.add(p.entityId);
      entry.g.entities.push(p.entityId);
    }
  }
  return [...groups.values()].map((e) => e.g).sort((a, b) => b.count - a.count);
}

/** "a, b, c and 17 more": the first `max` entity ids of a group. */
export function entityList(g: ReasonGroup, max: number): string {
  const shown = g.entities.slice(0, max).join(', ');
  const more = g.entities.length - max;
  return more > 0 ? `${shown} and ${more} more` : shown;
}

/** "3 proposals on 2 entities (descriptions 2, PII tags 1)". */
export function groupSize(g: ReasonGroup): string {
  const kinds = KINDS.filter((k) => g.byKind[k])
    .map((k) => `${KIND_LABEL[k]} ${g.byKind[k]}`)
    .join(', ');
  return `${g.count} proposal${g.count === 1 ? '' : 's'} on ${g.entities.length} entit${g.entities.length === 1 ? 'y' : 'ies'} (${kinds})`;
}

/**
 * How many proposals of one outcome, said honestly: the listed count when the report lists every proposal, else
 * "N of M listed" with M from the whole-sweep outcome counts.
 */
export function outcomeCount(r: SweepReport, outcome: ReportProposal['outcome'], listed: number): string {
  return r.proposalsTruncated ? `${listed} listed of ${r.outcomes[outcome]} in the sweep` : String(listed);
}

/** The note under grouped counts of a truncated report: they are of the listed proposals, not of the sweep. */
export function groupedCountsNote(r: SweepReport): string | undefined {
  if (!r.proposalsTruncated) return undefined;
  return (
    `These counts are of the first ${r.proposals.length} proposals, the ones this report lists; ` +
    `${r.proposalsTruncated} more are not listed. The whole sweep left ${r.outcomes.not_reviewed} not reviewed.`
  );
}

/** The command that prints this sweep's JSON report, quoted for a shell if the id needs it. */
export function jsonReportCommand(r: SweepReport): string {
  const id = /^[\w./:@+=-]+$/.test(r.sweepId) ? r.sweepId : `'${r.sweepId.replace(/'/g, `'\\''`)}'`;
  return `argus report ${id} --format json`;
}

/**
 * Where the rest of a cut listing is, concretely: the report file (every proposal) and the command (the same
 * proposals as this report). `code` formats a path or a command for the output format, escaping included.
 */
export function whereTheRestIs(r: SweepReport, code: (s: string) => string): string {
  const file = code(r.reportFile);
  const cmd = code(jsonReportCommand(r));
  return r.proposalsTruncated
    ? `Every proposal (${r.proposals.length + r.proposalsTruncated}) is in the report file ${file}; ${cmd} prints the first ${r.proposals.length}.`
    : `Every proposal is in the report file ${file}, and ${cmd} prints them all.`;
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

/** First line of every rendering: a partial run says PARTIAL before anything else. */
export function reportHeadline(r: SweepReport): string {
  return `${r.partial ? `PARTIAL SWEEP — ${r.partialReasons.length} reason(s)` : 'COMPLETE SWEEP'}: ${r.sweepId}`;
}

/** One line saying what a proposal would change. */
export function changeSummary(p: Pick<ReportProposal, 'entityId' | 'change'>): string {
  const c = p.change;
  switch (c.kind) {
    case 'description':
      return `describe ${c.target === 'column' ? `${p.entityId}.${c.column ?? '?'}` : p.entityId}: "${c.text}"`;
    case 'description_removal':
      return `remove ARGUS's description of ${c.target === 'column' ? `${p.entityId}.${c.column ?? '?'}` : p.entityId} (its origin's text is gone): "${c.text}"`;
    case 'pii_tag':
      return `tag ${p.entityId}.${c.column} as ${c.category} (${c.confidence.toFixed(2)})`;
    case 'lineage_flag':
      return c.finding === 'dangling_edge'
        ? `drop dangling upstream ${c.upstream} of ${p.entityId}`
        : `record upstream ${c.upstream} of ${p.entityId} (read by its SQL)`;
  }
}

/** Reasons and entity ids listed per not-reviewed group in the text report. */
const TEXT_MAX_GROUPS = 10;
const TEXT_MAX_ENTITIES = 10;

/** Not-reviewed proposals of the text report, one block per reason. */
function notReviewedText(r: SweepReport): string[] {
  const ps = r.proposals.filter((p) => p.outcome === 'not_reviewed');
  if (ps.length === 0) return [];
  const groups = groupByReason(ps);
  const out = ['', `Not reviewed (${outcomeCount(r, 'not_reviewed', ps.length)}), by reason:`];
  let cut = false;
  for (const g of groups.slice(0, TEXT_MAX_GROUPS)) {
    out.push(`  - ${groupSize(g)}:`, `      ${g.reason.replace(/\s*\n\s*/g, ' ')}`);
    out.push(`      entities: ${entityList(g, TEXT_MAX_ENTITIES)}`);
    if (g.entities.length > TEXT_MAX_ENTITIES) cut = true;
  }
  const rest = groups.slice(TEXT_MAX_GROUPS);
  if (rest.length) {
    cut = true;
    out.push(`  … ${rest.length} more reasons (${rest.reduce((n, g) => n + g.count, 0)} proposals)`);
  }
  const note = groupedCountsNote(r);
  if (note) out.push(`  ${note}`);
  if (cut || r.proposalsTruncated) out.push(`  ${whereTheRestIs(r, (s) => `\`${s}\``)}`);
  return out;
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
  // Caveats about the catalog as read (a stale dbt catalog.json): not partial, but what a reader should know.
  for (const note of r.catalogNotes ?? []) out.push(`  note: ${note}`);
  for (const what of r.notRecorded ?? []) out.push(`  not recorded: ${what}`);
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
      ...reportKinds(r).map((k) => {
        const c = r.byKind[k]!;
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
      `(${r.coverage.describedBefore} → ${r.coverage.describedAfter} of ${r.coverage.describable} tables and columns ` +
      `with a description that says more than the schema; ${sourcesText(r)})`,
  );
  out.push(
    `PII governance: ${r.piiGovernance.tagged} of ${r.piiGovernance.piiLooking} PII-looking columns tagged (${pct(r.piiGovernance.ratio)})`,
  );
  out.push(`Model usage: ${modelUsageText(r)}`);
  const human = humanReviewText(r);
  if (human) out.push(`Human review: ${human}`);
  const deferred = deferredText(r);
  if (deferred) out.push(`Deferred: ${deferred}`);
  const incremental = incrementalText(r);
  if (incremental) out.push(`Incremental: ${incremental}`);
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
    if (r.failures.length > 10)
      out.push(
        `  … ${r.failures.length - 10} more in the report file ${r.reportFile} (or run \`${jsonReportCommand(r)}\`)`,
      );
    if (r.failuresTruncated) out.push(`  … ${r.failuresTruncated} more not recorded in the report`);
  }
  out.push(...notReviewedText(r));
  out.push('');
  out.push(`Full report: ${r.reportFile}`);
  if (opts.uiLink) out.push(`Web UI: ${opts.uiLink}`);
  return out.join('\n');
}
