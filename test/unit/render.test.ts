import type { ReportProposal, SweepReport } from '../../domain/report';
import { changeSummary, renderReportText } from '../../client/render';
import { renderReportMarkdown } from '../../client/render-markdown';
import { renderReportHtml } from '../../client/render-html';
import { progressLine } from '../../client/progress';

function proposal(over: Partial<ReportProposal> & Pick<ReportProposal, 'id' | 'change' | 'outcome'>): ReportProposal {
  return {
    entityId: 'raw.customers',
    agent: 'pii-classifier',
    kind: over.change.kind,
    reason: 'grounded in the schema',
    reviewer: 'mechanical-gate',
    written: over.outcome === 'approved',
    ...over,
  };
}

const proposals: ReportProposal[] = [
  proposal({
    id: 'p-email',
    change: { kind: 'pii_tag', column: 'email', category: 'email', confidence: 0.95, explanation: 'name says email' },
    outcome: 'approved',
  }),
  proposal({
    id: 'p-region',
    change: { kind: 'pii_tag', column: 'region_name', category: 'address', confidence: 0.41, explanation: 'weak' },
    outcome: 'rejected',
    reason: 'a region is not personal data',
  }),
  proposal({
    id: 'p-desc',
    agent: 'description-drafter',
    change: { kind: 'description', target: 'table', text: 'Orders <script>alert(1)</script> | placed by customers' },
    outcome: 'not_reviewed',
    reason: 'endpoint spent before review',
    reviewer: 'none',
  }),
  proposal({
    id: 'p-lineage',
    entityId: 'mart.daily_sales',
    agent: 'lineage-checker',
    change: { kind: 'lineage_flag', finding: 'dangling_edge', upstream: 'raw.old_orders' },
    outcome: 'approved',
  }),
];

function report(over: Partial<SweepReport> = {}): SweepReport {
  return {
    reportVersion: 1,
    sweepId: 'sweep/shop/2026-01-02T03-04-05-678Z',
    catalog: 'shop',
    mode: 'model',
    dryRun: false,
    startedAt: '2026-01-02T03:04:05.678Z',
    finishedAt: '2026-01-02T03:05:00.000Z',
    partial: false,
    partialReasons: [],
    entities: { requested: 69, processed: 69, failed: 0 },
    outcomes: { approved: 17, rejected: 6, not_reviewed: 0 },
    byKind: {
      description: { proposed: 11, approved: 9, rejected: 2, not_reviewed: 0, written: 8 },
      pii_tag: { proposed: 7, approved: 5, rejected: 2, not_reviewed: 0, written: 4 },
      lineage_flag: { proposed: 5, approved: 3, rejected: 2, not_reviewed: 0, written: 3 },
    },
    written: 15,
    alreadyApplied: 2,
    keptHumanText: 1,
    coverage: {
      descriptionsBefore: 0.42,
      descriptionsAfter: 0.8,
      describedBefore: 21,
      describedAfter: 40,
      describable: 50,
    },
    piiGovernance: { tagged: 12, piiLooking: 13, ratio: 12 / 13, taggedBefore: 3 },
    failures: [],
    failuresTruncated: 0,
    endpoints: { retired: [], breakerTripped: false },
    proposals,
    proposalsTruncated: 0,
    reportFile: '/state/reports/shop.json',
    executions: 1,
    ...over,
  };
}

const partial = report({
  partial: true,
  partialReasons: ['1 of 69 entities failed', '4 proposals were not reviewed'],
  entities: { requested: 69, processed: 68, failed: 1 },
  outcomes: { approved: 17, rejected: 6, not_reviewed: 4 },
  byKind: {
    description: { proposed: 13, approved: 9, rejected: 2, not_reviewed: 2, written: 8 },
    pii_tag: { proposed: 8, approved: 5, rejected: 2, not_reviewed: 1, written: 4 },
    lineage_flag: { proposed: 6, approved: 3, rejected: 2, not_reviewed: 1, written: 3 },
  },
  failures: [
    {
      entity: 'raw.broken_entity',
      stage: 'load',
      category: 'invalid_entity',
      retryable: false,
      message: 'columns: at least one column',
    },
  ],
  endpoints: {
    retired: [
      {
        endpointId: 'primary-gpt',
        reason: 'daily quota spent',
        window: 'tokens-per-day',
        status: 429,
        resetAt: '2026-01-02T04:35:48.000Z',
        providerMessage: 'Rate limit reached for tokens per day',
        body: '{}',
        requestId: 'req_1',
        retiredAt: '2026-01-02T03:04:30.000Z',
      },
    ],
    breakerTripped: false,
  },
});

const complete = report();

const renderers = {
  text: (r: SweepReport) => renderReportText(r),
  markdown: (r: SweepReport) => renderReportMarkdown(r),
  html: (r: SweepReport) => renderReportHtml(r),
};

/** The first thing a reader sees: the first line of text/markdown, the <h1> and first block of the HTML body. */
function top(format: keyof typeof renderers, text: string): string {
  if (format !== 'html') return text.split('\n')[0]!;
  const body = text.slice(text.indexOf('<body>'));
  return body.slice(0, body.indexOf('</div>'));
}

describe.each(Object.keys(renderers) as (keyof typeof renderers)[])('%s report', (format) => {
  const render = renderers[format];

  test('a partial sweep says PARTIAL at the top, with its reasons', () => {
    const out = render(partial);
    expect(top(format, out)).toContain('PARTIAL');
    for (const why of partial.partialReasons) expect(out).toContain(why);
  });

  test('a complete sweep never says PARTIAL', () => {
    const out = render(complete);
    expect(out).not.toContain('PARTIAL');
    expect(out).not.toMatch(/partial (totals|run)/i);
    expect(top(format, out)).toMatch(/complete/i);
  });

  test('the numbers of the report appear', () => {
    const out = render(partial);
    expect(out).toContain(partial.sweepId);
    expect(out).toContain('42.0 %');
    expect(out).toContain('80.0 %');
    expect(out).toContain('68 of 69');
    expect(out).toContain('raw.broken_entity');
    expect(out).toContain('primary-gpt');
  });
});

