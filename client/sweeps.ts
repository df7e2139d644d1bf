import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Client, WorkflowHandle } from '@temporalio/client';
import * as path from 'node:path';
import { sweepFailure } from './failures';
import type { SearchAttributePair } from '@temporalio/common';
import { TASK_QUEUE, sweepWorkflowId, catalogKey } from '../domain/ids';
import { EndpointConfig, parseSweepInput, type SweepConfig, type SweepInput } from '../domain/sweep';
import { formatIssues } from '../domain/issues';
import type { SweepReport } from '../domain/report';
import { SA_KEYS } from '../workflows/messages';
import type { sweepWorkflow } from '../workflows/sweep';

/** Bad usage or input detected before anything reaches Temporal; the CLI exits 2 on it. */
export class InputError extends Error {
  override name = 'InputError';
}

export function runKeyNow(d = new Date()): string {
  return d.toISOString().replace(/[:.]/g, '-');
}

/** Task queue the CLI starts sweeps on: ARGUS_TASK_QUEUE, like the worker, else `argus`. */
export function defaultTaskQueue(env: NodeJS.ProcessEnv = process.env): string {
  return env.ARGUS_TASK_QUEUE || TASK_QUEUE;
}

export function catalogLabel(input: SweepInput): string {
  const c = input.catalog;
  if (c.kind === 'demo') return 'demo';
  if (c.kind === 'postgres') return catalogKey(c.schemas?.length === 1 ? `postgres-${c.schemas[0]}` : 'postgres');
  if (c.kind === 'dbt') return catalogKey(`dbt-${c.projectDir.split('/').filter(Boolean).pop() ?? 'project'}`);
  return catalogKey(
    c.path
      .split('/')
      .pop()
      ?.replace(/\.json$/, '') ?? 'file',
  );
}

/** Where the catalog is, for the run's static details: never a secret (a connection string is named, not shown). */
function catalogWhere(c: SweepInput['catalog']): string {
  if (c.kind === 'demo') return 'bundled demo';
  if (c.kind === 'postgres')
    return `PostgreSQL from the worker's $${c.connectionEnv ?? 'ARGUS_PG_URL'}, schemas ${c.schemas?.join(', ') ?? 'all'}`;
  if (c.kind === 'dbt') return `dbt project ${c.projectDir}`;
  return c.path;
}

/**
 * Everything a start of `sweepWorkflow` carries besides its id: task queue, the input, typed search attributes
 * (ArgusPartial=false until the report says otherwise) and the static summary and details the Web UI shows.
 * Shared by one-off starts and schedule actions, so both look the same in the UI. Throws InputError on invalid input.
 */
export interface SweepStartOptions {
  taskQueue: string;
  args: [SweepInput];
  typedSearchAttributes: SearchAttributePair[];
  staticSummary: string;
  staticDetails: string;
  /** Catalog label used in workflow ids and ArgusCatalog. */
  label: string;
  config: SweepConfig;
}

/**
 * The client's one check of a sweep input, before anything is sent: InputError naming every bad field. What is
 * sent is the input as given (a schedule keeps it so; the workflow applies the defaults of its own version).
 */
export function validSweepInput(input: SweepInput): SweepConfig {
  const parsed = parseSweepInput(input);
  if (!parsed.ok) throw new InputError(`Invalid sweep input: ${parsed.message}`);
  return parsed.value;
}

export function sweepStartOptions(input: SweepInput, taskQueue: string = TASK_QUEUE): SweepStartOptions {
  const cfg = validSweepInput(input);
  const label = catalogLabel(input);
  return {
    taskQueue,
    args: [input],
    typedSearchAttributes: [
      { key: SA_KEYS.catalog, value: label },
      { key: SA_KEYS.mode, value: cfg.review },
      { key: SA_KEYS.partial, value: false },
    ],
    staticSummary: `ARGUS sweep of ${label} (${cfg.review} review${cfg.dryRun ? ', dry run' : ''})`,
    staticDetails:
      `Catalog: ${catalogWhere(input.catalog)}\n\n` +
      `Review: ${cfg.review}; agents: ${cfg.agents.join(', ')}; page size ${cfg.pageSize ?? 'auto'}; ` +
      `concurrency ${cfg.concurrency}; endpoints: ${cfg.endpoints.map((e) => e.id).join(', ') || 'none'}`,
    label,
    config: cfg,
  };
}

/** Start a sweep with a meaningful id, typed search attributes and a static summary. Validates input first. */
export async function startSweep(
  client: Client,
  input: SweepInput,
  opts: { runKey?: string; taskQueue?: string; workflowId?: string } = {},
): Promise<WorkflowHandle<typeof sweepWorkflow>> {
  const o = sweepStartOptions(input, opts.taskQueue);
  const workflowId = opts.workflowId ?? sweepWorkflowId(o.label, opts.runKey ?? runKeyNow());
  return client.workflow.start<typeof sweepWorkflow>('sweepWorkflow', {
    taskQueue: o.taskQueue,
    workflowId,
    args: o.args,
    typedSearchAttributes: o.typedSearchAttributes,
    staticSummary: o.staticSummary,
    staticDetails: o.staticDetails,
  });
}

export async function resultOf(handle: WorkflowHandle<typeof sweepWorkflow>): Promise<SweepReport> {
  try {
    return await handle.result();
  } catch (e) {
    throw sweepFailure(handle.workflowId, e);
  }
}

