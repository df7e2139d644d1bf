import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { z } from 'zod';
import { CatalogEntity, EntityKind, PiiCategory } from '../domain/catalog';
import { proposalId } from '../domain/digest';
import { LineageFinding, type AgentName, type Outcome, type Proposal, type ProposalChange } from '../domain/proposal';
import { EndpointConfig } from '../domain/sweep';
import { createCatalogContext, type CatalogContext } from '../judgment/catalog-context';
import { tablesReadBySql } from '../judgment/sql/tables';
import { mechanicalReview } from '../judgment/gate/mechanical-gate';
import { reviewBatchWithModel, reviewWithModel } from '../activities/model/model-review';
import type { EndpointSpec } from '../llm/client';
import { ProviderError } from '../llm/errors';
import { Pacer } from '../llm/pacer';
import { readEndpointsFile } from '../client/sweeps';
import { runScript } from './run-script';

/**
 * `argus eval arbiter`: runs the Arbiter's own review code (mechanical gate, then in model mode one model
 * call per case, or per batch of cases) over a file of labelled proposals and counts false approvals, false
 * rejections and errors separately. Never one accuracy figure: the two error directions have opposite causes.
 */

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;
export const DEFAULT_MAX_FALSE_REJECTION_RATE = 0.1;
/** Attempts per model call: Temporal retries the Arbiter's transient failures, so the eval does too. */
export const DEFAULT_ATTEMPTS = 3;
/** Cases per model call at most (`--batch`): the CLI's bound, a few prompts' worth of evidence. */
export const MAX_BATCH = 100;

// ---------------------------------------------------------------------------------------------
// The case file

/**
 * A column exactly as the labelled public-schemas format writes one: `nullable` and `primary_key` optional, and its
 * other fields (labels such as `pii`, `category`, `note`, `expression`) accepted and not shown to the reviewer.
 */
const CaseColumn = z.object({
  name: z.string().min(1),
  type: z.string().min(1),
  nullable: z.boolean().default(true),
  primary_key: z.boolean().default(false),
  foreign_key: z.string().min(1).optional(),
  description: z.string().optional(),
});

/** An entity: a table of the public-schemas format unchanged (`database` optional), or one with SQL. */
const CaseEntity = z.object({
  database: z.string().min(1).default('eval'),
  name: z.string().min(1).max(300),
  kind: EntityKind,
  description: z.string().optional(),
  columns: z.array(CaseColumn).min(1),
  upstream: z.array(z.string().min(1)).default([]),
  sql: z.string().optional(),
});

const CaseProposal = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('description'),
    target: z.enum(['table', 'column']),
    column: z.string().min(1).optional(),
    text: z.string().min(1).max(2000),
  }),
  // Any category: one outside ARGUS's taxonomy is a proposal for the reviewer to reject, not a broken file.
  z.strictObject({ kind: z.literal('pii_tag'), column: z.string().min(1), category: z.string().min(1).max(64) }),
  z.strictObject({ kind: z.literal('lineage_flag'), finding: LineageFinding, upstream: z.string().min(1) }),
]);

export const ArbiterCase = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, . _ - (at most 64)'),
  expected: z.enum(['approve', 'reject']),
  /** Why the expectation holds: for the people who maintain the file, never shown to a reviewer. */
  note: z.string().optional(),
  entity: CaseEntity,
  proposal: CaseProposal,
  /** Entity ids that do NOT exist in the catalog (a dangling upstream); everything else the case names does. */
  missingEntities: z.array(z.string().min(1)).optional(),
});
export type ArbiterCase = z.infer<typeof ArbiterCase>;

export const ArbiterCaseFile = z
  .strictObject({ description: z.string().optional(), cases: z.array(ArbiterCase).min(1) })
  .superRefine((file, ctx) => {
    const seen = new Set<string>();
    file.cases.forEach((c, i) => {
      if (seen.has(c.id))
        ctx.addIssue({ code: 'custom', path: ['cases', i, 'id'], message: `duplicate case id "${c.id}"` });
      seen.add(c.id);
      if (c.missingEntities?.includes(c.entity.name))
        ctx.addIssue({
          code: 'custom',
          path: ['cases', i, 'missingEntities'],
          message: `the case's own entity "${c.entity.name}" cannot be missing`,
        });
    });
  });