describe('markdown report', () => {
  const md = renderReportMarkdown(partial);

  test('one table row per kind with proposed, approved, rejected, not reviewed, written', () => {
    expect(md).toContain('| descriptions | 13 | 9 | 2 | 2 | 8 |');
    expect(md).toContain('| PII tags | 8 | 5 | 2 | 1 | 4 |');
    expect(md).toContain('| lineage flags | 6 | 3 | 2 | 1 | 3 |');
    expect(md).toContain('| **total** | **27** | **17** | **6** | **4** | **15** |');
  });

  test('coverage and governance before and after, failures and retired endpoints as tables', () => {
    expect(md).toMatch(/\| Description coverage .* \| 42\.0 % \(21 of 50\) \| 80\.0 % \(40 of 50\) \|/);
    expect(md).toMatch(/\| PII-looking columns tagged \| 3 of 13 \| 12 of 13 \(92\.3 %\) \|/);
    expect(md).toContain('| raw.broken_entity | load | invalid_entity | no | columns: at least one column |');
    expect(md).toMatch(/\| primary-gpt \| daily quota spent \| 429 \| tokens-per-day \|/);
  });

  test('proposals are grouped by outcome; cell text cannot break the table or inject HTML', () => {
    expect(md).toContain('### Rejected (1)');
    expect(md).toContain('### Not reviewed (1)');
    expect(md).toContain('### Approved (2)');
    expect(md).toContain('a region is not personal data');
    expect(md).not.toContain('<script>');
    expect(md).toContain('&lt;script&gt;alert(1)&lt;/script&gt; \\| placed by customers');
  });
});

describe('html report', () => {
  const html = renderReportHtml(partial, { uiLink: 'http://localhost:8233/namespaces/default/workflows/x' });

  test('is one self-contained page: inline CSS and SVG, no script, no external asset or link', () => {
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).toContain('<style>');
    expect(html.match(/<svg /g)?.length).toBe(2);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/\b(src|href)\s*=/i);
    expect(html).not.toMatch(/<link\b/i);
    expect(html).not.toMatch(/url\(/i);
    expect(html).not.toMatch(/@import/i);
  });

  test('the banner comes before every table and lists the reasons', () => {
    const banner = html.indexOf('class="banner partial"');
    expect(banner).toBeGreaterThan(0);
    expect(banner).toBeLessThan(html.indexOf('<table'));
  });

  test('the outcome chart draws each kind in proportion, with its counts', () => {
    const widths = [
      ...html.matchAll(
        /<rect x="[\d.]+" y="\d+" width="([\d.]+)" height="24" fill="(#[0-9a-f]+)"><title>([^<]+)<\/title>/g,
      ),
    ].map((m) => ({ width: Number(m[1]), title: m[3] }));
    const byTitle = Object.fromEntries(widths.map((w) => [w.title, w.width]));
    // descriptions approved 9 is the largest row (9+2+2=13): the bar scale is 360 px for 13.
    expect(byTitle['descriptions: 9 approved']).toBeCloseTo((9 / 13) * 360, 0);
    expect(byTitle['PII tags: 1 not reviewed']).toBeCloseTo((1 / 13) * 360, 0);
    expect(html).toContain('9 / 2 / 2');
    expect(html).toContain('5 / 2 / 1');
  });

  test('text from the catalog is escaped', () => {
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  test('the coverage chart shows before and after', () => {
    expect(html).toContain('descriptions before: 42.0 %');
    expect(html).toContain('descriptions after: 80.0 %');
    expect(html).toContain('PII tagged before: 23.1 %');
    expect(html).toContain('PII tagged after: 92.3 %');
  });
});

describe('changeSummary', () => {
  test.each([
    [proposals[0]!, 'tag raw.customers.email as email (0.95)'],
    [proposals[3]!, 'drop dangling upstream raw.old_orders of mart.daily_sales'],
    [
      proposal({
        id: 'x',
        entityId: 'mart.v',
        change: { kind: 'lineage_flag', finding: 'unrecorded_read', upstream: 'raw.a' },
        outcome: 'approved',
      }),
      'record upstream raw.a of mart.v (read by its SQL)',
    ],
    [
      proposal({
        id: 'y',
        change: { kind: 'description', target: 'column', column: 'email', text: 'Email address.' },
        outcome: 'approved',
      }),
      'describe raw.customers.email: "Email address."',
    ],
  ])('%#', (p, expected) => {
    expect(changeSummary(p)).toBe(expected);
  });
});

describe('progressLine', () => {
  test('says the phase, pages, entities and counts', () => {
    expect(
      progressLine({
        phase: 'sweeping',
        catalog: 'shop',
        mode: 'mechanical',
        pagesDone: 2,
        pageCount: 7,
        entitiesRequested: 69,
        entitiesDone: 20,
        approved: 31,
        rejected: 4,
        notReviewed: 0,
        written: 30,
        failures: 1,
        retiredEndpoints: ['a'],
        breakerTripped: false,
        execution: 2,
        awaitingReview: 3,
      }),
    ).toBe(
      'sweeping shop; page 2/7; 20/69 entities; 31 approved, 4 rejected, 0 not reviewed, 30 written; ' +
        '3 awaiting human review; 1 failures; retired: a; execution 2',
    );
  });
});
