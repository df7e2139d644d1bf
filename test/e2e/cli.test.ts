// The `argus` CLI as people and scripts run it: a child process against the test server, with the ARGUS worker
// in this process on its own task queue.
import * as path from 'node:path';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { uniqueId } from '../support/temporal-env';
import { useArgusWorker, copyCatalog, readCatalog, writeCatalog, DEMO_CATALOG } from '../support/argus-worker';
import { generateCatalog } from '../../scripts/generate-catalog';
import { buildProgram, exitCodeFor } from '../../client/cli';
import { EXIT } from '../../client/commands/output';
import type { SweepReport } from '../../domain/report';
import { argus, cliEnv, run, ROOT, type Ran } from './spawn';
import { SK } from '../support/fake-secrets';

let env: NodeJS.ProcessEnv;

const w = useArgusWorker('tq-cli');

beforeAll(async () => {
  env = cliEnv(w.tw.taskQueue);
  mkdirSync(dir(), { recursive: true });
});

const dir = () => path.join(w.tw.stateDir, 'copies');
const json = <T>(r: Ran): T => JSON.parse(r.stdout) as T;

/** Fail with the CLI's own words when the exit code is not the expected one. */
function expectExit(r: Ran, code: number): void {
  expect({ code: r.code, stderr: r.code === code ? '' : r.stderr }).toEqual({ code, stderr: '' });
}

