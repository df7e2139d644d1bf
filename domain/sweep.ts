import { z } from 'zod';
import { formatIssues, issueFields } from './issues';
import { AgentName, ProposalChange, ProposalKind } from './proposal';
import { parseDuration, readDuration } from './durations';

/** POSIX `/…` or Windows `C:\\…` / `\\\\server\\…` (domain/ is workflow code: no node:path here). */
export function isAbsolutePath(p: string): boolean {
  return p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\');
}

/**
 * A path in a sweep input: absolute, since a worker resolving a relative one in its own working directory could
 * repair the wrong file (the `argus` CLI resolves relative paths against the user's directory before it starts).
 */
const AbsolutePath = z
  .string()
  .min(1)
  .max(4096)
  .refine(isAbsolutePath, 'must be an absolute path (the argus CLI resolves relative ones for you)');

/** Where the catalog comes from. `demo` is the bundled warehouse, copied into the state folder on first use. */
export const CatalogRef = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('demo') }).strict(),
  z
    .object({
      kind: z.literal('file'),
      path: AbsolutePath,
    })
    .strict(),
  z
    .object({
      kind: z.literal('postgres'),
      /**
       * The worker's environment variable that holds the connection string: like API keys, the URL itself
       * never reaches Temporal.
       */
      connectionEnv: z
        .string()
        .regex(/^[A-Z_][A-Z0-9_]{0,127}$/, 'an environment variable name such as ARGUS_PG_URL')
        .default('ARGUS_PG_URL'),
      /** Schemas to sweep; default every non-system schema. */
      schemas: z.array(z.string().min(1).max(63)).min(1).max(1000).optional(),
      /** The table ARGUS keeps PII tags in (PostgreSQL has no tags), created when missing. */
      tagTable: z
        .string()
        .regex(/^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$/, 'schema.table in lower case, e.g. argus.column_tags')
        .default('argus.column_tags'),
    })
    .strict(),
  z
    .object({
      kind: z.literal('dbt'),
      /** The dbt project's folder (absolute, like a file catalog's path). */
      projectDir: AbsolutePath,
      /** Relative to the project. */
      manifest: z.string().min(1).max(4096).default('target/manifest.json'),
      /** Relative to the project; optional: without it column types are unknown. */
      catalog: z.string().min(1).max(4096).default('target/catalog.json'),
      /** How a PII tag is written: this tag in the column's `tags`, the category under `meta.<piiCategoryKey>`. */
      piiTag: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,64}$/)
        .default('pii'),
      piiCategoryKey: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,64}$/)
        .default('pii_category'),
    })
    .strict(),
]);
export type CatalogRef = z.infer<typeof CatalogRef>;

/**
 * An OpenAI-compatible endpoint. The key itself never appears here: `apiKeyEnv` names the worker's
 * environment variable that holds it.
 */
