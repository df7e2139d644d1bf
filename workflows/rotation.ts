import type { ApplicationFailure } from '@temporalio/workflow';
import type { EndpointConfig } from '../domain/sweep';
import type { RetiredEndpoint } from '../domain/report';
import { FailureType } from '../domain/ids';
import { applicationFailureOf } from './failures';

export type RotationOutcome<T> =
  | { ok: true; value: T; endpointId: string }
  | { ok: false; breaker: true; message: string }
  | { ok: false; breaker: false; category: string; retryable: boolean; message: string };

function retiredFrom(endpointId: string, f: ApplicationFailure, reason: string): RetiredEndpoint {
  const d = (f.details?.[0] ?? {}) as Record<string, unknown>;
  const str = (k: string) => (typeof d[k] === 'string' ? (d[k] as string) : null);
  return {
    endpointId,
    reason,
    window: str('window'),
    status: typeof d.status === 'number' ? d.status : null,
    resetAt: str('resetAt'),
    providerMessage: (str('providerMessage') ?? str('body') ?? f.message).slice(0, 600),
    body: (str('body') ?? '').slice(0, 2048),
    requestId: str('requestId'),
    retiredAt: new Date().toISOString(),
  };
}

/**
 * Endpoint rotation, owned by the workflow so it lives and dies with one sweep. An exhausted endpoint is
 * retired for the rest of the sweep; one still throttled after the bounded attempts is retired too; no
 * other failure rotates. When every endpoint is retired the breaker is open: no call is attempted.
 */
export class Rotation {
  constructor(
    readonly endpoints: EndpointConfig[],
    readonly retired: RetiredEndpoint[],
  ) {}

  get breakerTripped(): boolean {
    return this.endpoints.length > 0 && this.endpoints.every((e) => this.isRetired(e.id));
  }

  isRetired(id: string): boolean {
    return this.retired.some((r) => r.endpointId === id);
  }

  retiredIds(): string[] {
    return this.retired.map((r) => r.endpointId);
  }

  breakerMessage(): string {
    const why = this.retired.map((r) => `${r.endpointId}: ${r.providerMessage || r.reason}`).join('; ');
    return `model budget exhausted (every endpoint retired: ${why})`;
  }

  private retire(r: RetiredEndpoint): void {
    if (!this.isRetired(r.endpointId)) this.retired.push(r);
  }

  async run<T>(attempt: (endpoint: EndpointConfig, retired: string[]) => Promise<T>): Promise<RotationOutcome<T>> {
    for (;;) {
      const ep = this.endpoints.find((e) => !this.isRetired(e.id));
      if (!ep) return { ok: false, breaker: true, message: this.breakerMessage() };
      try {
        return { ok: true, value: await attempt(ep, this.retiredIds()), endpointId: ep.id };
      } catch (err) {
        const f = applicationFailureOf(err);
        if (f?.type === FailureType.BudgetExhausted) {
          this.retire(
            retiredFrom(
              ep.id,
              f,
              `budget exhausted${f.details?.[0] && (f.details[0] as { window?: string }).window ? ` (${(f.details[0] as { window?: string }).window} window)` : ''}`,
            ),
          );
          continue;
        }
        if (f?.type === FailureType.ProviderBurst) {
          this.retire(retiredFrom(ep.id, f, 'still throttled after the bounded attempts (persistent throttling)'));
          continue;
        }
        return {
          ok: false,
          breaker: false,
          category: f?.type ?? 'Error',
          retryable: f ? !f.nonRetryable : true,
          message: (f?.message ?? String((err as Error)?.message ?? err)).slice(0, 1000),
        };
      }
    }
  }
}