/** Options the CLI turns into a sweep input (`sweep start`, `schedule create`). */
export interface SweepInputOptions {
  catalog?: string;
  /** With `--catalog postgres`: schemas to sweep (comma-separated) and the worker's variable holding the URL. */
  schemas?: string;
  connectionEnv?: string;
  /** With `--catalog dbt`: the project folder (default: this directory). */
  projectDir?: string;
  inputFile?: string;
  endpointsFile?: string;
  review?: string;
  dryRun?: boolean;
  /** Judge every entity, whatever the memory of earlier sweeps says (`"incremental": false`). */
  full?: boolean;
  pageSize?: string;
  concurrency?: string;
}

function readJson(file: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`cannot read ${what} ${file}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InputError(`${what} ${file} is not JSON: ${(e as Error).message}`);
  }
}

// Names that suggest someone pasted a secret instead of naming the variable that holds it.
const SECRET_FIELD = /^(api[_-]?key|key|token|secret|authorization|password)$/i;

/**
 * Endpoint configs from a JSON file: an array of `{id, baseUrl, model, apiKeyEnv?, ...}`. `apiKeyEnv` is the NAME
 * of the worker's environment variable holding the key; a file carrying a key itself is refused.
 */
/**
 * Endpoint configs from a JSON file (an array, or `{"endpoints": [...]}`), validated; a field that looks like a
 * key is refused. Returns what the file says, without defaults, so a sweep's history shows the person's file.
 */
export function readEndpointsFile(file: string): EndpointConfig[] {
  const doc = readJson(file, 'endpoints file');
  const raw = Array.isArray(doc) ? doc : (doc as { endpoints?: unknown } | null)?.endpoints;
  if (!Array.isArray(raw))
    throw new InputError(`endpoints file ${file} must hold a JSON array of endpoint configs (or {"endpoints": [...]})`);
  raw.forEach((e, i) => {
    if (e && typeof e === 'object')
      for (const k of Object.keys(e as object))
        if (SECRET_FIELD.test(k))
          throw new InputError(
            `endpoints file ${file}: endpoint ${i} has a "${k}" field. Never put a key in a sweep input: ` +
              'set apiKeyEnv to the NAME of the worker environment variable that holds it (e.g. "OPENAI_API_KEY").',
          );
  });
  const r = z.array(EndpointConfig).safeParse(raw);
  if (!r.success) throw new InputError(`endpoints file ${file}: ` + formatIssues(r.error, { root: '(file)' }));
  // Keep what the person wrote (not the defaults) so the history shows their file.
  return raw as EndpointConfig[];
}

/**
 * A relative catalog path means the person's current directory, not the worker's: resolve it here, before the
 * sweep starts (the sweep input refuses relative paths).
 */
export function withAbsoluteCatalogPath<T extends Record<string, unknown>>(input: T, cwd = process.cwd()): T {
  const c = input.catalog as Record<string, unknown> | undefined;
  const key = c?.kind === 'file' ? 'path' : c?.kind === 'dbt' ? 'projectDir' : undefined;
  const p = key && c?.[key];
  if (key && typeof p === 'string' && p && !path.isAbsolute(p))
    return { ...input, catalog: { ...c, [key]: path.resolve(cwd, p) } };
  return input;
}

function positiveInt(v: string, flag: string): number {
  if (!/^\d+$/.test(v)) throw new InputError(`${flag} must be a whole number, got "${v}"`);
  return Number(v);
}

/** The sweep input the CLI options describe, validated (InputError naming every bad field otherwise). */
export function sweepInputFromOptions(opts: SweepInputOptions): SweepInput {
  let input: Record<string, unknown>;
  if (opts.inputFile) {
    const raw = readJson(opts.inputFile, 'input file');
    if (!raw || typeof raw !== 'object' || Array.isArray(raw))
      throw new InputError(`input file ${opts.inputFile} must hold a JSON object (the sweep input)`);
    input = raw as Record<string, unknown>;
  } else
    input = {
      catalog:
        !opts.catalog || opts.catalog === 'demo'
          ? { kind: 'demo' }
          : opts.catalog === 'postgres'
            ? {
                kind: 'postgres',
                ...(opts.connectionEnv ? { connectionEnv: opts.connectionEnv } : {}),
                ...(opts.schemas
                  ? {
                      schemas: opts.schemas
                        .split(',')
                        .map((x) => x.trim())
                        .filter(Boolean),
                    }
                  : {}),
              }
            : opts.catalog === 'dbt'
              ? { kind: 'dbt', projectDir: opts.projectDir ?? '.' }
              : { kind: 'file', path: opts.catalog },
    };
  if ((opts.schemas || opts.connectionEnv) && (input.catalog as { kind?: string }).kind !== 'postgres')
    throw new InputError('--schemas and --connection-env go with --catalog postgres');
  if (opts.projectDir && (input.catalog as { kind?: string }).kind !== 'dbt')
    throw new InputError('--project-dir goes with --catalog dbt');
  input = withAbsoluteCatalogPath(input);
  if (opts.endpointsFile) input.endpoints = readEndpointsFile(opts.endpointsFile);
  if (opts.review) input.review = opts.review;
  if (opts.dryRun) input.dryRun = true;
  if (opts.full) input.incremental = false;
  if (opts.pageSize) input.pageSize = positiveInt(opts.pageSize, '--page-size');
  if (opts.concurrency) input.concurrency = positiveInt(opts.concurrency, '--concurrency');
  // Validated once, where it is sent: sweepStartOptions (start, schedules) and validSweepInput (plan).
  return input as SweepInput;
}