export const EndpointConfig = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, . _ - (at most 64)'),
    baseUrl: z.string().url(),
    model: z.string().min(1).max(200),
    apiKeyEnv: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]{0,127}$/, 'an environment variable name such as OPENAI_API_KEY')
      .optional(),
    /** Whether the endpoint accepts response_format json_schema; otherwise json_object plus validation. */
    structuredOutput: z.enum(['json_schema', 'json_object']).default('json_schema'),
    maxOutputTokens: z.number().int().min(16).max(32000).default(900),
    timeoutMs: z.number().int().min(1000).max(600000).default(60000),
    /**
     * Calls in flight to this endpoint at once, per sweep and worker. 1 (the default) means a spent quota
     * is never hit by a second call; higher is faster but calls already in flight when the quota runs out
     * still reach the provider.
     */
    maxInFlight: z.number().int().min(1).max(64).default(1),
    /**
     * What the account may spend, as its plan says (a free tier: `{"tokensPerDay": 100000}`). `sweep plan`
     * and `fitBudget` compare a sweep's needs with it, less what ARGUS recorded spending on this provider key
     * today (UTC), and with what the provider's last rate-limit headers said remains.
     */
    budget: z
      .object({
        tokensPerDay: z.number().int().min(1).optional(),
        requestsPerDay: z.number().int().min(1).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type EndpointConfig = z.infer<typeof EndpointConfig>;

export const ReviewMode = z.enum(['model', 'mechanical']);
export type ReviewMode = z.infer<typeof ReviewMode>;

export const HumanReviewConfig = z
  .object({
    /** Proposal kinds that wait for a person after the Arbiter approves them. */
    kinds: z.array(ProposalKind).default(['pii_tag']),
    /**
     * How long the sweep waits for decisions, e.g. "24h", "1h30m", "7d" (grammar: domain/durations.ts). Bounded
     * (1ms to 365d): the workflow makes a timer and a deadline date of it, and an unbounded one could make an
     * invalid date, whose RangeError would stall the workflow task.
     */
    deadline: z
      .string()
      .superRefine((s, ctx) => {
        const r = readDuration(s, { minMs: 1, maxMs: 365 * 86_400_000 });
        if (!r.ok) ctx.addIssue({ code: 'custom', message: r.error });
      })
      .default('24h'),
  })
  .strict();
export type HumanReviewConfig = z.infer<typeof HumanReviewConfig>;

/** Input of `sweepWorkflow`. The smallest valid input is `{"catalog": {"kind": "demo"}}`. Unknown keys are refused. */
export const SweepInput = z
  .object({
    catalog: CatalogRef,
    /** Declared at start. Defaults to `model` when endpoints are given, otherwise `mechanical`. */
    review: ReviewMode.optional(),
    endpoints: z.array(EndpointConfig).max(16).default([]),
    agents: z.array(AgentName).min(1).default(['description-drafter', 'pii-classifier', 'lineage-checker']),
    /** Who proposes: the no-model rules, or the endpoints' model. Defaults to `model` when endpoints are given. */
    agentBackend: z.enum(['rules', 'model']).optional(),
    /** Overwrite text a person wrote. Off unless asked for. */
    overwriteHumanText: z.boolean().default(false),
    /** Review but write nothing. */
    dryRun: z.boolean().default(false),
    /**
     * Entities per page: one agent activity works on one page when no model is involved. Default: a tenth of
     * the catalog, at least 100 and at most 1,000 (each page costs one rewrite of a file catalog).
     */
    pageSize: z.number().int().min(1).max(1000).optional(),
    /** Pages in flight at once (bounded fan-out). */
    concurrency: z.number().int().min(1).max(64).default(4),
    /** Pages one execution handles before it continues as new (keeps every history far below 10,240 events). */
    pagesPerRun: z.number().int().min(1).max(500).default(100),
    /** Model calls in flight at once per page in model mode. */
    modelConcurrency: z.number().int().min(1).max(32).default(4),
    /**
     * Plan at start and sweep only what fits the endpoints' budgets (oldest-unreviewed entities first); the
     * rest is deferred to the next sweep and listed in the report. A deferred entity is never counted as
     * reviewed, and deferring does not make the run partial.
     */
    fitBudget: z.boolean().default(false),
    /** Attempts of a still-throttled (unnamed 429) endpoint before the work rotates to the next one. */
    throttleAttemptsBeforeRotation: z.number().int().min(1).max(20).default(4),
    /**
     * Model calls on several entities at once: each call covers at most `entities` entities and about
     * `promptTokens` tokens of their evidence, and what they may answer fits the endpoint's `maxOutputTokens`.
     * `{"entities": 1}`: one call per entity and agent (as before batching).
     */
    modelBatch: z
      .object({
        entities: z.number().int().min(1).max(100).default(16),
        promptTokens: z.number().int().min(500).max(200_000).default(6000),
      })
      .strict()
      .default({ entities: 16, promptTokens: 6000 }),
    humanReview: HumanReviewConfig.optional(),
    /**
     * Off unless given: the PII agent and the gate may read up to `rows` values of a column a name cannot
     * settle, in the worker, to match patterns (e-mail, phone, card numbers with their checksum, …). Only
     * catalogs that hold data can: PostgreSQL, and dbt projects through their own dbt (`dbt show`, one process a
     * table); values never leave the activity: not into Temporal, the
     * report, the logs or a model prompt — only counts ("19 of 20 sampled values look like e-mail addresses").
     */
    sampleValues: z
      .object({ rows: z.number().int().min(5).max(100).default(20) })
      .strict()
      .optional(),
    /**
     * Remember decisions across sweeps (on unless false): an entity whose fingerprint (its own catalog record
     * and those of the entities its evidence reads) and the sweep's judgment key are unchanged since a final
     * decision is not proposed, reviewed or paid for again. `false` (the CLI's `--full`) judges everything.
     */
    incremental: z.boolean().default(true),
    /**
     * The fail-safe: when more than this share of the entities remembered from earlier sweeps are gone, the
     * sweep keeps their memory (a wrong schema list or a half-built dbt target must not erase it) and ends partial.
     */
    goneLimit: z.number().min(0).max(1).default(0.5),
    /**
     * Passes over the catalog at most: the first, then passes that re-judge the entities whose evidence the
     * previous pass's writes changed, so one sweep reaches its fixed point. 1: no re-judging within the sweep
     * (what the writes changed is judged by the next sweep).
     */
    maxPasses: z.number().int().min(1).max(5).default(3),
    /**
     * One pass per page reaches the page's fixed point: a page's lineage flags are reviewed and written first, then
     * its drafter reads them (and its descriptions are reviewed and written), then its PII classifier reads those
     * (and its tags are reviewed and written), so a later pass runs only for what a write on another page changed.
     * false: every agent at once, and a later catalog-wide pass for what the writes changed (it costs more, and
     * what was written on evidence the sweep changed stays). Sweeps with `humanReview`, `dryRun` and `fitBudget`
     * run every agent at once (nothing is written between; a plan priced that).
     */
    pageFixedPoint: z.boolean().default(true),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.review === 'model' && v.endpoints.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['endpoints'], message: 'review "model" needs at least one endpoint' });
    }
    if (v.agentBackend === 'model' && v.endpoints.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['endpoints'],
        message: 'agentBackend "model" needs at least one endpoint',
      });
    }
    const ids = new Set<string>();
    v.endpoints.forEach((e, i) => {
      if (ids.has(e.id))
        ctx.addIssue({ code: 'custom', path: ['endpoints', i, 'id'], message: `duplicate endpoint id "${e.id}"` });
      ids.add(e.id);
    });
  });
