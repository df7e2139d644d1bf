import { z } from 'zod';
import { EndpointConfig, problemsOf, ReviewMode, SweepInput } from './sweep';
import { RetiredEndpoint } from './report';

/**
 * Input of `arbiterWorkflow`: one page of one sweep to review, and what of the sweep's parsed config the review
 * needs (the bounds are the sweep input's). The sweep builds it from its config; the Arbiter parses it once.
 */
export const ArbiterInput = z
  .object({
    sweepId: z.string().min(1),
    ledgerKey: z.string().min(1),
    pageIndex: z.number().int().min(0),
    mode: ReviewMode,
    endpoints: z.array(EndpointConfig),
    /** Endpoints the sweep has already retired (with their evidence): never called again in this sweep. */
    retired: z.array(RetiredEndpoint),
    modelConcurrency: SweepInput.shape.modelConcurrency,
    throttleAttemptsBeforeRotation: SweepInput.shape.throttleAttemptsBeforeRotation,
    /** Entities per review call and their evidence's token budget (absent, or 1 entity: one call per entity). */
    modelBatch: SweepInput.shape.modelBatch.unwrap().optional(),
    /** The page's part to review (domain/ids.ts PagePart); absent: every proposal of the page. */
    part: z.enum(['lineage', 'evidence', 'pii']).optional(),
  })
  .strict();
export type ArbiterInput = z.infer<typeof ArbiterInput>;

/** What the Arbiter returns to its sweep: counts of the page's outcomes (kept in the ledger) and the retirements. */
export interface ArbiterResult {
  approved: number;
  rejected: number;
  notReviewed: number;
  /** Every endpoint retired so far, including those this child retired. */
  retired: RetiredEndpoint[];
}

/** Parse an Arbiter's input: its config, or every bad field named. */
export function parseArbiterInput(
  raw: unknown,
): { ok: true; value: ArbiterInput } | { ok: false; fields: string[]; message: string } {
  const r = ArbiterInput.safeParse(raw);
  if (r.success) return { ok: true, value: r.data };
  return { ok: false, ...problemsOf(r.error) };
}