export type ArbiterCaseFile = z.infer<typeof ArbiterCaseFile>;

/** A case file that cannot be read or does not match the format; the message names the field. */
export class CaseFileError extends Error {
  override readonly name = 'CaseFileError';
}

/** Validate a parsed case file; throws CaseFileError naming every bad field (`cases[3] (c04).entity.columns[0].type`). */
export function parseCaseFile(raw: unknown, source = 'case file'): ArbiterCaseFile {
  const r = ArbiterCaseFile.safeParse(raw);
  if (r.success) return r.data;
  const rawCases = (raw as { cases?: unknown })?.cases;
  const lines = r.error.issues.slice(0, 20).map((issue) => {
    const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    let where = '';
    path.forEach((p, i) => {
      if (typeof p === 'number') where += `[${p}]`;
      else where += where === '' ? p : `.${p}`;
      if (i === 1 && path[0] === 'cases' && typeof p === 'number' && Array.isArray(rawCases)) {
        const id = (rawCases[p] as { id?: unknown } | undefined)?.id;
        if (typeof id === 'string') where += ` (${id})`;
      }
    });
    return `  ${where || '(file)'}: ${issue.message}`;
  });
  const more = r.error.issues.length > 20 ? `\n  … and ${r.error.issues.length - 20} more` : '';
  throw new CaseFileError(`${source} is not a valid Arbiter case file:\n${lines.join('\n')}${more}`);
}

/** Read and validate a case file from disk. Throws CaseFileError. */
export function loadCaseFile(path: string): ArbiterCaseFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new CaseFileError(`cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new CaseFileError(`${path} is not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  return parseCaseFile(raw, path);
}

/** The case's entity as a catalog entity; its id is its name. */
export function caseEntity(c: ArbiterCase): CatalogEntity {
  const e = c.entity;
  return CatalogEntity.parse({
    id: e.name,
    database: e.database,
    name: e.name,
    kind: e.kind,
    ...(e.description !== undefined ? { description: e.description } : {}),
    columns: e.columns.map((c) => ({
      name: c.name,
      type: c.type,
      nullable: c.nullable,
      primary_key: c.primary_key,
      ...(c.foreign_key !== undefined ? { foreign_key: c.foreign_key } : {}),
      ...(c.description !== undefined ? { description: c.description } : {}),
    })),
    upstream: e.upstream,
    ...(e.sql !== undefined ? { sql: e.sql } : {}),
  });
}

/**
 * The catalog a case lives in: the entity, its recorded upstream, the tables its SQL reads and its
 * foreign-key targets all exist, except those the case lists in `missingEntities`.
 */
export function caseContext(c: ArbiterCase, entity: CatalogEntity): CatalogContext {
  const missing = new Set(c.missingEntities ?? []);
  const ids = [entity.id, ...entity.upstream];
  if (entity.sql !== undefined) ids.push(...tablesReadBySql(entity.sql));
  for (const col of entity.columns) {
    const table = col.foreign_key?.split('.').slice(0, -1).join('.');
    if (table) ids.push(table);
  }
  return createCatalogContext(ids.filter((id) => !missing.has(id)));
}

const AGENT: Record<ProposalChange['kind'], AgentName> = {
  description: 'description-drafter',
  pii_tag: 'pii-classifier',
  lineage_flag: 'lineage-checker',
  description_removal: 'description-drafter',
};

/** The case's proposal as the Arbiter receives it. PII tags carry confidence 0.9 and a short explanation. */
export function caseProposal(c: ArbiterCase, entity: CatalogEntity): Proposal {
  const p = c.proposal;
  const change: ProposalChange =
    p.kind === 'pii_tag'
      ? {
          ...p,
          // Unchecked on purpose: a category outside the taxonomy goes to the reviewer, which must reject it.
          category: p.category as PiiCategory,
          confidence: 0.9,
          explanation: `Column ${p.column} of ${entity.name} holds ${p.category.replace(/_/g, ' ')}.`.slice(0, 300),
        }
      : p;
  return {
    id: proposalId('argus-eval', entity.id, change),
    entityId: entity.id,
    agent: AGENT[change.kind],
    change,
    evidence: [`eval case ${c.id}`],
  };
}

