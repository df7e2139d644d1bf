// Where a cluster keeps itself: one folder (default .argus/cluster/, gitignored; ARGUS_CLUSTER_DIR or --dir
// elsewhere) holding PostgreSQL's data, the server's config, each worker's scratch folder, the logs, and
// cluster.json: the ports chosen once and reused by every later `up`, and the pids of what runs now.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ServerPorts } from './temporal-config';

export interface ClusterState {
  serverVersion: string;
  namespace: string;
  persistence: string;
  ports: ServerPorts & { postgres: number };
  pids: { postgres: number | null; temporal: number | null; workers: Record<string, number> };
  /**
   * Each worker's /metrics port on 127.0.0.1, by worker number: chosen when it first starts and reused by later
   * `up`s where free. Absent in a cluster.json written before workers served metrics.
   */
  metricsPorts?: Record<string, number>;
  /** How many workers the last `up` asked for. */
  workers: number;
}

export interface ClusterPaths {
  dir: string;
  stateFile: string;
  lockFile: string;
  pgData: string;
  temporalDir: string;
  binDir: string;
  logs: string;
  workerDir(n: number): string;
  workerLog(n: number): string;
}

export function clusterPaths(root: string, dir?: string): ClusterPaths {
  const base = path.resolve(dir || process.env.ARGUS_CLUSTER_DIR || path.join(root, '.argus', 'cluster'));
  const logs = path.join(base, 'logs');
  return {
    dir: base,
    stateFile: path.join(base, 'cluster.json'),
    lockFile: path.join(base, '.lock'),
    pgData: path.join(base, 'postgres'),
    temporalDir: path.join(base, 'temporal'),
    binDir: path.join(base, 'bin'),
    logs,
    workerDir: (n) => path.join(base, 'workers', String(n)),
    workerLog: (n) => path.join(logs, `worker-${n}.log`),
  };
}

export function readClusterState(paths: ClusterPaths): ClusterState | null {
  if (!existsSync(paths.stateFile)) return null;
  return JSON.parse(readFileSync(paths.stateFile, 'utf8')) as ClusterState;
}

/** Written whole to a temporary file and renamed: a reader never sees half of it. */
export function writeClusterState(paths: ClusterPaths, state: ClusterState): void {
  mkdirSync(paths.dir, { recursive: true });
  const tmp = `${paths.stateFile}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(tmp, paths.stateFile);
}

/** Markers that tell our processes from a recycled pid (see processes.ts `isOurs`). */
export const markers = {
  postgres: (p: ClusterPaths) => p.pgData,
  temporal: (p: ClusterPaths) => path.join(p.temporalDir, 'config.yaml'),
  worker: (p: ClusterPaths, n: number) => `ARGUS_CLUSTER_WORKER=${p.dir}#${n}`,
};
