import type { ReportProposal, SweepReport } from '../domain/report';
import { TableReading } from '../domain/proposal';
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
  pct,
  reportHeadline,
  groupByReason,
  groupSize,
  entityList,
  outcomeCount,
  groupedCountsNote,
  whereTheRestIs,
} from './render';

/** Proposals listed per outcome; the JSON report has them all. */
const MAX_LISTED = 200;
/** Reasons, and entity ids per reason, listed for not-reviewed proposals. */
const MAX_GROUPS = 30;
const MAX_ENTITIES = 30;

const COLOURS = {
  approved: '#2e7d32',
  rejected: '#c62828',
  not_reviewed: '#9e9e9e',
  before: '#90a4ae',
  after: '#1565c0',
};

function esc(v: string | number | boolean | null | undefined): string {
  return String(v ?? '—')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function table(header: string[], rows: (string | number | boolean | null | undefined)[][], cls = ''): string {
  return (
    `<table${cls ? ` class="${cls}"` : ''}><thead><tr>${header.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>` +
    rows
      .map(
        (r) =>
          `<tr>${r.map((c) => (typeof c === 'number' ? `<td class="n">${c}</td>` : `<td>${esc(c)}</td>`)).join('')}</tr>`,
      )
      .join('') +
    '</tbody></table>'
  );
}

function keyValues(rows: [string, string | number][]): string {
  return `<table class="kv"><tbody>${rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`).join('')}</tbody></table>`;
}

/** Stacked bars of approved / rejected / not reviewed per kind, with the counts written beside them. */
function outcomesChart(r: SweepReport): string {
  const rowH = 34;
  const labelW = 120;
  const barW = 360;
  const kinds = reportKinds(r);
  const h = kinds.length * rowH + 40;
  const max = Math.max(
    1,
    ...kinds.map((k) => r.byKind[k]!.approved + r.byKind[k]!.rejected + r.byKind[k]!.not_reviewed),
  );
  const parts: string[] = [];
  kinds.forEach((k, i) => {
    const c = r.byKind[k]!;
    const y = 10 + i * rowH;
    parts.push(`<text x="0" y="${y + 17}" class="lbl">${esc(KIND_LABEL[k])}</text>`);
    let x = labelW;
    for (const [key, n] of [
      ['approved', c.approved],
      ['rejected', c.rejected],
      ['not_reviewed', c.not_reviewed],
    ] as const) {
      const w = (n / max) * barW;
      if (w > 0)
        parts.push(
          `<rect x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="24" fill="${COLOURS[key]}"><title>${esc(
            `${KIND_LABEL[k]}: ${n} ${key.replace('_', ' ')}`,
          )}</title></rect>`,
        );
      x += w;
    }
    parts.push(
      `<text x="${(x + 6).toFixed(1)}" y="${y + 17}" class="num">${c.approved} / ${c.rejected} / ${c.not_reviewed}</text>`,
    );
  });
  const ly = h - 12;
  parts.push(
    `<rect x="${labelW}" y="${ly - 10}" width="10" height="10" fill="${COLOURS.approved}"/><text x="${labelW + 14}" y="${ly}" class="lgd">approved</text>`,
    `<rect x="${labelW + 90}" y="${ly - 10}" width="10" height="10" fill="${COLOURS.rejected}"/><text x="${labelW + 104}" y="${ly}" class="lgd">rejected</text>`,
    `<rect x="${labelW + 175}" y="${ly - 10}" width="10" height="10" fill="${COLOURS.not_reviewed}"/><text x="${labelW + 189}" y="${ly}" class="lgd">not reviewed</text>`,
  );
  return `<svg role="img" aria-label="Outcomes per kind" viewBox="0 0 ${labelW + barW + 120} ${h}" width="${labelW + barW + 120}" height="${h}">${parts.join('')}</svg>`;
}

/** Before/after bars for description coverage and PII governance, as percentages. */
function coverageChart(r: SweepReport): string {
  const piiBefore = r.piiGovernance.piiLooking ? r.piiGovernance.taggedBefore / r.piiGovernance.piiLooking : 0;
  const rows: [string, number, number][] = [
    ['descriptions', r.coverage.descriptionsBefore, r.coverage.descriptionsAfter],
    ['PII tagged', piiBefore, r.piiGovernance.ratio],
  ];
  const labelW = 120;
  const barW = 360;
  const rowH = 52;
  const h = rows.length * rowH + 30;
  const parts: string[] = [];
  rows.forEach(([label, before, after], i) => {
    const y = 8 + i * rowH;
    parts.push(`<text x="0" y="${y + 26}" class="lbl">${esc(label)}</text>`);
    for (const [j, v, colour, name] of [
      [0, before, COLOURS.before, 'before'],
      [1, after, COLOURS.after, 'after'],
    ] as const) {
      const by = y + j * 22;
      const clamped = Math.max(0, Math.min(1, v));
      parts.push(
        `<rect x="${labelW}" y="${by}" width="${barW}" height="18" fill="#eceff1"/>`,
        `<rect x="${labelW}" y="${by}" width="${(clamped * barW).toFixed(1)}" height="18" fill="${colour}"><title>${esc(`${label} ${name}: ${pct(v)}`)}</title></rect>`,
        `<text x="${labelW + barW + 6}" y="${by + 14}" class="num">${esc(`${name} ${pct(v)}`)}</text>`,
      );
    }
  });
  const ly = h - 8;
  parts.push(
    `<rect x="${labelW}" y="${ly - 10}" width="10" height="10" fill="${COLOURS.before}"/><text x="${labelW + 14}" y="${ly}" class="lgd">before</text>`,
    `<rect x="${labelW + 80}" y="${ly - 10}" width="10" height="10" fill="${COLOURS.after}"/><text x="${labelW + 94}" y="${ly}" class="lgd">after</text>`,
  );
  return `<svg role="img" aria-label="Coverage before and after" viewBox="0 0 ${labelW + barW + 120} ${h}" width="${labelW + barW + 120}" height="${h}">${parts.join('')}</svg>`;
}

const code = (s: string) => `<code>${esc(s)}</code>`;

function proposalSection(
  r: SweepReport,
  title: string,
  outcome: ReportProposal['outcome'],
  withWritten: boolean,
): string {
  const ps = r.proposals.filter((p) => p.outcome === outcome);
  if (ps.length === 0) return '';
  const { header, rows } = proposalTable(ps, withWritten, MAX_LISTED);
  return (
    `<details${title === 'Approved' ? '' : ' open'}><summary>${esc(title)} (${esc(outcomeCount(r, outcome, ps.length))})</summary>` +
    table(header, rows, 'proposals') +
    (ps.length > MAX_LISTED ? `<p>… ${ps.length - MAX_LISTED} more not shown. ${whereTheRestIs(r, code)}</p>` : '') +
    '</details>'
  );
}

/** The readings in the order a steward meets them: people first, then the classes that are rarely personal. */
const READING_ORDER = [...TableReading.options, 'not stated'] as const;
type ReadingGroup = (typeof READING_ORDER)[number];

/**
 * PII tags grouped by the table reading their proposer used (person, organisation, machine, event, thing), so a
 * steward can weigh a whole class at once: a company's phones, a server's secrets. Tags of a model say no reading.
 */
function piiByReadingSection(r: SweepReport): string {
  const tags = r.proposals.filter((p) => p.change.kind === 'pii_tag');
  if (tags.length === 0) return '';
  const groups = new Map<ReadingGroup, ReportProposal[]>();
  for (const p of tags) {
    const reading: ReadingGroup = p.change.kind === 'pii_tag' ? (p.change.reading ?? 'not stated') : 'not stated';
    groups.set(reading, [...(groups.get(reading) ?? []), p]);
  }
  const parts = READING_ORDER.filter((g) => groups.has(g)).map((g) => {
    const ps = groups.get(g) ?? [];
    const count = (o: ReportProposal['outcome']) => ps.filter((p) => p.outcome === o).length;
    const rows = ps.slice(0, MAX_LISTED).map((p) => {
      const c = p.change.kind === 'pii_tag' ? p.change : undefined;
      return [
        `${p.entityId}.${c?.column ?? '?'}`,
        c?.category ?? '',
        p.outcome.replace('_', ' '),
        c?.explanation ?? '',
      ];
    });
    return (
      `<details class="reading" data-reading="${esc(g)}"><summary>${esc(
        `${g === 'not stated' ? 'reading not stated' : `${g} rows`} — ${ps.length} tag${ps.length === 1 ? '' : 's'}: ${count('approved')} approved, ${count('rejected')} rejected, ${count('not_reviewed')} not reviewed`,
      )}</summary>` +
      table(['column', 'category', 'outcome', 'explanation'], rows, 'proposals') +
      (ps.length > MAX_LISTED ? `<p>… ${ps.length - MAX_LISTED} more not shown.</p>` : '') +
      '</details>'
    );
  });
  return `<h2>PII tags by table reading</h2>${parts.join('')}`;
}

/** Not-reviewed proposals, one row per distinct reason: the reason once, how many, which entities. */
function notReviewedSection(r: SweepReport): string {
  const ps = r.proposals.filter((p) => p.outcome === 'not_reviewed');
  if (ps.length === 0) return '';
  const groups = groupByReason(ps);
  const rest = groups.slice(MAX_GROUPS);
  const note = groupedCountsNote(r);
  const cut = rest.length > 0 || groups.some((g) => g.entities.length > MAX_ENTITIES) || r.proposalsTruncated > 0;
  return (
    `<details open><summary>Not reviewed (${esc(outcomeCount(r, 'not_reviewed', ps.length))}), by reason</summary>` +
    table(
      ['proposals', 'reason', 'entities'],
      groups.slice(0, MAX_GROUPS).map((g) => [groupSize(g), g.reason, entityList(g, MAX_ENTITIES)]),
      'proposals groups',
    ) +
    (rest.length ? `<p>… ${rest.length} more reasons (${rest.reduce((n, g) => n + g.count, 0)} proposals).</p>` : '') +
    (note ? `<p><em>${esc(note)}</em></p>` : '') +
    (cut ? `<p>${whereTheRestIs(r, code)}</p>` : '') +
    '</details>'
  );
}

const CSS = `
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#212121;background:#fafafa}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 12px}h2{font-size:18px;margin:28px 0 8px}
.banner{padding:14px 18px;border-radius:6px;margin:0 0 18px}
.banner.partial{background:#fff3e0;border:2px solid #e65100;color:#bf360c}
.banner.complete{background:#e8f5e9;border:1px solid #2e7d32;color:#1b5e20}
.banner ul{margin:6px 0 0 18px;padding:0}
.notes{padding:10px 18px;margin:0 0 18px;border-left:4px solid #1565c0;background:#e3f2fd}
table{border-collapse:collapse;margin:6px 0 12px;background:#fff}
th,td{border:1px solid #e0e0e0;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.n{text-align:right}
table.proposals td{font-size:13px}
table.groups td:first-child{min-width:12em}table.groups td:nth-child(n+2){overflow-wrap:anywhere}
.charts{display:flex;flex-wrap:wrap;gap:24px}
.chart{background:#fff;border:1px solid #e0e0e0;border-radius:6px;padding:12px}
svg text{font:13px system-ui,sans-serif;fill:#212121}svg text.num{fill:#424242}svg text.lgd{font-size:12px}
code{background:#eceff1;padding:1px 4px;border-radius:3px}
details{margin:8px 0}summary{cursor:pointer;font-weight:600}
`;

/**
 * The report as ONE self-contained HTML page: inline CSS and inline SVG charts, no scripts, no external asset or
 * link. A partial run opens with a PARTIAL banner listing why.
 */
export function renderReportHtml(r: SweepReport, opts: { uiLink?: string } = {}): string {
  const head = reportHeadline(r);
  const banner = r.partial
    ? `<div class="banner partial" role="alert"><strong>PARTIAL</strong>: this sweep did not do everything it was asked to.<ul>${r.partialReasons
        .map((w) => `<li>${esc(w)}</li>`)
        .join('')}</ul></div>`
    : '<div class="banner complete"><strong>Complete</strong>: every requested entity was processed and reviewed.</div>';
  // Caveats about the catalog as read (a stale dbt catalog.json): not partial, but what a reader should know.
  const notes = r.catalogNotes?.length
    ? `<div class="notes"><strong>Note on the catalog</strong><ul>${r.catalogNotes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul></div>`
    : '';
  const unrecorded = r.notRecorded?.length
    ? `<div class="notes"><strong>Not recorded</strong><ul>${r.notRecorded.map((n) => `<li>${esc(n)}</li>`).join('')}</ul></div>`
    : '';
  const totals = reportKinds(r).reduce(
    (t, k) => {
      const c = r.byKind[k]!;
      return [t[0]! + c.proposed, t[1]! + c.approved, t[2]! + c.rejected, t[3]! + c.not_reviewed, t[4]! + c.written];
    },
    [0, 0, 0, 0, 0],
  );
  const failureCount = r.failures.length + r.failuresTruncated;
  const body = [
    `<h1>${esc(head)}</h1>`,
    banner,
    notes,
    unrecorded,
    keyValues([
      ['Catalog', r.catalog],
      ['Review', `${r.mode}${r.dryRun ? ' (dry run: nothing written)' : ''}`],
      ['Started', r.startedAt],
      ['Finished', r.finishedAt],
      ['Entities', `${r.entities.processed} of ${r.entities.requested} processed, ${r.entities.failed} failed`],
      ['Written', r.dryRun ? 'nothing (dry run)' : `${r.written} repairs (${r.alreadyApplied} already in the catalog)`],
      ...(opts.uiLink ? [['Web UI', opts.uiLink] as [string, string]] : []),
    ]),
    '<h2>Outcomes by kind</h2>',
    table(
      ['kind', 'proposed', 'approved', 'rejected', 'not reviewed', 'written'],
      [
        ...reportKinds(r).map((k) => {
          const c = r.byKind[k]!;
          return [KIND_LABEL[k], c.proposed, c.approved, c.rejected, c.not_reviewed, c.written];
        }),
        ['total', ...totals],
      ],
    ),
    r.partial ? '<p><em>Totals of a partial run: what was not processed is not counted.</em></p>' : '',
    '<h2>Coverage and PII governance</h2>',
    table(['measure', 'before', 'after'], coverageRows(r)),
    `<p>Model usage: ${esc(modelUsageText(r))}</p>`,
    ...(humanReviewText(r) ? [`<p>Human review: ${esc(humanReviewText(r)!)}</p>`] : []),
    ...(deferredText(r) ? [`<p>Deferred: ${esc(deferredText(r)!)}</p>`] : []),
    ...(incrementalText(r) ? [`<p>Incremental: ${esc(incrementalText(r)!)}</p>`] : []),
    `<div class="charts"><div class="chart"><strong>Outcomes per kind</strong> (approved / rejected / not reviewed)<br>${outcomesChart(
      r,
    )}</div><div class="chart"><strong>Coverage before → after</strong><br>${coverageChart(r)}</div></div>`,
    `<h2>Failures (${failureCount})</h2>`,
    failureCount === 0
      ? '<p>None.</p>'
      : table(
          ['entity', 'stage', 'category', 'retryable', 'message'],
          r.failures.map((f) => [f.entity, f.stage, f.category, f.retryable ? 'yes' : 'no', f.message.slice(0, 500)]),
        ) + (r.failuresTruncated ? `<p>… ${r.failuresTruncated} more failures not listed.</p>` : ''),
    `<h2>Retired endpoints (${r.endpoints.retired.length})</h2>`,
    r.endpoints.retired.length === 0
      ? '<p>None.</p>'
      : (r.endpoints.breakerTripped
          ? '<p><strong>Breaker tripped</strong>: every endpoint was spent, so no further model call was made.</p>'
          : '') + table(RETIRED_HEADER, retiredRows(r)),
    piiByReadingSection(r),
    '<h2>Proposals</h2>',
    r.proposals.length === 0 ? '<p>None.</p>' : '',
    proposalSection(r, 'Rejected', 'rejected', false),
    notReviewedSection(r),
    proposalSection(r, 'Approved', 'approved', true),
    r.proposalsTruncated
      ? `<p>${r.proposalsTruncated} more proposals are not listed in this report. ${whereTheRestIs(r, code)}</p>`
      : '',
    `<p>Full JSON report: ${code(r.reportFile)}</p>`,
  ].join('\n');
  return (
    '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${esc(head)}</title><style>${CSS}</style></head>\n<body><main>\n${body}\n</main></body></html>\n`
  );
}