// ---------------------------------------------------------------------------------------------
// Evaluation

export type EvalMode = 'mechanical' | 'model';
export type CaseDecision = 'approve' | 'reject' | 'error';
export type CaseVerdict = 'OK' | 'FALSE APPROVAL' | 'FALSE REJECTION' | 'ERROR';

export interface CaseResult {
  id: string;
  expected: 'approve' | 'reject';
  decision: CaseDecision;
  reason: string;
  verdict: CaseVerdict;
  /** `mechanical-gate` or `model:<endpoint id>`: who made the final decision (or failed to). */
  reviewer: string;
  /** The gate rule that decided, when the gate decided. */
  rule?: string;
}

export interface EvalTotals {
  cases: number;
  falseApprovals: number;
  falseRejections: number;
  errors: number;
  ok: number;
  expectedApprove: number;
  expectedReject: number;
}

export interface EvalResult {
  mode: EvalMode;
  endpoint: { id: string; model: string } | null;
  maxFalseRejectionRate: number;
  totals: EvalTotals;
  cases: CaseResult[];
  /** No false approval, and false rejections and errors each at most maxFalseRejectionRate of the cases. */
  passed: boolean;
  /** Why it did not pass, one line each; empty when it passed. */
  failures: string[];
}

export interface EvalOptions {
  mode: EvalMode;
  /** Required in model mode. */
  endpoint?: EndpointSpec;
  env?: NodeJS.ProcessEnv;
  /** Default 0.1: at most 1 case in 10 may be falsely rejected (and, separately, at most 1 in 10 may error). */
  maxFalseRejectionRate?: number;
  /** Attempts per model call on transient failures (burst, server, timeout, network, malformed output). Default 3. */
  attempts?: number;
  /**
   * Model mode: cases reviewed per call (reviewBatchWithModel), default 1 (reviewWithModel, one case a call).
   * A case the batched answer leaves without a valid verdict is retried alone.
   */
  batch?: number;
  signal?: AbortSignal;
  /** Called after each case, e.g. for progress on stderr. */
  onCase?: (r: CaseResult, index: number, total: number) => void;
  /** Waits between attempts; tests replace it. */
  sleep?: (ms: number) => Promise<void>;
}

/** A usage error: bad options (exit 2). */
export class EvalUsageError extends Error {
  override readonly name = 'EvalUsageError';
}

const TRANSIENT = new Set(['burst', 'server', 'timeout', 'network', 'malformed_output']);
/** After these, no later call to the endpoint can succeed in this run: stop calling it. */
const TERMINAL = new Set(['exhausted', 'auth']);
const MAX_RETRY_WAIT_MS = 30_000;

function verdictOf(expected: 'approve' | 'reject', decision: CaseDecision): CaseVerdict {
  if (decision === 'error') return 'ERROR';
  if (decision === expected) return 'OK';
  return decision === 'approve' ? 'FALSE APPROVAL' : 'FALSE REJECTION';
}

function oneLine(text: string, max = 500): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Review every case with the Arbiter's code: mechanicalReview first (final in mechanical mode, and final
 * when it rejects), then in model mode reviewWithModel with one proposal per call, or with `batch` > 1
 * reviewBatchWithModel on up to that many cases a call (distinct entities, in file order) and each case it
 * leaves without a verdict alone. A call that fails after its attempts, or gives no verdict, is decision
 * `error`: never an approval. Calls run one at a time.
 */
