/**
 * Places inside the state stores where a crash matters, for fault tests. state/ reads no environment: a worker
 * arms them through activities/fault-points.ts (ARGUS_FAULT_POINT); a unit test may arm them with a hook that
 * throws, which leaves on disk what a kill there would.
 */
export type StoreFaultPoint =
  /**
   * A ledger record on its way. File store: its temporary file holds half the record, not yet renamed.
   * PostgreSQL: the row is stored and the worker dies before it hears so.
   */
  | 'ledger-write'
  /** The memory across sweeps being saved. File store: before the rename; PostgreSQL: before the commit. */
  | 'memory-write'
  /**
   * A page's audit lines being appended. File store: half of the first slice's bytes are written (a torn line);
   * PostgreSQL: the rows are inserted, the transaction not committed.
   */
  | 'audit-append';

/** `tear` runs synchronously just before a kill: it leaves what a write() the kill cut short would have left. */
export type StoreFaultHook = (point: StoreFaultPoint, tear?: () => void) => void;

let hook: StoreFaultHook | undefined;

/** Install (or, with undefined, remove) the hook the stores call at their fault points. */
export function armStoreFaults(h: StoreFaultHook | undefined): void {
  hook = h;
}

export function storeFault(point: StoreFaultPoint, tear?: () => void): void {
  hook?.(point, tear);
}
