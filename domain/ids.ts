/** Task queue every ARGUS worker polls. */
export const TASK_QUEUE = 'argus' as const;

/** Typed search attributes ARGUS sets on sweeps. Nothing personal goes into them. */
export const SA_PARTIAL = 'ArgusPartial' as const;
export const SA_CATALOG = 'ArgusCatalog' as const;
export const SA_MODE = 'ArgusMode' as const;
export const SEARCH_ATTRIBUTES = [
  { name: SA_PARTIAL, type: 'Bool' },
  { name: SA_CATALOG, type: 'Keyword' },
  { name: SA_MODE, type: 'Keyword' },
] as const;

/** `temporal server start-dev` arguments declaring ARGUS's search attributes (the dev servers of tests and benches). */
export const searchAttributeArgs = (): string[] =>
  SEARCH_ATTRIBUTES.flatMap((a) => ['--search-attribute', `${a.name}=${a.type}`]);

/**
 * Server settings ARGUS gives every Temporal server it starts (dev servers, the built cluster). The transfer queue
 * hands each scheduled workflow task to matching; at the default of 20 reads per second per history shard, a dev
 * server (one shard) makes each workflow task of a burst wait up to 50 ms once the allowance is spent.
 */
export const SERVER_DYNAMIC_CONFIG = { 'history.transferProcessorMaxPollRPS': 200 } as const;

/** `temporal server start-dev` flags for SERVER_DYNAMIC_CONFIG. */
export function devServerConfigArgs(): string[] {
  return Object.entries(SERVER_DYNAMIC_CONFIG).flatMap(([k, v]) => ['--dynamic-config-value', `${k}=${v}`]);
}

/** Failure types workflows match on (`cause.type`). */
export const FailureType = {
  InvalidSweepInput: 'InvalidSweepInput',
  InvalidCatalog: 'InvalidCatalog',
  BudgetExhausted: 'BudgetExhausted',
  ProviderBurst: 'ProviderBurst',
  ProviderServerError: 'ProviderServerError',
  ProviderTimeout: 'ProviderTimeout',
  ProviderAuth: 'ProviderAuth',
  ProviderBadRequest: 'ProviderBadRequest',
  MalformedOutput: 'MalformedOutput',
  EntityInvalid: 'EntityInvalid',
  /** A worker cannot find a sweep's state (its ledger, a page): never "zero proposals". */
  SweepStateMissing: 'SweepStateMissing',
  /** A sweep's state record is there but unreadable (damaged on disk): no retry can repair it. */
  SweepStateDamaged: 'SweepStateDamaged',
  /**
   * A database ARGUS needs (the PostgreSQL state store, a PostgreSQL catalog) refused or dropped the connection:
   * retryable, the activity's whole attempt again once it answers.
   */
  DatabaseUnavailable: 'DatabaseUnavailable',
} as const;

/**
 * Failure types no retry can fix. Activities raise them non-retryable already (activities/failures.ts; a provider
 * error's own `retryable` decides for provider failures, and test/unit/failures.test.ts checks the two agree);
 * the workflows' retry policies name them too, so a failure built elsewhere is never retried either.
 */
export const NON_RETRYABLE_FAILURE_TYPES: readonly string[] = [
  FailureType.InvalidCatalog,
  FailureType.InvalidSweepInput,
  FailureType.BudgetExhausted,
  FailureType.ProviderAuth,
  FailureType.ProviderBadRequest,
  FailureType.EntityInvalid,
  FailureType.SweepStateDamaged,
];
export type FailureType = (typeof FailureType)[keyof typeof FailureType];

/** Keep a catalog name usable inside a workflow id and a search attribute. */
export function catalogKey(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'catalog'
  );
}

/** `sweep/<catalog>/<run-key>` */
export function sweepWorkflowId(catalog: string, runKey: string): string {
  return `sweep/${catalogKey(catalog)}/${runKey}`;
}

/**
 * `<parent-id>/arbiter/<n>`; the reviews of a page's later parts (pageFixedPoint): `<parent-id>/arbiter/<n>/pii`
 * for its PII tags, `<parent-id>/arbiter/<n>/lineage` for its lineage flags.
 */
export function arbiterWorkflowId(parentId: string, n: number, part?: PagePart): string {
  return part === 'pii' || part === 'lineage' ? `${parentId}/arbiter/${n}/${part}` : `${parentId}/arbiter/${n}`;
}

/**
 * The part of a page a step works on when the page reaches its fixed point in one pass (pageFixedPoint), in the
 * order evidence flows: `lineage`, the lineage checker's flags (a repaired upstream is what the drafter inherits
 * through); `evidence`, the drafter's descriptions and removals on the page as that write left it; `pii`, the PII
 * classifier's tags on the page with those descriptions. Absent: every proposal of the page.
 */
export type PagePart = 'lineage' | 'evidence' | 'pii';

/** The outcome and call-record tags of a step on a page's part: `lineage-…` and `pii-…`, so none replaces another's. */
export const partTag = (part: PagePart | undefined, tag: string): string =>
  part === 'pii' || part === 'lineage' ? `${part}-${tag}` : tag;

/** The write rounds of a page's `pii` and `lineage` parts (a sweep reaching each page's fixed point has no rounds of people). */
export const PII_WRITE_ROUND = 1;
export const LINEAGE_WRITE_ROUND = 2;

/** The part a proposal of `agent` belongs to. */
const partOf = (agent: string): PagePart =>
  agent === 'pii-classifier' ? 'pii' : agent === 'lineage-checker' ? 'lineage' : 'evidence';

/** Whether a proposal of `agent` belongs to a page's `part` (every proposal belongs when there is none). */
export const inPart = (part: PagePart | undefined, agent: string): boolean =>
  part === undefined || partOf(agent) === part;