export async function evaluateArbiter(
  cases: readonly ArbiterCase[] | ArbiterCaseFile,
  opts: EvalOptions,
): Promise<EvalResult> {
  const list = Array.isArray(cases) ? (cases as readonly ArbiterCase[]) : (cases as ArbiterCaseFile).cases;
  const threshold = opts.maxFalseRejectionRate ?? DEFAULT_MAX_FALSE_REJECTION_RATE;
  if (!(threshold >= 0 && threshold <= 1)) throw new EvalUsageError('maxFalseRejectionRate must be between 0 and 1');
  const attempts = opts.attempts ?? DEFAULT_ATTEMPTS;
  if (!Number.isInteger(attempts) || attempts < 1) throw new EvalUsageError('attempts must be a whole number >= 1');
  const batch = opts.batch ?? 1;
  if (!Number.isInteger(batch) || batch < 1) throw new EvalUsageError('batch must be a whole number >= 1');
  const endpoint = opts.endpoint;
  if (opts.mode === 'model' && !endpoint) throw new EvalUsageError('model mode needs an endpoint');
  const sleep = opts.sleep ?? defaultSleep;
  const pacer = new Pacer();
  const run: ModelRun = { endpoint: endpoint!, opts, attempts, pacer, sleep, stopped: null };

  const prepared: PreparedCase[] = list.map((c) => {
    const entity = caseEntity(c);
    const ctx = caseContext(c, entity);
    const proposal = caseProposal(c, entity);
    const gate = mechanicalReview(proposal, entity, ctx);
    return { c, entity, ctx, proposal, gate, toModel: opts.mode === 'model' && gate.decision !== 'rejected' };
  });
  const byModel = new Map<number, ModelDecision>();

  const results: CaseResult[] = [];
  for (const [index, p] of prepared.entries()) {
    const { c, gate } = p;
    let decision: CaseDecision;
    let reason: string;
    let reviewer = 'mechanical-gate';
    let rule: string | undefined = gate.rule;
    if (!p.toModel) {
      decision = gate.decision === 'approved' ? 'approve' : 'reject';
      reason = gate.reason;
    } else {
      reviewer = `model:${run.endpoint.id}`;
      rule = undefined;
      if (!byModel.has(index)) {
        if (run.stopped !== null) byModel.set(index, notCalled(run));
        else if (batch <= 1) byModel.set(index, await reviewOne(p, run));
        else await reviewBatch(nextBatch(prepared, index, batch, byModel), prepared, run, byModel);
      }
      ({ decision, reason } = byModel.get(index)!);
    }
    const result: CaseResult = {
      id: c.id,
      expected: c.expected,
      decision,
      reason: oneLine(reason),
      verdict: verdictOf(c.expected, decision),
      reviewer,
      ...(rule !== undefined ? { rule } : {}),
    };
    results.push(result);
    opts.onCase?.(result, results.length, list.length);
  }

  const count = (v: CaseVerdict) => results.filter((r) => r.verdict === v).length;
  const totals: EvalTotals = {
    cases: results.length,
    falseApprovals: count('FALSE APPROVAL'),
    falseRejections: count('FALSE REJECTION'),
    errors: count('ERROR'),
    ok: count('OK'),
    expectedApprove: results.filter((r) => r.expected === 'approve').length,
    expectedReject: results.filter((r) => r.expected === 'reject').length,
  };
  const failures: string[] = [];
  const pct = (n: number) => `${((100 * n) / Math.max(1, totals.cases)).toFixed(1)}%`;
  const limit = `${(100 * threshold).toFixed(1)}%`;
  if (totals.falseApprovals > 0)
    failures.push(`${totals.falseApprovals} false approval(s): a fabrication or a wrong tag would be written`);
  if (totals.falseRejections > threshold * totals.cases)
    failures.push(
      `false rejections ${totals.falseRejections}/${totals.cases} (${pct(totals.falseRejections)}) exceed ${limit}`,
    );
  if (totals.errors > threshold * totals.cases)
    failures.push(`errors ${totals.errors}/${totals.cases} (${pct(totals.errors)}) exceed ${limit}`);
  return {
    mode: opts.mode,
    endpoint: endpoint ? { id: endpoint.id, model: endpoint.model } : null,
    maxFalseRejectionRate: threshold,
    totals,
    cases: results,
    passed: failures.length === 0,
    failures,
  };
}

interface PreparedCase {
  c: ArbiterCase;
  entity: CatalogEntity;
  ctx: CatalogContext;
  proposal: Proposal;
  gate: ReturnType<typeof mechanicalReview>;
  /** Model mode and the gate let it through: the model decides. */
  toModel: boolean;
}

type ModelDecision = { decision: CaseDecision; reason: string };

