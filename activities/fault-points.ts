import { armStoreFaults, type StoreFaultPoint } from '../state/fault-points';

/**
 * Crash points for fault tests: a worker started with `ARGUS_FAULT_POINT=<name>` (optionally `<name>:<n>`, the
 * n-th time that point is reached in the process) kills itself with SIGKILL there, as a power cut or an OOM
 * kill would. Unset in production; reading one environment variable per point is the only cost. The state
 * stores' own points (state/fault-points.ts) are armed here too, so one variable names any of them.
 */
export type FaultPoint =
  /** applyApprovedRepairs: the catalog file was replaced, its audit lines are not yet appended. */
  | 'after-catalog-replace'
  /** an agent activity started on a page. */
  | 'agent-start'
  /** the report: every page's proposals are spooled, the report file is not yet in place. */
  | 'report-spool'
  | StoreFaultPoint;

const hits = new Map<string, number>();

/** `tear`, when the point fires, runs just before the kill (what a write cut short leaves). */
export function faultPoint(name: FaultPoint, tear?: () => void): void {
  const spec = process.env.ARGUS_FAULT_POINT;
  if (!spec) return;
  const [point, nth] = spec.split(':');
  if (point !== name) return;
  const n = (hits.get(name) ?? 0) + 1;
  hits.set(name, n);
  if (n !== Number(nth ?? 1)) return;
  tear?.();
  process.kill(process.pid, 'SIGKILL');
}

armStoreFaults(faultPoint);