export type SweepInput = z.input<typeof SweepInput>;
export type SweepConfig = z.output<typeof SweepInput> & { review: ReviewMode; agentBackend: 'rules' | 'model' };

/** An input's problems: every bad field, and one readable line naming each with what is wrong with it. */
export function problemsOf(error: z.ZodError): { fields: string[]; message: string } {
  return { fields: issueFields(error), message: formatIssues(error) };
}

/** Parse and apply defaults; an invalid input's problems name every bad field. */
export function parseSweepInput(
  raw: unknown,
): { ok: true; value: SweepConfig } | { ok: false; fields: string[]; message: string } {
  const r = SweepInput.safeParse(raw);
  if (!r.success) return { ok: false, ...problemsOf(r.error) };
  const review = r.data.review ?? (r.data.endpoints.length > 0 ? 'model' : 'mechanical');
  const agentBackend = r.data.agentBackend ?? (r.data.endpoints.length > 0 ? 'model' : 'rules');
  return { ok: true, value: { ...r.data, review, agentBackend } };
}

/** The page size a sweep uses: the one asked for, else a tenth of the catalog within [100, 1000]. */
export function effectivePageSize(asked: number | undefined, entityCount: number): number {
  return asked ?? Math.min(1000, Math.max(100, Math.ceil(entityCount / 10)));
}

/**
 * A validated HumanReviewConfig.deadline ("30m", "1h30m", "7d", "500ms") → whole milliseconds, for a workflow
 * timer. Deterministic (workflow code calls it); throws DurationError on text the schema would refuse.
 */
export function durationMs(s: string): number {
  return Math.round(parseDuration(s));
}

/** The `review` update's payload: one or many decisions. Unknown fields are refused. */
export const ReviewDecisions = z
  .object({
    decisions: z
      .array(z.lazy(() => HumanDecision))
      .min(1)
      .max(5000),
  })
  .strict();

/** A human decision on one proposal, delivered as a Temporal Update. */
export const HumanDecision = z
  .object({
    proposalId: z.string().min(1),
    decision: z.enum(['approved', 'rejected', 'needs_changes']),
    reviewer: z.string().min(1).max(200),
    time: z.string().datetime({ offset: true }),
    comment: z.string().max(2000).optional(),
  })
  .strict();
export type HumanDecision = z.infer<typeof HumanDecision>;

export { ProposalChange };

/** What decides a sweep's outcome besides the catalog (never a secret: model ids, not keys or URLs). */
export interface JudgmentSettings {
  agentBackend: 'rules' | 'model';
  agents: string[];
  review: 'mechanical' | 'model';
  /** The endpoints' model ids, in order. */
  models: string[];
  humanReviewKinds?: string[];
  overwriteHumanText: boolean;
  sampleRows?: number;
}

/** The judgment settings of a parsed sweep input (with the rules' version, they make its judgment key). */
export function judgmentSettingsOf(cfg: SweepConfig): JudgmentSettings {
  return {
    agentBackend: cfg.agentBackend,
    agents: cfg.agents,
    review: cfg.review,
    models: cfg.endpoints.map((e) => e.model),
    ...(cfg.humanReview ? { humanReviewKinds: cfg.humanReview.kinds } : {}),
    overwriteHumanText: cfg.overwriteHumanText,
    ...(cfg.sampleValues ? { sampleRows: cfg.sampleValues.rows } : {}),
  };
}

/** The pass a page belongs to, from the first page of each pass (in order): the last pass starting at or before it. */
export function passOfPage(firstPages: readonly number[], page: number): number {
  let pass = 0;
  firstPages.forEach((first, i) => {
    if (page >= first) pass = i;
  });
  return pass;
}