/** What every model call of one evaluation shares; `stopped` says why no later call may be made. */
interface ModelRun {
  endpoint: EndpointSpec;
  opts: EvalOptions;
  attempts: number;
  pacer: Pacer;
  sleep: (ms: number) => Promise<void>;
  stopped: string | null;
}

const notCalled = (run: ModelRun): ModelDecision => ({
  decision: 'error',
  reason: `not reviewed: ${run.stopped} (no call made)`,
});

/**
 * Up to `size` undecided model cases from `from` on, in file order, whose entities differ: the entity id is the
 * key of a batch, and two cases may describe different tables under one name.
 */
function nextBatch(
  prepared: PreparedCase[],
  from: number,
  size: number,
  decided: ReadonlyMap<number, ModelDecision>,
): number[] {
  const picked: number[] = [];
  const ids = new Set<string>();
  for (let i = from; i < prepared.length && picked.length < size; i++) {
    const p = prepared[i]!;
    if (!p.toModel || decided.has(i) || ids.has(p.entity.id)) continue;
    picked.push(i);
    ids.add(p.entity.id);
  }
  return picked;
}

/** Attempts of one call: its result, or the decision `error` (and whether the endpoint is gone for good). */
async function withAttempts<T>(
  run: ModelRun,
  call: () => Promise<T>,
): Promise<{ ok: T } | { failed: ModelDecision; terminal?: string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return { ok: await call() };
    } catch (e) {
      if (run.opts.signal?.aborted) throw e;
      const message = e instanceof Error ? e.message : String(e);
      if (e instanceof ProviderError && TERMINAL.has(e.kind))
        return { failed: { decision: 'error', reason: message }, terminal: e.kind };
      if (!(e instanceof ProviderError) || !TRANSIENT.has(e.kind) || attempt >= run.attempts)
        return {
          failed: { decision: 'error', reason: attempt > 1 ? `${message} (after ${attempt} attempts)` : message },
        };
      const wait = e.kind === 'burst' && e.retryAfterSeconds !== null ? e.retryAfterSeconds * 1000 : 1000 * attempt;
      await run.sleep(Math.min(MAX_RETRY_WAIT_MS, Math.max(0, wait)));
    }
  }
}

function stopOn(run: ModelRun, terminal: string | undefined): void {
  if (terminal) run.stopped = `endpoint ${run.endpoint.id} refused an earlier call (${terminal})`;
}

const asDecision = (o: Outcome | undefined, caseId: string): ModelDecision =>
  o?.decision === 'approved'
    ? { decision: 'approve', reason: o.reason }
    : o?.decision === 'rejected'
      ? { decision: 'reject', reason: o.reason }
      : { decision: 'error', reason: `no verdict for case ${caseId}` };

async function reviewOne(p: PreparedCase, run: ModelRun): Promise<ModelDecision> {
  const r = await withAttempts(run, () =>
    reviewWithModel({
      entity: p.entity,
      ctx: p.ctx,
      proposals: [{ id: p.proposal.id, change: p.proposal.change }],
      endpoint: run.endpoint,
      env: run.opts.env,
      pacer: run.pacer,
      signal: run.opts.signal,
    }),
  );
  if ('failed' in r) {
    stopOn(run, r.terminal);
    return r.failed;
  }
  return asDecision(
    r.ok.find((x) => x.proposalId === p.proposal.id),
    p.c.id,
  );
}

/** One batched call for the cases at `indexes`, then each case it left without a verdict alone. */
async function reviewBatch(
  indexes: number[],
  prepared: PreparedCase[],
  run: ModelRun,
  into: Map<number, ModelDecision>,
): Promise<void> {
  const cases = indexes.map((i) => [i, prepared[i]!] as const);
  const r = await withAttempts(run, () =>
    reviewBatchWithModel({
      items: cases.map(([, p]) => ({ entity: p.entity, ctx: p.ctx })),
      ctx: cases[0]![1].ctx,
      proposals: cases.map(([, p]) => ({ id: p.proposal.id, entityId: p.entity.id, change: p.proposal.change })),
      endpoint: run.endpoint,
      env: run.opts.env,
      pacer: run.pacer,
      signal: run.opts.signal,
    }),
  );
  if ('failed' in r) {
    stopOn(run, r.terminal);
    for (const [i] of cases) into.set(i, r.failed);
    return;
  }
  const missing = new Set(r.ok.missing);
  for (const [i, p] of cases) {
    if (!missing.has(p.entity.id))
      into.set(
        i,
        asDecision(
          r.ok.outcomes.find((o) => o.proposalId === p.proposal.id),
          p.c.id,
        ),
      );
    else into.set(i, run.stopped !== null ? notCalled(run) : await reviewOne(p, run));
  }
}

