import { WorkflowFailedError } from '@temporalio/client';
import { FailureType } from '../domain/ids';

/** Failure types that mean the sweep's input (or the catalog it names) is wrong: a person must fix it (exit 2). */
const INPUT_FAILURES = new Set<string>([FailureType.InvalidSweepInput, FailureType.InvalidCatalog]);

export interface RootCause {
  /** The ApplicationFailure type when there is one (e.g. InvalidCatalog), else the error's name. */
  type: string;
  message: string;
}

/**
 * The innermost cause of a failure: Temporal wraps a failed activity in ActivityFailure ("Activity task failed")
 * and a failed child in ChildWorkflowFailure; what a person can act on is at the bottom of that chain.
 */
export function rootCause(e: unknown): RootCause {
  type Link = { cause?: unknown; type?: unknown; name?: string; message?: string };
  let typed: RootCause | undefined;
  let last: Link | undefined;
  for (let cur = e as Link | undefined, depth = 0; cur && typeof cur === 'object' && depth < 20; depth++) {
    // ApplicationFailure carries a type; the innermost one is where the failure started.
    if (typeof cur.type === 'string' && cur.type) typed = { type: cur.type, message: cur.message ?? '' };
    last = cur;
    cur = cur.cause as Link | undefined;
  }
  if (typed) return typed;
  return { type: last?.name ?? 'Error', message: last?.message ?? String(e) };
}

/** A sweep that ended in failure, with its root cause and the exit code the CLI documents. */
export class SweepFailedError extends Error {
  override name = 'SweepFailedError';
  constructor(
    readonly workflowId: string,
    readonly root: RootCause,
    options?: { cause?: unknown },
  ) {
    super(`sweep ${workflowId} failed: ${root.type}: ${root.message}`, options);
  }
  /** 2 when the input or its catalog is at fault, 1 otherwise. */
  get exitCode(): number {
    return INPUT_FAILURES.has(this.root.type) ? 2 : 1;
  }
}

/** Turn a workflow's failure into a SweepFailedError naming the root cause; other errors pass through. */
export function sweepFailure(workflowId: string, e: unknown): unknown {
  return e instanceof WorkflowFailedError ? new SweepFailedError(workflowId, rootCause(e.cause ?? e), { cause: e }) : e;
}
