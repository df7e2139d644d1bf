import * as path from 'node:path';
import { readFileSync, readdirSync } from 'node:fs';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { parseSweepInput, type SweepConfig } from '../../domain/sweep';
import { parseArbiterInput } from '../../domain/arbiter';
import { FailureType } from '../../domain/ids';
import { sweepConfigOf } from '../../workflows/sweep/config';
import type { SweepCarry } from '../../workflows/sweep/state';

// The workflows parse their input once per run: the sweep its SweepInput (continued executions get the parsed
// config), the Arbiter its ArbiterInput. Old executions and old workers must keep working across that change.

const inputs = [
  { catalog: { kind: 'demo' } },
  { catalog: { kind: 'file', path: '/data/w.json' }, pageSize: 20, pagesPerRun: 2, dryRun: true },
  {
    catalog: { kind: 'postgres', schemas: ['raw'] },
    endpoints: [{ id: 'a', baseUrl: 'http://127.0.0.1:1/v1', model: 'm', budget: { tokensPerDay: 1000 } }],
    humanReview: { kinds: ['pii_tag', 'description'], deadline: '1h30m' },
    sampleValues: {},
    fitBudget: true,
  },
  { catalog: { kind: 'dbt', projectDir: '/p' }, agents: ['pii-classifier'], incremental: false, maxPasses: 1 },
];

const carry = (input?: 'config') => ({ ...(input ? { input } : {}) }) as SweepCarry;

const parsed = (raw: unknown): SweepConfig => {
  const r = parseSweepInput(raw);
  if (!r.ok) throw new Error(r.message);
  return r.value;
};

describe('the sweep parses its input once per run', () => {
  test.each(inputs)('a parsed config parses to itself (a worker from before reads a continued run): %j', (raw) => {
    expect(parsed(parsed(raw))).toEqual(parsed(raw));
  });

  test('a fresh start and a carry from before parse-once hand the raw input; a continued run the config', () => {
    for (const raw of inputs) {
      expect(sweepConfigOf(raw, undefined)).toEqual(parsed(raw));
      expect(sweepConfigOf(raw, carry())).toEqual(parsed(raw));
      const cfg = parsed(raw);
      expect(sweepConfigOf(cfg, carry('config'))).toBe(cfg);
    }
  });

  test('invalid input fails with the one InvalidSweepInput, naming the fields', () => {
    const fail = (() => {
      try {
        sweepConfigOf({ catalog: { kind: 'demo' }, pageSize: 0, bogus: 1 }, undefined);
      } catch (e) {
        return e;
      }
    })();
    expect(fail).toBeInstanceOf(ApplicationFailure);
    const f = fail as ApplicationFailure;
    expect(f).toMatchObject({ type: FailureType.InvalidSweepInput, nonRetryable: true });
    expect(f.message).toMatch(/^Invalid sweep input: .*pageSize/);
    expect(f.details).toEqual([{ fields: ['pageSize', '(input)'] }]);
  });
});

describe('ArbiterInput', () => {
  const dir = path.resolve(__dirname, '../fixtures/histories');
  const recorded = readdirSync(dir)
    .filter((f) => f.startsWith('arbiter-workflow'))
    .map((f) => {
      const h = temporal.api.history.v1.History.decode(readFileSync(path.join(dir, f)));
      const payload = h.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
      return [f, JSON.parse(Buffer.from(payload.data!).toString('utf8'))] as const;
    });

  test('every recorded Arbiter input parses (old executions replay), and to what was sent', () => {
    expect(recorded.length).toBeGreaterThan(5);
    for (const [f, input] of recorded) {
      const r = parseArbiterInput(input);
      expect([f, r.ok]).toEqual([f, true]);
      if (r.ok) expect(r.value).toEqual(input);
    }
  });

  test.each([
    ['ledgerKey missing', { ledgerKey: undefined }, ['ledgerKey']],
    ['pageIndex negative', { pageIndex: -1 }, ['pageIndex']],
    ['retired not a list', { retired: 'none' }, ['retired']],
    ['an unknown field', { extra: true }, ['(input)']],
  ])('%s is refused, naming the field', (_what, change, fields) => {
    const r = parseArbiterInput({ ...recorded[0]![1], ...change });
    expect(r.ok ? [] : r.fields).toEqual(fields);
  });
});
