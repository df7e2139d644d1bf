import {
  Counter,
  Gauge,
  MetricRegistry,
  MAX_SERIES_PER_FAMILY,
  escapeHelp,
  escapeLabelValue,
  formatValue,
  renderLabels,
} from '../../activities/metrics-text';
import { ArgusMetrics, countProposals, noMetrics } from '../../activities/metrics';

describe('Prometheus text exposition', () => {
  test.each([
    ['plain', 'plain'],
    ['back\\slash', 'back\\\\slash'],
    ['say "hi"', 'say \\"hi\\"'],
    ['two\nlines', 'two\\nlines'],
    ['all \\ " \n', 'all \\\\ \\" \\n'],
    ['', ''],
    ['ünïcode ✓', 'ünïcode ✓'],
  ])('label value %j is written %j', (value, written) => {
    expect(escapeLabelValue(value)).toBe(written);
  });

  test.each([
    ['Entities judged.', 'Entities judged.'],
    ['a "quoted" word', 'a "quoted" word'],
    ['back\\slash\nnew line', 'back\\\\slash\\nnew line'],
  ])('help %j is written %j (quotes stay)', (help, written) => {
    expect(escapeHelp(help)).toBe(written);
  });

  test.each([
    [0, '0'],
    [42, '42'],
    [1.5, '1.5'],
    [-3, '-3'],
    [NaN, 'NaN'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
  ])('value %p is written %s', (n, written) => {
    expect(formatValue(n)).toBe(written);
  });

  test('labels are rendered in the family order, escaped; none renders nothing', () => {
    expect(renderLabels(['endpoint', 'agent'], ['a"b', 'review'])).toBe('{endpoint="a\\"b",agent="review"}');
    expect(renderLabels([], [])).toBe('');
  });

  test('a family renders HELP and TYPE before any sample, then samples sorted by label values', () => {
    const c = new Counter('argus_x_total', 'What x counts.\nSecond line.', ['kind', 'result']);
    expect(c.render()).toBe('# HELP argus_x_total What x counts.\\nSecond line.\n# TYPE argus_x_total counter\n');
    c.inc({ kind: 'b', result: 'ok' }, 2);
    c.inc({ kind: 'a', result: 'say "no"' });
    c.inc({ kind: 'b', result: 'ok' });
    expect(c.render().split('\n')).toEqual([
      '# HELP argus_x_total What x counts.\\nSecond line.',
      '# TYPE argus_x_total counter',
      'argus_x_total{kind="a",result="say \\"no\\""} 1',
      'argus_x_total{kind="b",result="ok"} 3',
      '',
    ]);
  });

  test('a family without labels has one bare sample line', () => {
    const g = new Gauge('argus_y', 'Y.', []);
    g.set({}, 7);
    g.set({}, 5);
    expect(g.render()).toBe('# HELP argus_y Y.\n# TYPE argus_y gauge\nargus_y 5\n');
  });

  test('a counter only goes up; inc(0) makes the series visible', () => {
    const c = new Counter('argus_c_total', 'C.', ['k']);
    expect(() => c.inc({ k: 'a' }, -1)).toThrow(/only goes up/);
    expect(() => c.inc({ k: 'a' }, NaN)).toThrow(/only goes up/);
    expect(() => c.inc({ k: 'a' }, Infinity)).toThrow(/only goes up/);
    c.inc({ k: 'a' }, 0);
    expect(c.render()).toContain('argus_c_total{k="a"} 0\n');
  });

  test('names are checked; a missing label is an error, not an empty value', () => {
    expect(() => new Counter('argus-bad', 'x', [])).toThrow(/invalid metric name/);
    expect(() => new Counter('argus_ok_total', 'x', ['bad-label'])).toThrow(/invalid label name/);
    expect(() => new Counter('argus_ok_total', 'x', ['__reserved'])).toThrow(/invalid label name/);
    const c = new Counter<'a' | 'b'>('argus_ok_total', 'x', ['a', 'b']);
    expect(() => c.inc({ a: '1' } as Record<'a' | 'b', string>)).toThrow(/label b is missing/);
  });

  test('a runaway label is capped and the output says how much was dropped', () => {
    const c = new Counter('argus_many_total', 'Many.', ['endpoint']);
    for (let i = 0; i < MAX_SERIES_PER_FAMILY + 5; i++) c.inc({ endpoint: `e${i}` });
    c.inc({ endpoint: 'e0' }); // an existing series still counts
    const lines = c.render().trim().split('\n');
    expect(lines.filter((l) => l.startsWith('argus_many_total{'))).toHaveLength(MAX_SERIES_PER_FAMILY);
    expect(c.get({ endpoint: 'e0' })).toBe(2);
    expect(lines.at(-1)).toBe(
      `# argus_many_total: 5 updates of new label sets dropped (over ${MAX_SERIES_PER_FAMILY})`,
    );
  });

  test('a registry renders its families in order and refuses a name twice', () => {
    const r = new MetricRegistry();
    r.counter('argus_a_total', 'A.', []).inc({});
    r.gauge('argus_b', 'B.', ['x']).set({ x: '1' }, 0.25);
    expect(r.render()).toBe(
      '# HELP argus_a_total A.\n# TYPE argus_a_total counter\nargus_a_total 1\n' +
        '# HELP argus_b B.\n# TYPE argus_b gauge\nargus_b{x="1"} 0.25\n',
    );
    expect(() => r.counter('argus_a_total', 'again', [])).toThrow(/defined twice/);
  });
});

describe("ARGUS's series", () => {
  test('each method lands in its family with its labels', () => {
    const m = new ArgusMetrics();
    m.entitiesJudged('file', 12);
    countProposals(m, [
      { agent: 'pii-classifier', change: { kind: 'pii_tag' } },
      { agent: 'pii-classifier', change: { kind: 'pii_tag' } },
      { agent: 'description-drafter', change: { kind: 'description' } },
    ]);
    m.verdicts('gate', [{ decision: 'rejected' }, { decision: 'approved' }, { decision: 'rejected' }]);
    m.verdicts('model_unavailable', [{ decision: 'not_reviewed' }]);
    m.writes('file', 'written', 3);
    m.writes('file', 'kept_human', 0);
    m.modelCall('groq', 'review', { promptTokens: 120, completionTokens: 30 });
    m.modelCall('groq', 'review', { promptTokens: 80, completionTokens: 10 });
    m.modelCallFailed('groq', 'burst');
    m.endpointExhausted('groq', 'day');
    m.endpointRetired('groq', 'exhausted');
    m.quotaRemaining('groq', 'tokens', 29000);
    m.quotaRemaining('groq', 'tokens', 28500);
    const samples = m
      .render()
      .split('\n')
      .filter((l) => l && !l.startsWith('#'));
    expect(samples).toEqual([
      'argus_entities_judged_total{catalog_kind="file"} 12',
      'argus_proposals_total{agent="description-drafter",kind="description"} 1',
      'argus_proposals_total{agent="pii-classifier",kind="pii_tag"} 2',
      'argus_verdicts_total{outcome="approved",stage="gate"} 1',
      'argus_verdicts_total{outcome="not_reviewed",stage="model_unavailable"} 1',
      'argus_verdicts_total{outcome="rejected",stage="gate"} 2',
      'argus_writes_total{catalog_kind="file",result="kept_human"} 0',
      'argus_writes_total{catalog_kind="file",result="written"} 3',
      'argus_model_calls_total{endpoint="groq",agent="review"} 2',
      'argus_model_tokens_total{endpoint="groq",agent="review",type="completion"} 40',
      'argus_model_tokens_total{endpoint="groq",agent="review",type="prompt"} 200',
      'argus_model_call_failures_total{endpoint="groq",error="burst"} 1',
      'argus_endpoint_exhausted_total{endpoint="groq",window="day"} 1',
      'argus_endpoints_retired_total{endpoint="groq",reason="exhausted"} 1',
      'argus_model_quota_remaining{endpoint="groq",resource="tokens"} 28500',
    ]);
    const types = m
      .render()
      .split('\n')
      .filter((l) => l.startsWith('# TYPE'));
    expect(types).toHaveLength(10);
    expect(types.every((l) => /^# TYPE argus_\w+ (counter|gauge)$/.test(l))).toBe(true);
    expect(types.filter((l) => l.endsWith('counter')).every((l) => /_total counter$/.test(l))).toBe(true);
  });

  test('the no-op default counts nothing and accepts every call', () => {
    expect(() => {
      noMetrics.entitiesJudged('demo', 1);
      noMetrics.verdicts('human', [{ decision: 'approved' }]);
      noMetrics.modelCall('a', 'review', { promptTokens: 1, completionTokens: 1 });
    }).not.toThrow();
  });
});
