import type { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/**
 * How often a running activity heartbeats. The catalog and report activities declare a heartbeat timeout of
 * 10 s (workflows/activities.ts), and a worker that dies is noticed in ~10 s, not at startToClose. The SDK passes
 * the beats on to the server at most every {@link HEARTBEAT_SENT_EVERY} (the worker's throttle; without it, every
 * 8 s of the 10), so a beat that reaches the server late by up to 8 s still keeps a live attempt alive.
 */
export const HEARTBEAT_EVERY_MS = 1000;

/** The worker's heartbeat throttle (WorkerOptions.maxHeartbeatThrottleInterval, worker/create-worker.ts). */
export const HEARTBEAT_SENT_EVERY = '2s';

/**
 * Every activity on an ARGUS worker heartbeats while it runs, whatever it is waiting for (the catalog lock, a
 * group commit, a file read). Without it an activity whose worker died holds the sweep until its heartbeat
 * timeout passes with no beat ever sent, and one that never beats cannot have a short timeout at all.
 * Synchronous stretches (a page's gate pass, parsing a catalog file) delay a beat; they last well under a
 * second on the 10,000-entity benchmark catalog.
 */
export const heartbeatInterceptor: ActivityInterceptorsFactory = (ctx: Context) => ({
  inbound: {
    async execute(input, next) {
      const beat = setInterval(() => {
        try {
          ctx.heartbeat();
        } catch {
          // The activity is completing; nothing to keep alive.
        }
      }, HEARTBEAT_EVERY_MS);
      try {
        return await next(input);
      } finally {
        clearInterval(beat);
      }
    },
  },
});