// ---------------------------------------------------------------------------------------------
// Output

function grid(rows: string[][]): string {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The readable report: one row per case, then the totals and what failed. */
export function renderEvalText(r: EvalResult, opts: { source?: string; reasonWidth?: number } = {}): string {
  const width = opts.reasonWidth ?? 110;
  const who = r.endpoint ? `, endpoint ${r.endpoint.id} (${r.endpoint.model})` : '';
  const out: string[] = [];
  out.push(`Arbiter eval${opts.source ? ` of ${opts.source}` : ''}: mode ${r.mode}${who}`);
  out.push('');
  out.push(
    grid([
      ['id', 'expected', 'decision', 'verdict', 'by', 'reason'],
      ...r.cases.map((c) => [
        c.id,
        c.expected,
        c.decision,
        c.verdict,
        c.reviewer === 'mechanical-gate' ? 'gate' : 'model',
        oneLine(c.reason, width),
      ]),
    ]),
  );
  const t = r.totals;
  const rate = (n: number) => `${((100 * n) / Math.max(1, t.cases)).toFixed(1)}%`;
  out.push('');
  out.push(
    `${t.cases} cases (${t.expectedApprove} expect approve, ${t.expectedReject} expect reject): ` +
      `${t.ok} OK, ${t.falseApprovals} false approvals, ${t.falseRejections} false rejections (${rate(t.falseRejections)}), ` +
      `${t.errors} errors (${rate(t.errors)}); limit ${(100 * r.maxFalseRejectionRate).toFixed(1)}%`,
  );
  out.push(r.passed ? 'PASS' : `FAIL: ${r.failures.join('; ')}`);
  return out.join('\n');
}

/** The JSON report: `totals` and `cases` as documented, plus mode, endpoint, threshold and the verdict. */
export function evalJson(r: EvalResult): object {
  return {
    mode: r.mode,
    endpoint: r.endpoint,
    maxFalseRejectionRate: r.maxFalseRejectionRate,
    passed: r.passed,
    failures: r.failures,
    totals: r.totals,
    cases: r.cases.map((c) => ({
      id: c.id,
      expected: c.expected,
      decision: c.decision,
      reason: c.reason,
      verdict: c.verdict,
      reviewer: c.reviewer,
      ...(c.rule !== undefined ? { rule: c.rule } : {}),
    })),
  };
}

// ---------------------------------------------------------------------------------------------
// Command line

/** Where the command writes and how it ends; tests pass their own. */
export interface EvalIo {
  out(text: string): void;
  err(text: string): void;
  /** The command's result code (0 pass, 1 fail, 2 usage). */
  setExitCode(code: number): void;
  /** Commander's own exits (help, usage errors): must not return. */
  exit(code: number): never;
}

const processIo: EvalIo = {
  out: (t) => void process.stdout.write(t),
  err: (t) => void process.stderr.write(t),
  // exitCode, not process.exit(): exiting at once would cut a large report written to a pipe.
  setExitCode: (code) => {
    process.exitCode = code;
  },
  exit: (code) => process.exit(code),
};

interface CliOptions {
  cases: string;
  mode?: EvalMode;
  endpoint?: string;
  endpointsFile?: string;
  baseUrl?: string;
  model?: string;
  apiKeyEnv?: string;
  structuredOutput?: 'json_schema' | 'json_object';
  maxFalseRejectionRate: string;
  attempts: string;
  batch: string;
  json?: boolean;
}

/** The endpoints of a file, read by the CLI's own reader, with defaults applied; usage errors exit 2. */
function endpointsOf(path: string): EndpointConfig[] {
  let all: EndpointConfig[];
  try {
    all = z.array(EndpointConfig).parse(readEndpointsFile(path));
  } catch (e) {
    throw new EvalUsageError(e instanceof Error ? e.message : String(e));
  }
  if (all.length === 0) throw new EvalUsageError(`${path} holds no endpoints`);
  return all;
}

/** The endpoint the options name, or null when they name none. Throws EvalUsageError. */
export function endpointFromOptions(
  o: Pick<CliOptions, 'endpoint' | 'endpointsFile' | 'baseUrl' | 'model' | 'apiKeyEnv' | 'structuredOutput'>,
): EndpointConfig | null {
  const inline = o.baseUrl !== undefined || o.model !== undefined || o.apiKeyEnv !== undefined;
  if (o.endpointsFile !== undefined && inline)
    throw new EvalUsageError('give either --endpoints-file or --base-url/--model/--api-key-env, not both');
  if (o.endpointsFile !== undefined) {
    const all = endpointsOf(o.endpointsFile);
    const ids = all.map((e) => e.id).join(', ');
    if (o.endpoint === undefined) {
      if (all.length === 1) return all[0]!;
      throw new EvalUsageError(`${o.endpointsFile} holds ${all.length} endpoints; pick one with --endpoint (${ids})`);
    }
    const hit = all.find((e) => e.id === o.endpoint);
    if (!hit) throw new EvalUsageError(`no endpoint "${o.endpoint}" in ${o.endpointsFile} (${ids})`);
    return o.structuredOutput ? { ...hit, structuredOutput: o.structuredOutput } : hit;
  }
  if (inline) {
    if (o.baseUrl === undefined || o.model === undefined)
      throw new EvalUsageError('--base-url and --model go together (and --api-key-env when the endpoint needs a key)');
    const r = EndpointConfig.safeParse({
      id: o.endpoint ?? 'cli',
      baseUrl: o.baseUrl,
      model: o.model,
      ...(o.apiKeyEnv !== undefined ? { apiKeyEnv: o.apiKeyEnv } : {}),
      ...(o.structuredOutput !== undefined ? { structuredOutput: o.structuredOutput } : {}),
    });
    if (!r.success) {
      const flag: Record<string, string> = {
        id: '--endpoint',
        baseUrl: '--base-url',
        model: '--model',
        apiKeyEnv: '--api-key-env',
      };
      throw new EvalUsageError(
        r.error.issues.map((i) => `${flag[String(i.path[0])] ?? String(i.path[0])}: ${i.message}`).join('; '),
      );
    }
    return r.data;
  }
  if (o.endpoint !== undefined)
    throw new EvalUsageError('--endpoint picks an endpoint of --endpoints-file, or names --base-url/--model');
  return null;
}

async function runEval(o: CliOptions, io: EvalIo): Promise<number> {
  try {
    const threshold = Number(o.maxFalseRejectionRate);
    if (o.maxFalseRejectionRate.trim() === '' || !(threshold >= 0 && threshold <= 1))
      throw new EvalUsageError(
        `--max-false-rejection-rate must be a number from 0 to 1, not "${o.maxFalseRejectionRate}"`,
      );
    const attempts = Number(o.attempts);
    if (!Number.isInteger(attempts) || attempts < 1 || attempts > 10)
      throw new EvalUsageError(`--attempts must be a whole number from 1 to 10, not "${o.attempts}"`);
    const batch = Number(o.batch);
    if (!/^\d+$/.test(o.batch) || batch < 1 || batch > MAX_BATCH)
      throw new EvalUsageError(`--batch must be a whole number from 1 to ${MAX_BATCH}, not "${o.batch}"`);
    const endpoint = endpointFromOptions(o);
    const mode: EvalMode = o.mode ?? (endpoint ? 'model' : 'mechanical');
    if (mode === 'model' && !endpoint)
      throw new EvalUsageError(
        '--mode model needs an endpoint: --endpoints-file [--endpoint <id>] or --base-url/--model',
      );
    if (mode === 'mechanical' && endpoint) io.err(`eval arbiter: mechanical mode; endpoint ${endpoint.id} not used\n`);
    const file = loadCaseFile(o.cases);
    const result = await evaluateArbiter(file, {
      mode,
      ...(mode === 'model' && endpoint ? { endpoint } : {}),
      maxFalseRejectionRate: threshold,
      attempts,
      batch,
    });
    io.out(
      o.json ? `${JSON.stringify(evalJson(result), null, 2)}\n` : `${renderEvalText(result, { source: o.cases })}\n`,
    );
    return result.passed ? EXIT.ok : EXIT.failed;
  } catch (e) {
    if (e instanceof EvalUsageError || e instanceof CaseFileError) {
      io.err(`eval arbiter: ${e.message}\n`);
      return EXIT.usage;
    }
    throw e;
  }
}

/**
 * Add `eval arbiter` to a commander program (reusing an existing `eval` command). Exit codes through
 * `io`: 0 pass, 1 a false approval or a rate over the limit, 2 bad usage or case file.
 */
export function registerEvalCommand(program: Command, io: EvalIo = processIo): void {
  const evalCmd =
    program.commands.find((c) => c.name() === 'eval') ??
    program.command('eval').description('Measure the quality of ARGUS components on labelled cases.');
  evalCmd
    .command('arbiter')
    .description(
      "Run the Arbiter's review (mechanical gate, then a model in model mode) over labelled cases and count " +
        'false approvals, false rejections and errors separately.',
    )
    .requiredOption('--cases <file>', 'JSON case file (see eval/README.md), e.g. eval/arbiter-cases.json')
    .addOption(
      new Option(
        '--mode <mode>',
        'mechanical: the gate decides; model: the gate, then the model (default: model when an endpoint is given)',
      ).choices(['mechanical', 'model']),
    )
    .option('--endpoint <id>', 'the endpoint of --endpoints-file to use, or the id of --base-url/--model')
    .option(
      '--endpoints-file <json>',
      'JSON array of endpoints (the sweep input `endpoints` shape), or {"endpoints": [...]}',
    )
    .option('--base-url <url>', 'OpenAI-compatible base URL, e.g. https://api.openai.com/v1')
    .option('--model <name>', 'model name at --base-url')
    .option('--api-key-env <NAME>', 'environment variable holding the key (omit for a keyless local endpoint)')
    .addOption(
      new Option('--structured-output <kind>', 'response_format the endpoint accepts').choices([
        'json_schema',
        'json_object',
      ]),
    )
    .option(
      '--max-false-rejection-rate <rate>',
      'fail when false rejections (or, separately, errors) exceed this share of the cases',
      String(DEFAULT_MAX_FALSE_REJECTION_RATE),
    )
    .option('--attempts <n>', 'attempts per model call on transient failures', String(DEFAULT_ATTEMPTS))
    .option(
      '--batch <n>',
      'model mode: cases reviewed per model call (a case left without a verdict is retried alone)',
      '1',
    )
    .option('--json', 'print one JSON object on stdout')
    .configureOutput({ writeOut: (t) => io.out(t), writeErr: (t) => io.err(t) })
    .exitOverride((e: CommanderError) => io.exit(e.exitCode === 0 ? EXIT.ok : EXIT.usage))
    .action(async (o: CliOptions) => {
      io.setExitCode(await runEval(o, io));
    });
}

class ExitSignal extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/**
 * Run `eval arbiter` with these arguments (without the words `eval arbiter`); resolves to the exit code.
 * Output goes to `out`/`err` (default stdout/stderr).
 */
export async function main(
  argv: readonly string[],
  sinks: { out?: (t: string) => void; err?: (t: string) => void } = {},
): Promise<number> {
  let code: number = EXIT.ok;
  const io: EvalIo = {
    out: sinks.out ?? processIo.out,
    err: sinks.err ?? processIo.err,
    setExitCode: (c) => {
      code = c;
    },
    exit: (c) => {
      throw new ExitSignal(c);
    },
  };
  const program = new Command('argus').exitOverride();
  program.configureOutput({ writeOut: io.out, writeErr: io.err });
  registerEvalCommand(program, io);
  try {
    await program.parseAsync(['eval', 'arbiter', ...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof ExitSignal) return e.code;
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    throw e;
  }
  return code;
}

if (require.main === module) runScript('eval arbiter', main);
