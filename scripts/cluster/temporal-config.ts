// The Temporal server's config file, in the shape of the module's config/development-postgres12.yaml and with the
// values the temporalio/server image would render from compose's environment: postgres12 for both stores, every
// service bound to 127.0.0.1 on the ports the cluster chose, the image's dynamic config plus ARGUS's server settings.
import { appendFileSync, copyFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { SERVER_DYNAMIC_CONFIG } from '../../domain/ids';
import type { Topology } from './compose';

export interface ServerPorts {
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

export const SERVER_PORT_NAMES: (keyof ServerPorts)[] = [
  'frontend',
  'frontendHttp',
  'frontendMembership',
  'history',
  'historyMembership',
  'matching',
  'matchingMembership',
  'worker',
  'workerMembership',
];

const HOST = '127.0.0.1';

/**
 * Writes `dir`/config.yaml (mode 0600: it holds the database password) and `dir`/dynamicconfig.yaml (the image's
 * config/dynamicconfig/docker.yaml from the module); returns the config file's path.
 */
export function writeServerConfig(o: {
  dir: string;
  topology: Topology;
  moduleDir: string;
  postgresPort: number;
  ports: ServerPorts;
}): string {
  const db = o.topology.temporalDb;
  const store = (database: string, maxConns: number) => ({
    sql: {
      pluginName: o.topology.persistence,
      databaseName: database,
      connectAddr: `${HOST}:${o.postgresPort}`,
      connectProtocol: 'tcp',
      user: db.user,
      password: db.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const rpc = (grpcPort: number, membershipPort: number, httpPort?: number) => ({
    rpc: { grpcPort, membershipPort, bindOnIP: HOST, ...(httpPort ? { httpPort } : {}) },
  });
  const p = o.ports;
  const dynamicConfig = path.join(o.dir, 'dynamicconfig.yaml');
  copyFileSync(path.join(o.moduleDir, 'config', 'dynamicconfig', 'docker.yaml'), dynamicConfig);
  const settings = Object.fromEntries(Object.entries(SERVER_DYNAMIC_CONFIG).map(([k, value]) => [k, [{ value }]]));
  appendFileSync(
    dynamicConfig,
    `\n# ARGUS's server settings (SERVER_DYNAMIC_CONFIG in domain/ids.ts)\n${stringify(settings)}`,
  );
  const config = {
    log: { stdout: true, level: db.logLevel },
    persistence: {
      defaultStore: 'default',
      visibilityStore: 'visibility',
      numHistoryShards: db.numHistoryShards,
      datastores: { default: store(db.database, 20), visibility: store(db.visibilityDatabase, 10) },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: HOST },
      pprof: { port: 0 },
    },
    services: {
      frontend: rpc(p.frontend, p.frontendMembership, p.frontendHttp),
      matching: rpc(p.matching, p.matchingMembership),
      history: rpc(p.history, p.historyMembership),
      worker: rpc(p.worker, p.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `${HOST}:${p.frontend}`,
          httpAddress: `${HOST}:${p.frontendHttp}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: dynamicConfig, pollInterval: '60s' },
  };
  const file = path.join(o.dir, 'config.yaml');
  writeFileSync(file, `# Written by scripts/cluster.ts at each \`up\`; edits are overwritten.\n${stringify(config)}`, {
    mode: 0o600,
  });
  return file;
}
