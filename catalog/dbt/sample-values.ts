// Column values read through the project's own dbt: one `dbt show --inline` per table, run in the project folder
// with the profile dbt finds there (or DBT_PROFILES_DIR, DBT_TARGET from the worker's environment), so whatever
// adapter the project uses answers. The values exist only in this process's memory: dbt writes no log file, its
// target folder is a temporary one removed afterwards, stderr is discarded and stdout is parsed as it arrives and
// dropped. Nothing here puts a value, or dbt's own text (a database error may quote one), into an error.
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { typeFamily } from '../../judgment/sql/types';
import type { DbtNodeRelation } from './manifest';

/** Longer values come back cut, as PostgreSQL's samples are: no pattern ARGUS looks for is half as long. */
export const SAMPLE_MAX_CHARS = 512;
/** dbt's stdout for one sample beyond this is not a sample of 100 short values: the read is abandoned. */
const MAX_STDOUT_BYTES = 32 * 1024 * 1024;

/**
 * How long one table's sample may take, in two parts. `startMs`: from launch until dbt has parsed the project and
 * is about to compile and run the query (its `ConcurrencyLine` event), which is the project's size and Python's
 * start, not the read. `readMs`: from then until dbt has printed the rows, the read itself, as short as
 * PostgreSQL's statement_timeout. A dbt that never prints that event is held to `startMs + readMs` in all.
 */
export interface SampleLimits {
  startMs: number;
  readMs: number;
}

/** A parse of a large project with a warm partial_parse.msgpack takes seconds; a minute means something is wrong. */
export const DEFAULT_SAMPLE_LIMITS: SampleLimits = { startMs: 60_000, readMs: 5_000 };

/** A column to read: its name as the warehouse stores it (quoted exactly) or as written (plain identifiers only). */
export interface SampleColumn {
  name: string;
  /** Known to be the stored name (catalog.json): quoted. Else a plain identifier is left to the warehouse's case. */
  stored: boolean;
  /** The declared type, for the cast to text (judgment/sql/types.ts). */
  type: string;
}

/** A sample that could not be taken, in words that hold no value: what went wrong, never dbt's text. */
export class DbtSampleError extends Error {
  override name = 'DbtSampleError';
}

/**
 * A Jinja string literal holding `s` in which only letters, digits and `_` appear as themselves: every other
 * character is a `\u`/`\U` escape (Jinja decodes literals as Python's unicode-escape), so no name can end the
 * literal, open a tag or reach the SQL unquoted, whatever it holds.
 */
export function jinjaString(s: string): string {
  let out = "'";
  for (const ch of s) {
    if (/^[A-Za-z0-9_]$/.test(ch)) out += ch;
    else {
      const cp = ch.codePointAt(0)!;
      out += cp > 0xffff ? `\\U${cp.toString(16).padStart(8, '0')}` : `\\u${cp.toString(16).padStart(4, '0')}`;
    }
  }
  return `${out}'`;
}

const PLAIN_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * Families cast to the warehouse's string type in SQL: integers, so a 19-digit card number is not rounded by a
 * JSON number, and what is text already or prints as text everywhere. Semi-structured and unknown types are read
 * as dbt prints them (a cast of a STRUCT fails on BigQuery and would cost the whole table its sample).
 */
const CAST = new Set(['int', 'text', 'enum', 'uuid', 'network']);

function relationSql(call: DbtNodeRelation): string {
  if (call.kind === 'source') return `{{ source(${jinjaString(call.source)}, ${jinjaString(call.table)}) }}`;
  const v =
    call.version === undefined
      ? ''
      : `, v=${typeof call.version === 'number' && Number.isFinite(call.version) ? String(call.version) : jinjaString(String(call.version))}`;
  return `{{ ref(${jinjaString(call.package)}, ${jinjaString(call.name)}${v}) }}`;
}

/**
 * The inline query for one table: each column as `c<i>` (so duplicate or odd names cannot collide in dbt's JSON),
 * names quoted by the project's adapter (`adapter.quote`), the relation by `ref()` or `source()` as the project's
 * own SQL would name it. No LIMIT: `dbt show --limit` adds the adapter's own form of it.
 */
export function sampleQuery(call: DbtNodeRelation, columns: readonly SampleColumn[]): string {
  const list = columns.map((c, i) => {
    const name = !c.stored && PLAIN_IDENTIFIER.test(c.name) ? c.name : `{{ adapter.quote(${jinjaString(c.name)}) }}`;
    const value = CAST.has(typeFamily(c.type)) ? `cast(${name} as {{ dbt.type_string() }})` : name;
    return `${value} as c${i}`;
  });
  return `select ${list.join(', ')} from ${relationSql(call)}`;
}

function asText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  const s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v as number | boolean);
  return s.length > SAMPLE_MAX_CHARS ? [...s].slice(0, SAMPLE_MAX_CHARS).join('') : s;
}

/** dbt's name for a failure, from its error event: the first line of `exc` when it is words only, else the event. */
function failureName(event: { data?: { exc?: unknown }; info?: { name?: unknown } }): string {
  const first = typeof event.data?.exc === 'string' ? event.data.exc.split('\n', 1)[0]!.trim() : '';
  if (/^[A-Za-z][A-Za-z ]{0,40}$/.test(first)) return first;
  return typeof event.info?.name === 'string' && /^[A-Za-z]{1,60}$/.test(event.info.name) ? event.info.name : 'error';
}

