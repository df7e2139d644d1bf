// Real dbt for tests: the dbt that scripts/ensure-dbt.sh provisions, run on a writable copy of the
// jaffle_shop project from ../shared/testdata (the source is read-only and never touched).
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
export const JAFFLE_SHOP_SOURCE = path.resolve(ROOT, '../shared/testdata/dbt/jaffle_shop_duckdb');

let dbtPath: string | undefined;

/** Absolute path of the dbt executable (provisioned into .tools/dbt-venv on first use). */
export function dbtExecutable(): string {
  dbtPath ??= execFileSync('bash', [path.join(ROOT, 'scripts', 'ensure-dbt.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  return dbtPath;
}

export interface DbtRun {
  code: number;
  output: string;
}

/** Run dbt in `dir` with the project's own profiles.yml, tracking off. Resolves with the exit code, never rejects. */
export function runDbt(dir: string, args: string[], timeoutMs = 240_000): Promise<DbtRun> {
  return new Promise((resolve) => {
    execFile(
      dbtExecutable(),
      [...args, '--profiles-dir', dir, '--project-dir', dir],
      {
        cwd: dir,
        env: { ...process.env, DO_NOT_TRACK: '1', DBT_SEND_ANONYMOUS_USAGE_STATS: 'false' },
        timeout: timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

function makeWritable(p: string): void {
  const st = statSync(p);
  chmodSync(p, st.mode | 0o200 | (st.isDirectory() ? 0o700 : 0));
  if (st.isDirectory()) for (const e of readdirSync(p)) makeWritable(path.join(p, e));
}

export interface JaffleShop {
  /** The project copy; its duckdb file and target/ are inside it. */
  dir: string;
  dbt(args: string[]): Promise<DbtRun>;
}

/**
 * A fresh, writable copy of jaffle_shop with `dbt build` and `dbt docs generate` run on it, so
 * target/manifest.json, target/catalog.json and jaffle_shop.duckdb exist. Throws with dbt's output if either fails.
 */
export async function prepareJaffleShop(): Promise<JaffleShop> {
  const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'argus-dbt-')), 'jaffle_shop');
  cpSync(JAFFLE_SHOP_SOURCE, dir, { recursive: true });
  makeWritable(dir);
  const dbt = (args: string[]) => runDbt(dir, args);
  for (const cmd of [['build'], ['docs', 'generate']]) {
    const r = await dbt(cmd);
    if (r.code !== 0) throw new Error(`dbt ${cmd.join(' ')} failed (exit ${r.code}):\n${r.output.slice(-4000)}`);
  }
  return { dir, dbt };
}

/**
 * A fresh, writable copy of jaffle_shop on which dbt has not run yet: for a test that changes the project first and
 * then runs the dbt commands it needs itself.
 */
export function copyJaffleShop(): JaffleShop {
  const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'argus-dbt-')), 'jaffle_shop');
  cpSync(JAFFLE_SHOP_SOURCE, dir, { recursive: true });
  makeWritable(dir);
  return { dir, dbt: (args: string[]) => runDbt(dir, args) };
}

/** `dbt parse` in `dir` (writes target/manifest.json): exit code and output. */
export function dbtParse(dir: string): Promise<DbtRun> {
  return runDbt(dir, ['parse', '--no-partial-parse']);
}

/** Rows of a query run by dbt against the project's own duckdb database (`dbt show --inline`). */
export async function dbtQuery(dir: string, sql: string): Promise<Record<string, unknown>[]> {
  const r = await runDbt(dir, [
    'show',
    '--inline',
    sql,
    '--limit',
    '10000',
    '--output',
    'json',
    '--log-format',
    'json',
  ]);
  if (r.code !== 0) throw new Error(`dbt show failed (exit ${r.code}):\n${r.output.slice(-4000)}`);
  for (const line of r.output.split('\n')) {
    if (!line.includes('"preview"')) continue;
    const event = JSON.parse(line) as { data?: { preview?: string } };
    if (event.data?.preview !== undefined) return JSON.parse(event.data.preview) as Record<string, unknown>[];
  }
  throw new Error(`dbt show printed no preview:\n${r.output.slice(-4000)}`);
}

export interface CountingDbt {
  /** An executable for ARGUS_DBT: it notes each call, then runs the real dbt with the same arguments. */
  executable: string;
  /** One entry per call so far, in order: the subcommand and the `--inline` query (no values are in either). */
  calls(): { command: string; inline: string }[];
}

/** A dbt that counts its invocations (real dbt underneath): for tests that bound how often ARGUS runs dbt. */
export function countingDbt(dir: string): CountingDbt {
  const executable = path.join(dir, 'dbt-counted');
  const record = path.join(dir, 'dbt-calls.jsonl');
  writeFileSync(record, '');
  writeFileSync(
    executable,
    [
      '#!/usr/bin/env bash',
      'inline=""; prev=""',
      'for a in "$@"; do [[ $prev == --inline ]] && inline=$a; prev=$a; done',
      `python3 -c 'import json,sys; print(json.dumps({"command": sys.argv[1], "inline": sys.argv[2]}))' "$1" "$inline" >> ${JSON.stringify(record)}`,
      `exec ${JSON.stringify(dbtExecutable())} "$@"`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return {
    executable,
    calls: () =>
      readFileSync(record, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as { command: string; inline: string }),
  };
}