describe('sweep start --wait, status, result and report', () => {
  let complete: SweepReport;
  let partial: SweepReport;
  let completeFile: string;
  let partialRun: Ran;

  beforeAll(async () => {
    completeFile = copyCatalog(DEMO_CATALOG, dir(), 'complete.json');
    const partialFile = copyCatalog(DEMO_CATALOG, dir(), 'partial.json');
    const c = readCatalog(partialFile) as unknown as { entities: Record<string, unknown>[] };
    c.entities.push({ id: 'raw.broken_entity', database: 'shop', name: 'broken_entity', kind: 'table', columns: [] });
    writeCatalog(partialFile, c);
    const [a, b] = await Promise.all([
      argus(['sweep', 'start', '--catalog', completeFile, '--wait', '--json'], env),
      argus(['sweep', 'start', '--catalog', partialFile, '--wait', '--json'], env),
    ]);
    expectExit(a, EXIT.ok);
    const { webUi, ...report } = json<SweepReport & { webUi: string }>(a);
    expect(webUi).toContain(encodeURIComponent(report.sweepId));
    complete = report;
    partialRun = b;
    const { webUi: _link, ...p } = json<SweepReport & { webUi: string }>(b);
    partial = p;
  });

  test('a complete sweep exits 0 and prints only the JSON report on stdout, progress on stderr', () => {
    const entities = readCatalog(DEMO_CATALOG).entities.length;
    expect(complete).toMatchObject({
      partial: false,
      mode: 'mechanical',
      entities: { requested: entities, processed: entities, failed: 0 },
    });
    expect(complete.sweepId).toMatch(/^sweep\/complete\//);
    expect(complete.written).toBeGreaterThan(0);
    expect(readFileSync(completeFile, 'utf8')).not.toBe(readFileSync(DEMO_CATALOG, 'utf8'));
  });

  test('a sweep with one invalid entity exits 3 and its report says partial and why', () => {
    expectExit(partialRun, EXIT.partial);
    expect(partial.partial).toBe(true);
    expect(partial.failures).toEqual([expect.objectContaining({ entity: 'raw.broken_entity', stage: 'load' })]);
    expect(partial.partialReasons.join(' ')).toMatch(/1 of \d+ entities failed/);
    expect(partialRun.stderr).toContain(`Started ${partial.sweepId}`);
    expect(partialRun.stderr).toMatch(/\[progress\] /);
  });

  test('status shows status, search attributes and the result summary; exit code by partial', async () => {
    const [c, p, pj] = await Promise.all([
      argus(['sweep', 'status', complete.sweepId], env),
      argus(['sweep', 'status', partial.sweepId], env),
      argus(['sweep', 'status', partial.sweepId, '--json'], env),
    ]);
    expectExit(c, EXIT.ok);
    expect(c.stdout.split('\n')[0]).toBe(`${complete.sweepId}: COMPLETED`);
    expect(c.stdout).toContain('ArgusMode=mechanical ArgusPartial=false');
    expect(c.stdout).toContain(
      `${complete.entities.processed}/${complete.entities.requested} entities, ${complete.outcomes.approved} approved`,
    );
    expectExit(p, EXIT.partial);
    expect(p.stdout.split('\n')[0]).toBe(`${partial.sweepId}: COMPLETED (PARTIAL)`);
    expect(p.stdout).toContain('ArgusPartial=true');
    expectExit(pj, EXIT.partial);
    expect(json(pj)).toMatchObject({
      workflowId: partial.sweepId,
      status: 'COMPLETED',
      searchAttributes: { ArgusMode: 'mechanical', ArgusPartial: true },
      result: { partial: true, entities: partial.entities, written: partial.written },
    });
  });

  test('sweep result waits and exits by partial', async () => {
    const [c, p] = await Promise.all([
      argus(['sweep', 'result', complete.sweepId, '--json'], env),
      argus(['sweep', 'result', partial.sweepId], env),
    ]);
    expectExit(c, EXIT.ok);
    expect(json(c)).toEqual(complete);
    expectExit(p, EXIT.partial);
    expect(p.stdout.split('\n')[0]).toMatch(/^PARTIAL SWEEP/);
  });

  test('report --format markdown: PARTIAL first, tables per kind with the numbers', async () => {
    const [p, c] = await Promise.all([
      argus(['report', partial.sweepId, '--format', 'markdown'], env),
      argus(['report', complete.sweepId, '--format', 'markdown'], env),
    ]);
    expectExit(p, EXIT.partial);
    expect(p.stdout.split('\n')[0]).toContain('PARTIAL');
    const k = partial.byKind.pii_tag;
    expect(p.stdout).toContain(
      `| PII tags | ${k.proposed} | ${k.approved} | ${k.rejected} | ${k.not_reviewed} | ${k.written} |`,
    );
    expect(p.stdout).toContain('| raw.broken_entity | load |');
    expectExit(c, EXIT.ok);
    expect(c.stdout.split('\n')[0]).toBe(`# COMPLETE SWEEP: ${complete.sweepId}`);
    expect(c.stdout).not.toContain('PARTIAL');
  });

  test('report --format html --out: one self-contained page with the partial banner', async () => {
    const out = path.join(dir(), 'partial-report.html');
    const r = await argus(['report', partial.sweepId, '--format', 'html', '--out', out], env);
    expectExit(r, EXIT.partial);
    expect(r.stdout).toBe('');
    const html = readFileSync(out, 'utf8');
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('class="banner partial"');
    expect(html).toMatch(/<svg /);
    expect(html).not.toMatch(/(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|url\(/i);
    expect(html).toContain(String(partial.byKind.description.approved));
  });

  test('report --json is the report itself', async () => {
    const r = await argus(['report', complete.sweepId, '--format', 'json'], env);
    expectExit(r, EXIT.ok);
    expect(json(r)).toEqual(complete);
  });
});

test('status of a running sweep shows live progress (continue-as-new included); cancel stops it', async () => {
  const file = path.join(dir(), 'slow.json');
  writeFileSync(file, JSON.stringify(generateCatalog({ entities: 1500, seed: 11, name: 'slow' })));
  const inputFile = path.join(dir(), 'slow-input.json');
  writeFileSync(
    inputFile,
    JSON.stringify({ catalog: { kind: 'file', path: file }, pageSize: 5, concurrency: 1, pagesPerRun: 10 }),
  );
  const start = await argus(
    ['sweep', 'start', '--input-file', inputFile, '--run-key', uniqueId('slow'), '--json'],
    env,
  );
  expectExit(start, EXIT.ok);
  const { workflowId } = json<{ workflowId: string }>(start);

  // Wait until it has done some pages, so the progress has something to say.
  const handle = w.client.workflow.getHandle(workflowId);
  for (let i = 0; i < 100; i++) {
    const p = await handle.query<{ pagesDone: number }>('progress').catch(() => ({ pagesDone: 0 }));
    if (p.pagesDone >= 12) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const status = await argus(['sweep', 'status', workflowId, '--json'], env);
  expectExit(status, EXIT.ok);
  const view = json<{ status: string; progress?: { pagesDone: number; pageCount: number; execution: number } }>(status);
  expect(view.status).toBe('RUNNING');
  expect(view.progress?.pageCount).toBe(300);
  expect(view.progress?.pagesDone).toBeGreaterThanOrEqual(12);
  expect(view.progress?.execution).toBeGreaterThanOrEqual(2);

  const cancel = await argus(['sweep', 'cancel', workflowId], env);
  expectExit(cancel, EXIT.ok);
  await handle.result().catch(() => undefined);
  const after = await argus(['sweep', 'status', workflowId], env);
  expect(after.code).toBe(EXIT.failed);
  expect(after.stdout.split('\n')[0]).toBe(`${workflowId}: CANCELLED`);
});

test('bad usage and bad input exit 2 with a readable message; an unknown sweep exits 1', async () => {
  const secrets = path.join(dir(), 'endpoints-with-key.json');
  writeFileSync(
    secrets,
    JSON.stringify([{ id: 'x', baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKey: `${SK}do-not-put-me-here` }]),
  );
  const [option, pageSize, model, key, unknown] = await Promise.all([
    argus(['sweep', 'start', '--bogus'], env),
    argus(['sweep', 'start', '--catalog', 'demo', '--page-size', 'lots'], env),
    argus(['sweep', 'start', '--catalog', 'demo', '--review', 'model'], env),
    argus(['sweep', 'start', '--endpoints-file', secrets], env),
    argus(['sweep', 'status', uniqueId('sweep/none')], env),
  ]);
  expect(option.code).toBe(EXIT.usage);
  expect(option.stderr).toContain("unknown option '--bogus'");
  expect(pageSize.code).toBe(EXIT.usage);
  expect(pageSize.stderr).toContain('--page-size');
  expect(model.code).toBe(EXIT.usage);
  expect(model.stderr).toMatch(/endpoints: review "model" needs at least one endpoint/);
  expect(key.code).toBe(EXIT.usage);
  expect(key.stderr).toMatch(/apiKeyEnv/);
  expect(key.stderr).not.toContain(`${SK}do-not-put-me-here`);
  expect(unknown.code).toBe(EXIT.failed);
  expect(unknown.stderr).toMatch(/no workflow sweep\/none/);
});

test('a catalog that cannot be opened fails once, names its path and the root cause, exits 2; status says why', async () => {
  const missing = path.join(dir(), 'no-such.json');
  const folder = path.join(dir(), 'a-folder.json');
  const empty = path.join(dir(), 'empty.json');
  mkdirSync(folder, { recursive: true });
  writeFileSync(empty, '');
  const cases = [
    [missing, /catalog file not found: .*no-such\.json/],
    [folder, /a-folder\.json is a directory/],
    [empty, /empty\.json is empty/],
    [DEMO_CATALOG, /bundled demo catalog, which is never a sweep target/],
  ] as const;
  const runKey = uniqueId('bad');
  const runs = await Promise.all(
    cases.map(([file]) => argus(['sweep', 'start', '--catalog', file, '--wait', '--run-key', runKey], env)),
  );
  runs.forEach((r, i) => {
    expect({ code: r.code, stderr: r.stderr }).toEqual({
      code: EXIT.usage,
      stderr: expect.stringMatching(cases[i]![1]) as unknown as string,
    });
    expect(r.stderr).toMatch(/InvalidCatalog: cannot open the catalog/);
    expect(r.stderr).not.toMatch(/Activity task failed/);
  });
  const id = `sweep/a-folder/${runKey}`;
  const status = await argus(['sweep', 'status', id], env);
  expect({ code: status.code, out: status.stdout + status.stderr }).toEqual({
    code: EXIT.usage,
    out: expect.stringMatching(/FAILED/) as unknown as string,
  });
  expect(status.stdout).toMatch(/failed: InvalidCatalog: cannot open the catalog: .*a-folder\.json is a directory/);
  // Once: a retry cannot fix a directory, so the activity ran a single attempt.
  const history = await w.client.workflow.getHandle(id).fetchHistory();
  const attempts = (history.events ?? []).flatMap((e) =>
    e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt] : [],
  );
  expect(attempts).toEqual([1]);
});

test("a relative --catalog means the caller's directory; --version prints the package version", async () => {
  const here = path.join(dir(), 'relative-here');
  copyCatalog(DEMO_CATALOG, here, 'rel.json');
  const [r, version] = await Promise.all([
    run(
      process.execPath,
      [
        path.join(ROOT, 'scripts', 'run-ts.js'),
        'client/cli.ts',
        'sweep',
        'start',
        '--catalog',
        'rel.json',
        '--wait',
        '--json',
      ],
      {
        env,
        cwd: here,
      },
    ),
    argus(['--version'], env),
  ]);
  expectExit(r, EXIT.ok);
  expect(json<SweepReport>(r).written).toBeGreaterThan(0);
  const described = readCatalog(path.join(here, 'rel.json'))
    .entities.flatMap((e) => e.columns)
    .filter((c) => c.description_source === 'argus');
  expect(described.length).toBeGreaterThan(0);
  expectExit(version, EXIT.ok);
  expect(version.stdout.trim()).toBe(
    (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
  );
});

test('--endpoints-file puts the endpoints, never a key, into the input; model review is declared', async () => {
  const endpoints = path.join(dir(), 'endpoints.json');
  writeFileSync(
    endpoints,
    JSON.stringify([{ id: 'primary', baseUrl: 'http://127.0.0.1:9/v1', model: 'gpt-x', apiKeyEnv: 'ARGUS_TEST_KEY' }]),
  );
  // A dry run against an address nothing listens on: the start is what this test looks at, then it is cancelled.
  const r = await argus(
    [
      'sweep',
      'start',
      '--catalog',
      'demo',
      '--endpoints-file',
      endpoints,
      '--dry-run',
      '--run-key',
      uniqueId('ep'),
      '--json',
    ],
    env,
  );
  expectExit(r, EXIT.ok);
  const { workflowId } = json<{ workflowId: string }>(r);
  const handle = w.client.workflow.getHandle(workflowId);
  const d = await handle.describe();
  expect(await d.staticSummary()).toBe('ARGUS sweep of demo (model review, dry run)');
  const hist = await handle.fetchHistory();
  const input = hist.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  const started = JSON.parse(Buffer.from(input ?? new Uint8Array()).toString()) as Record<string, unknown>;
  expect(started).toEqual({
    catalog: { kind: 'demo' },
    dryRun: true,
    endpoints: [{ id: 'primary', baseUrl: 'http://127.0.0.1:9/v1', model: 'gpt-x', apiKeyEnv: 'ARGUS_TEST_KEY' }],
  });
  await handle.terminate('test done');
});

test('demo --json prints only JSON on stdout and exits 0', async () => {
  const stateDir = path.join(w.tw.stateDir, 'demo-state');
  const r = await argus(['demo', '--json'], cliEnv(uniqueId('tq-cli-demo'), { ARGUS_STATE_DIR: stateDir }), 120_000);
  expectExit(r, EXIT.ok);
  const report = json<SweepReport & { webUi: string }>(r);
  expect(report.sweepId).toMatch(/^sweep\/demo\//);
  expect(report.partial).toBe(false);
  expect(report.webUi).toContain(encodeURIComponent(report.sweepId));
});

/** Every command path of the program, e.g. ['sweep', 'start']. */
function commandPaths(cmd: Command, prefix: string[] = []): string[][] {
  return cmd.commands.flatMap((c) => [[...prefix, c.name()], ...commandPaths(c, [...prefix, c.name()])]);
}

test('--help works on every command and exits 0; the top-level help documents the exit codes', async () => {
  const paths = [[], ...commandPaths(buildProgram())];
  expect(paths.map((p) => p.join(' '))).toEqual(
    expect.arrayContaining([
      'sweep start',
      'sweep status',
      'schedule create',
      'review approve',
      'fake-provider',
      'eval arbiter',
    ]),
  );
  // Every command in-process, through the same exit-code mapping the binary uses (`eval arbiter` exits the
  // process itself, so it is among the spawned ones) ...
  for (const p of paths.filter((x) => x.join(' ') !== 'eval arbiter')) {
    const name = ['argus', ...p].join(' ');
    let text = '';
    const program = buildProgram();
    const capture = (c: Command) => {
      c.configureOutput({ writeOut: (t) => (text += t), writeErr: (t) => (text += t) });
      c.commands.forEach(capture);
    };
    capture(program);
    const code = await program
      .parseAsync(['node', 'argus', ...p, '--help'])
      .then(() => 'no exit')
      .catch((e: unknown) => exitCodeFor(e));
    expect({ name, code }).toEqual({ name, code: 0 });
    expect(text).toContain(`Usage: ${name}`);
  }
  // ... and a few as real processes.
  const spawned = [[], ['sweep', 'start'], ['schedule', 'create'], ['review', 'reject'], ['eval', 'arbiter']];
  const runs = await Promise.all(spawned.map((p) => argus([...p, '--help'], env)));
  runs.forEach((r, i) => {
    const name = ['argus', ...spawned[i]!].join(' ');
    expect({ name, code: r.code }).toEqual({ name, code: 0 });
    expect(r.stdout).toContain(`Usage: ${name}`);
  });
  expect(runs[0]!.stdout).toContain('Exit codes: 0 complete, 3 partial (the report says why), 1 failed, 2 bad usage');
});

describe('review list, approve, reject on a sweep that waits for people', () => {
  interface Pending {
    proposalId: string;
    kind: string;
    entityId: string;
    summary: string;
  }
  let sweepId: string;
  let pending: Pending[];

  beforeAll(async () => {
    const file = copyCatalog(DEMO_CATALOG, dir(), 'reviewed.json');
    const inputFile = path.join(dir(), 'reviewed-input.json');
    writeFileSync(
      inputFile,
      JSON.stringify({ catalog: { kind: 'file', path: file }, humanReview: { kinds: ['pii_tag'], deadline: '10m' } }),
    );
    const start = await argus(['sweep', 'start', '--input-file', inputFile, '--json'], env);
    expectExit(start, EXIT.ok);
    sweepId = json<{ workflowId: string }>(start).workflowId;
    for (let i = 0; i < 60; i++) {
      const list = await argus(['review', 'list', sweepId, '--json'], env);
      expectExit(list, EXIT.ok);
      pending = json<Pending[]>(list);
      if (pending.length > 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
  });

  test('list shows the held PII tags as a table', async () => {
    expect(pending.length).toBeGreaterThanOrEqual(4);
    expect(new Set(pending.map((p) => p.kind))).toEqual(new Set(['pii_tag']));
    const table = await argus(['review', 'list', sweepId], env);
    expectExit(table, EXIT.ok);
    expect(table.stdout.split('\n')[0]).toMatch(/^proposal\s+page\s+kind\s+entity\s+change/);
    for (const p of pending) expect(table.stdout).toContain(p.proposalId);
  });

  test('approve and reject several at once, refuse bad input, --all decides the rest; the report shows who decided', async () => {
    const [a, b, c] = pending;
    const approve = await argus(
      [
        'review',
        'approve',
        sweepId,
        a!.proposalId,
        b!.proposalId,
        '--reviewer',
        'alice',
        '--comment',
        'checked',
        '--json',
      ],
      env,
    );
    expectExit(approve, EXIT.ok);
    expect(json(approve)).toEqual({ accepted: 2, stillPending: pending.length - 2 });

    const [twice, none, both] = await Promise.all([
      argus(['review', 'approve', sweepId, a!.proposalId, '--reviewer', 'alice'], env),
      argus(['review', 'approve', sweepId, '--reviewer', 'alice'], env),
      argus(['review', 'reject', sweepId, c!.proposalId, '--all', '--reviewer', 'bob'], env),
    ]);
    expect(twice.code).toBe(EXIT.usage);
    expect(twice.stderr).toContain(`not awaiting review: ${a!.proposalId}`);
    expect(none.code).toBe(EXIT.usage);
    expect(both.code).toBe(EXIT.usage);

    const needsChanges = await argus(
      [
        'review',
        'reject',
        sweepId,
        c!.proposalId,
        '--reviewer',
        'bob',
        '--needs-changes',
        '--comment',
        'wrong category',
      ],
      env,
    );
    expectExit(needsChanges, EXIT.ok);
    expect(needsChanges.stdout).toContain(
      `needs changes: 1 proposal(s) by bob; the sweep accepted 1, ${pending.length - 3} still pending.`,
    );

    const rest = await argus(
      ['review', 'reject', sweepId, '--all', '--reviewer', 'bob', '--comment', 'not PII', '--json'],
      env,
    );
    expectExit(rest, EXIT.ok);
    expect(json(rest)).toEqual({ accepted: pending.length - 3, stillPending: 0 });

    const result = await argus(['sweep', 'result', sweepId, '--json'], env);
    expect([EXIT.ok, EXIT.partial]).toContain(result.code);
    const report = json<SweepReport>(result);
    const byId = new Map(report.proposals.map((p) => [p.id, p]));
    for (const p of [a!, b!])
      expect(byId.get(p.proposalId)).toMatchObject({ outcome: 'approved', reviewer: 'human:alice', written: true });
    expect(byId.get(c!.proposalId)).toMatchObject({ outcome: 'rejected', reviewer: 'human:bob', written: false });
    expect(byId.get(c!.proposalId)?.reason).toMatch(/needs changes by bob: wrong category/);
    for (const p of pending.slice(3))
      expect(byId.get(p.proposalId)).toMatchObject({ outcome: 'rejected', reviewer: 'human:bob', written: false });
  });
});

test('sweep plan prints the plan and exits 0 when it fits, 3 when not; sweep start --plan refuses what does not fit', async () => {
  const file = copyCatalog(DEMO_CATALOG, dir(), 'plan.json');
  const ep = (tokensPerDay: number) => ({
    id: 'free-tier',
    baseUrl: 'http://127.0.0.1:9/v1', // never called: a plan makes no model call
    model: `plan-${tokensPerDay}`,
    budget: { tokensPerDay },
  });
  const input = (tokensPerDay: number) =>
    JSON.stringify({
      catalog: { kind: 'file', path: file },
      review: 'model',
      agentBackend: 'rules',
      endpoints: [ep(tokensPerDay)],
    });
  const fresh = await argus(['sweep', 'plan', input(1_000_000)], env);
  expectExit(fresh, 0);
  expect(fresh.stdout).toMatch(/^Plan: FITS\n/);
  expect(fresh.stdout).toMatch(/free-tier: 1,000,000 tokens left \(declared\); 0 spent today/);
  const tight = await argus(['sweep', 'plan', input(1_000), '--json'], env);
  expectExit(tight, 3);
  const p = json<{ verdict: string; deferred: number; entities: number }>(tight);
  expect(p.verdict).not.toBe('fits');
  expect(p.deferred).toBeGreaterThan(0);
  const inputFile = path.join(dir(), 'tight-input.json');
  writeFileSync(inputFile, input(1_000));
  const start = await argus(['sweep', 'start', '--input-file', inputFile, '--plan'], env);
  expectExit(start, 3);
  expect(start.stderr).toMatch(/Not started: the sweep does not fit its model budget/);
  const bad = await argus(['sweep', 'plan', '{"catalog":{"kind":"nope"}}'], env);
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toMatch(/catalog/);
});