export interface DbtShowRun {
  /** The dbt executable (a path, or a name on PATH). */
  executable: string;
  projectDir: string;
  /** The project's partial_parse.msgpack, copied into the temporary target so dbt parses only what changed. */
  partialParse?: string;
  env: NodeJS.ProcessEnv;
  limits: SampleLimits;
}

/**
 * Run one `dbt show` of `sql` for at most `limit` rows; the rows' values by column position (`c0`, `c1`, …).
 * Raises DbtSampleError (dbt missing, a time limit passed, dbt refused the query, no rows printed).
 */
export async function dbtShow(
  run: DbtShowRun,
  sql: string,
  limit: number,
  width: number,
): Promise<(string | null)[][]> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'argus-dbt-show-'));
  try {
    const target = path.join(tmp, 'target');
    await fs.mkdir(target);
    if (run.partialParse)
      await fs.copyFile(run.partialParse, path.join(target, 'partial_parse.msgpack')).catch(() => undefined);
    const preview = await showPreview(run, tmp, sql, limit);
    let rows: unknown;
    try {
      rows = JSON.parse(preview);
    } catch {
      throw new DbtSampleError('dbt printed rows that are not JSON');
    }
    if (!Array.isArray(rows)) throw new DbtSampleError('dbt printed rows that are not a list');
    return rows.map((row) => {
      const byKey = new Map(
        Object.entries((row ?? {}) as Record<string, unknown>).map(([k, v]) => [k.toLowerCase(), v]),
      );
      return Array.from({ length: width }, (_, i) => asText(byKey.get(`c${i}`)));
    });
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

/** dbt's `preview` (the rows as a JSON text) from its stdout; every other line is read and dropped. */
function showPreview(run: DbtShowRun, tmp: string, sql: string, limit: number): Promise<string> {
  const args = [
    'show',
    '--inline',
    sql,
    '--limit',
    String(limit),
    '--output',
    'json',
    '--log-format',
    'json',
    // Stated, not left to DBT_* variables: info events on stdout (the rows are one), no log file at all.
    '--log-level',
    'info',
    '--no-quiet',
    '--no-debug',
    '--log-level-file',
    'none',
    '--log-path',
    path.join(tmp, 'logs'),
    // The project's target/ stays as its owner left it: this run's manifest and compiled SQL go to `tmp`.
    '--target-path',
    path.join(tmp, 'target'),
    '--no-write-json',
    '--no-populate-cache',
    '--no-send-anonymous-usage-stats',
    '--no-use-colors',
    '--project-dir',
    run.projectDir,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(run.executable, args, {
      cwd: run.projectDir,
      env: { ...run.env, DO_NOT_TRACK: '1', DBT_SEND_ANONYMOUS_USAGE_STATS: 'false' },
      stdio: ['ignore', 'pipe', 'ignore'],
      // Its own process group, so a limit ends a wrapper script and the Python under it alike.
      detached: true,
    });
    let preview: string | undefined;
    let failure: string | undefined;
    let stopped: string | undefined;
    let pending = '';
    let bytes = 0;
    const stop = (why: string) => {
      stopped ??= why;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    };
    const duration = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`);
    let timer = setTimeout(
      () => stop(`dbt took longer than ${duration(run.limits.startMs + run.limits.readMs)} and was stopped`),
      run.limits.startMs + run.limits.readMs,
    );
    const onLine = (line: string) => {
      if (!line.startsWith('{')) return;
      let event: { data?: { preview?: unknown; exc?: unknown }; info?: { name?: unknown; level?: unknown } };
      try {
        event = JSON.parse(line) as typeof event;
      } catch {
        return;
      }
      const name = event.info?.name;
      if (name === 'ConcurrencyLine') {
        clearTimeout(timer);
        timer = setTimeout(
          () => stop(`the read took longer than ${duration(run.limits.readMs)} and was stopped`),
          run.limits.readMs,
        );
      } else if (name === 'ShowNode' && typeof event.data?.preview === 'string') preview = event.data.preview;
      else if (event.info?.level === 'error') failure ??= failureName(event);
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      bytes += Buffer.byteLength(chunk);
      if (bytes > MAX_STDOUT_BYTES) {
        stop('dbt printed more than a sample holds and was stopped');
        return;
      }
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        onLine(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
      }
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        new DbtSampleError(
          err.code === 'ENOENT'
            ? `no dbt executable "${run.executable}" (set ARGUS_DBT to the project's dbt)`
            : `dbt could not be started (${err.code ?? 'error'})`,
        ),
      );
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      onLine(pending);
      pending = '';
      if (stopped) reject(new DbtSampleError(stopped));
      else if (code !== 0) reject(new DbtSampleError(`dbt show failed (exit ${code ?? '?'}: ${failure ?? 'error'})`));
      else if (preview === undefined) reject(new DbtSampleError('dbt show printed no rows'));
      else resolve(preview);
    });
  });
}
