import type { ReportProposal, SweepReport } from '../../domain/report';
import { changeSummary, groupByReason, modelUsageText, renderReportText } from '../../client/render';
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
    writesFailed: 0,
    coverage: {
      descriptionsBefore: 0.42,
      descriptionsAfter: 0.8,
      describedBefore: 21,
      describedAfter: 40,
      describable: 50,
      sources: { human: 21, inherited: 11, derived: 6, model: 2 },
      restatementsNotCounted: 3,
    },
    piiGovernance: { tagged: 12, piiLooking: 13, ratio: 12 / 13, taggedBefore: 3 },
    failures: [],
    failuresTruncated: 0,
    endpoints: { retired: [], breakerTripped: false },
    modelUsage: {
      calls: 46,
      promptTokens: 51234,
      completionTokens: 8765,
      estimatedCalls: 0,
      perEntity: { calls: 0.67, promptTokens: 742.52, completionTokens: 127.03 },
      byAgent: {
        'description-drafter': { calls: 23, promptTokens: 30001, completionTokens: 6000 },
        review: { calls: 23, promptTokens: 21233, completionTokens: 2765 },
      },
      byEndpoint: { 'primary-gpt': { calls: 46, promptTokens: 51234, completionTokens: 8765 } },
    },
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

/** The partial report with its hostile description proposal rejected, so that it is rendered as a row. */
const withRejectedScript = report({
  ...partial,
  proposals: proposals.map((p) => (p.id === 'p-desc' ? { ...p, outcome: 'rejected', reason: 'not grounded' } : p)),
});

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

  test("the catalog's caveats are shown, and a sweep with them is still complete", () => {
    const note = 'target/catalog.json is older than target/manifest.json, run dbt docs generate';
    const out = render({ ...complete, catalogNotes: [note] });
    expect(out).toContain(note);
    expect(out).not.toContain('PARTIAL');
    expect(render(complete)).not.toMatch(/note on the catalog|note: /i);
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

  test('model calls and tokens, per agent and endpoint', () => {
    const out = render(partial);
    expect(out).toContain(modelUsageText(partial));
    expect(modelUsageText(partial)).toBe(
      '46 calls, 51,234 prompt + 8,765 completion tokens (per entity: 0.67 calls, 742.52 + 127.03 tokens); ' +
        'description-drafter 23 calls, 30,001 + 6,000; review 23 calls, 21,233 + 2,765; on primary-gpt 46 calls, 51,234 + 8,765',
    );
  });

  test('where the counted descriptions came from, and the restatements left uncounted', () => {
    const out = render(partial);
    const s = partial.coverage.sources;
    expect(out).toContain(`human ${s.human}, inherited ${s.inherited}, derived ${s.derived}, model ${s.model}`);
    expect(out).toContain(`${partial.coverage.restatementsNotCounted} restatements of the schema not counted`);
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

  test('proposals are grouped by outcome', () => {
    expect(md).toContain('### Rejected (1)');
    expect(md).toContain('### Not reviewed (1)');
    expect(md).toContain('### Approved (2)');
    expect(md).toContain('a region is not personal data');
  });

  test('cell text cannot break the table or inject HTML', () => {
    // Not-reviewed proposals are listed by reason, without their change: the hostile text is in a rejected row.
    const out = renderReportMarkdown(withRejectedScript);
    expect(out).not.toContain('<script>');
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt; \\| placed by customers');
  });
});

describe('html report', () => {
  const html = renderReportHtml(partial, { uiLink: 'http://localhost:8233/namespaces/default/workflows/x' });

  test('groups PII tags by the table reading their proposer used, people first, unstated last', () => {
    const tag = (
      id: string,
      column: string,
      reading: 'person' | 'organisation' | undefined,
      outcome: ReportProposal['outcome'],
    ) =>
      proposal({
        id,
        change: {
          kind: 'pii_tag',
          column,
          category: 'phone',
          confidence: 0.8,
          explanation: `${column}: tokens "${column}"`,
          ...(reading ? { reading } : {}),
        },
        outcome,
      });
    const out = renderReportHtml({
      ...partial,
      proposals: [
        tag('t1', 'fax', 'organisation', 'rejected'),
        tag('t2', 'phone', 'organisation', 'rejected'),
        tag('t3', 'mobile', 'person', 'approved'),
        tag('t4', 'cell', undefined, 'not_reviewed'),
      ],
    });
    const groups = [
      ...out.matchAll(/<details class="reading" data-reading="([^"]+)"><summary>([^<]+)<\/summary>/g),
    ].map((m) => [m[1], m[2]]);
    expect(groups).toEqual([
      ['person', 'person rows — 1 tag: 1 approved, 0 rejected, 0 not reviewed'],
      ['organisation', 'organisation rows — 2 tags: 0 approved, 2 rejected, 0 not reviewed'],
      ['not stated', 'reading not stated — 1 tag: 0 approved, 0 rejected, 1 not reviewed'],
    ]);
    const org = out.slice(out.indexOf('data-reading="organisation"'), out.indexOf('data-reading="not stated"'));
    expect(org).toContain('raw.customers.fax');
    expect(org).toContain('raw.customers.phone');
    expect(org).not.toContain('raw.customers.mobile');
  });

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
    const out = renderReportHtml(withRejectedScript);
    expect(out).not.toContain('<script>alert(1)</script>');
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  test('the coverage chart shows before and after', () => {
    expect(html).toContain('descriptions before: 42.0 %');
    expect(html).toContain('descriptions after: 80.0 %');
    expect(html).toContain('PII tagged before: 23.1 %');
    expect(html).toContain('PII tagged after: 92.3 %');
  });
});

/** A sweep whose model endpoint ran out of daily quota: 200 proposals share one long provider message. */
const QUOTA_REASON =
  'endpoint primary-gpt retired before review: Rate limit reached for gpt-4o-mini in organization org-abc on ' +
  'tokens per day (TPD): Limit 100000, Used 99299, Requested 1139. Please try again in 1h30m43.2s. Visit ' +
  'https://platform.openai.com/account/rate-limits to learn more. You can increase your rate limit by adding a ' +
  'payment method to your account at https://platform.openai.com/account/billing.';
const OTHER_REASON = 'review deadline passed <script>alert("x")</script> & nobody answered';

const entity = (i: number) => `raw.quota_t${String(i).padStart(3, '0')}`;

const quotaProposals: ReportProposal[] = [
  ...Array.from({ length: 200 }, (_, i) =>
    proposal({
      id: `p-q${i}`,
      entityId: entity(i),
      agent: 'description-drafter',
      change: { kind: 'description', target: 'table', text: `Table ${i}.` },
      outcome: 'not_reviewed',
      reason: QUOTA_REASON,
      reviewer: 'none',
    }),
  ),
  // Two of the three share an entity: the group counts 3 proposals on 2 entities.
  ...['raw.late_a', 'raw.late_a', 'raw.late_b'].map((entityId, i) =>
    proposal({
      id: `p-late${i}`,
      entityId,
      change: { kind: 'pii_tag', column: `c${i}`, category: 'email', confidence: 0.9, explanation: 'name' },
      outcome: 'not_reviewed',
      reason: OTHER_REASON,
      reviewer: 'none',
    }),
  ),
  proposals[0]!,
  proposals[1]!,
];

const quota = report({
  partial: true,
  partialReasons: ['203 proposals were not reviewed', 'endpoint primary-gpt retired: daily quota spent'],
  outcomes: { approved: 1, rejected: 1, not_reviewed: 203 },
  byKind: {
    description: { proposed: 200, approved: 0, rejected: 0, not_reviewed: 200, written: 0 },
    pii_tag: { proposed: 5, approved: 1, rejected: 1, not_reviewed: 3, written: 1 },
    lineage_flag: { proposed: 0, approved: 0, rejected: 0, not_reviewed: 0, written: 0 },
  },
  written: 1,
  proposals: quotaProposals,
  reportFile: '/var/lib/argus/sweeps/shop-2026/report.json',
});

/** The same sweep, of which the report lists only the first proposals (the whole sweep left 640 unreviewed). */
const quotaTruncated = report({
  ...quota,
  outcomes: { approved: 1, rejected: 1, not_reviewed: 640 },
  proposalsTruncated: 437,
});

const count = (s: string, sub: string) => s.split(sub).length - 1;

describe.each([
  // format, render, entity ids listed per reason, the reason as the format writes it
  ['text', renderReportText, 10, OTHER_REASON],
  ['markdown', renderReportMarkdown, 20, 'review deadline passed &lt;script&gt;alert("x")&lt;/script&gt; &amp; nobody'],
  ['html', renderReportHtml, 30, 'review deadline passed &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp;'],
] as const)('%s report of a partial sweep with not-reviewed proposals', (_format, render, listed, otherAsWritten) => {
  const out = render(quota);

  test('still says PARTIAL at the top, with its reasons', () => {
    expect(top(_format, out)).toContain('PARTIAL');
    for (const why of quota.partialReasons) expect(out).toContain(why);
  });

  test('one block per reason: the reason once, with its count', () => {
    expect(count(out, QUOTA_REASON)).toBe(1);
    expect(count(out, otherAsWritten)).toBe(1);
    expect(out).toContain('200 proposals on 200 entities (descriptions 200)');
    expect(out).toContain('3 proposals on 2 entities (PII tags 3)');
    // The most frequent reason comes first.
    expect(out.indexOf(QUOTA_REASON)).toBeLessThan(out.indexOf(otherAsWritten));
    // No row per proposal: the changes of not-reviewed proposals are not listed.
    expect(out).not.toContain('Table 7.');
  });

  test('lists the first entities of each reason, then how many more', () => {
    expect(out).toContain(`${entity(0)}, ${entity(1)}`);
    expect(out).toContain(`${entity(listed - 1)} and ${200 - listed} more`);
    expect(out).not.toContain(entity(listed));
    expect(out).toContain('raw.late_a, raw.late_b');
  });

  test('a cut list says where the rest is: the report file and the command', () => {
    expect(out).toContain(quota.reportFile);
    expect(out).toContain(`argus report ${quota.sweepId} --format json`);
    expect(out).not.toMatch(/more in the JSON report\.?\s*(<|$)/m);
  });

  test('approved and rejected proposals stay rows (the text report lists none of them)', () => {
    const rows = ['a region is not personal data', 'tag raw.customers.email as email (0.95)'];
    expect(rows.map((r) => out.includes(r))).toEqual(rows.map(() => _format !== 'text'));
  });

  test('a truncated report says its counts are of the proposals listed, and where the rest is', () => {
    const t = render(quotaTruncated);
    expect(t).toContain('203 listed of 640 in the sweep');
    expect(t).not.toMatch(/Not reviewed \(203\)/);
    expect(t).toContain(
      'These counts are of the first 205 proposals, the ones this report lists; 437 more are not listed.',
    );
    expect(t).toContain('The whole sweep left 640 not reviewed.');
    expect(t).toMatch(
      /Every proposal \(642\) is in the report file (`|<code>)\/var\/lib\/argus\/sweeps\/shop-2026\/report\.json/,
    );
    expect(t).toContain(`argus report ${quota.sweepId} --format json`);
    expect(t).toContain('prints the first 205');
  });
});

describe('escaping of grouped reasons', () => {
  test('html', () => {
    const html = renderReportHtml(quota);
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
  });

  test('markdown', () => {
    const md = renderReportMarkdown(quota);
    expect(md).not.toContain('<script>');
    expect(md).toMatch(/^\| 3 proposals on 2 entities \(PII tags 3\) \| review deadline passed &lt;script&gt;/m);
  });
});

describe('groupByReason', () => {
  test.each([
    ['nothing', [], []],
    [
      'exact reasons only, most frequent first, entities once each',
      [
        ['a', 'quota spent'],
        ['b', 'deadline passed'],
        ['b', 'deadline passed'],
        ['c', 'deadline passed'],
        ['d', 'quota spent '],
      ],
      [
        { reason: 'deadline passed', count: 3, entities: ['b', 'c'] },
        { reason: 'quota spent', count: 1, entities: ['a'] },
        { reason: 'quota spent ', count: 1, entities: ['d'] },
      ],
    ],
  ] as [string, [string, string][], { reason: string; count: number; entities: string[] }[]][])(
    '%s',
    (_name, rows, expected) => {
      const ps = rows.map(([entityId, reason], i) =>
        proposal({ id: `g${i}`, entityId, reason, change: proposals[2]!.change, outcome: 'not_reviewed' }),
      );
      expect(groupByReason(ps).map(({ reason, count, entities }) => ({ reason, count, entities }))).toEqual(expected);
    },
  );
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
