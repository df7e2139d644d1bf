// What docker-compose.yml says the production topology is, read for `npm run cluster`: the Temporal server's
// version and database settings, the namespace, ARGUS's worker environment and the three one-shot jobs (schema,
// setup, state database) as the shell scripts compose would run. Nothing here is a second copy of a setting: a
// value compose does not set is the default of the image compose names, and a shape this reader does not know
// fails loudly, naming the service.
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';

export const COMPOSE_FILE = 'docker-compose.yml';

interface Service {
  image?: string;
  environment?: string[] | Record<string, string | number | boolean | null>;
  entrypoint?: string | string[];
  command?: string | string[];
  ports?: (string | number | { target?: number })[];
  env_file?: string | (string | { path: string; required?: boolean })[];
}

/** A one-shot service: its shell script (after compose's interpolation) and its environment. */
export interface OneShot {
  service: string;
  script: string;
  environment: Record<string, string>;
}

export interface Topology {
  /** The tag of temporalio/server; the Go module go.temporal.io/server is built at v<serverVersion>. */
  serverVersion: string;
  /** The server's SQL plugin (compose's DB), e.g. postgres12. */
  persistence: string;
  /** The PostgreSQL superuser the postgres image creates (POSTGRES_USER / POSTGRES_PASSWORD). */
  postgres: { image: string; user: string; password: string };
  /** How the Temporal server reaches its databases. */
  temporalDb: {
    service: string;
    port: number;
    user: string;
    password: string;
    database: string;
    visibilityDatabase: string;
    numHistoryShards: number;
    logLevel: string;
  };
  /** The frontend as other services address it: service name and container port. */
  frontend: { service: string; port: number };
  namespace: string;
  schema: OneShot;
  setup: OneShot;
  stateDb: OneShot;
  /** The worker service's environment as compose passes it: its env_file (.env) first, then `environment`. */
  workerEnvironment: Record<string, string>;
}

/** Reads KEY=VALUE lines of a .env file (compose's rules, minus multi-line values); {} when there is none. */
export function readDotEnv(file: string): Record<string, string> {
  if (!existsSync(file)) return {};
  const out: Record<string, string> = {};
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    let value = m[2] as string;
    const quoted = /^(['"])(.*)\1$/.exec(value);
    if (quoted) value = quoted[2] as string;
    else value = value.replace(/\s+#.*$/, '');
    out[m[1] as string] = value;
  }
  return out;
}

/**
 * Compose's interpolation: `$$` is a literal `$` (left for the container's shell), `${VAR}`, `${VAR:-default}`,
 * `${VAR-default}` and `$VAR` are replaced from `vars`. Anything else compose would reject is rejected here too.
 */
export function interpolate(text: string, vars: Record<string, string | undefined>, where: string): string {
  return text.replace(
    /\$(\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*)|\{[^}]*\})/g,
    (whole, _all: string, braced?: string, op?: string, fallback?: string, bare?: string) => {
      if (whole === '$$') return '$';
      const name = braced ?? bare;
      if (!name) throw new Error(`${where}: compose interpolation "${whole}" is not supported by scripts/cluster`);
      const value = vars[name];
      if (op === ':-') return value ? value : (fallback ?? '');
      if (op === '-') return value ?? fallback ?? '';
      return value ?? '';
    },
  );
}

function environmentOf(s: Service, vars: Record<string, string | undefined>, where: string): Record<string, string> {
  const entries: [string, string][] = Array.isArray(s.environment)
    ? s.environment.map((e) => {
        const i = e.indexOf('=');
        return i < 0 ? [e, vars[e] ?? ''] : [e.slice(0, i), e.slice(i + 1)];
      })
    : Object.entries(s.environment ?? {}).map(([k, v]) => [k, v === null ? (vars[k] ?? '') : String(v)]);
  return Object.fromEntries(entries.map(([k, v]) => [k, interpolate(v, vars, `${where} ${k}`)]));
}

/** The variables of a service's env_file entries; a file that is missing gives none (compose: required: false). */
function envFiles(s: Service, root: string): Record<string, string> {
  const files = typeof s.env_file === 'string' ? [s.env_file] : (s.env_file ?? []);
  const out: Record<string, string> = {};
  for (const f of files) Object.assign(out, readDotEnv(path.resolve(root, typeof f === 'string' ? f : f.path)));
  return out;
}

/** The script of a one-shot service written as `entrypoint: ['/bin/sh', '-c']` with the script as its command. */
function scriptOf(s: Service, vars: Record<string, string | undefined>, where: string): string {
  const entry = Array.isArray(s.entrypoint) ? s.entrypoint : s.entrypoint ? [s.entrypoint] : [];
  const command = Array.isArray(s.command) ? s.command : s.command ? [s.command] : [];
  if (entry.join(' ') !== '/bin/sh -c' || command.length !== 1) {
    throw new Error(`${where}: expected entrypoint ['/bin/sh', '-c'] and a one-item command (a shell script)`);
  }
  return interpolate(command[0] as string, vars, where);
}

function imageTag(s: Service, repo: string, where: string): string {
  const m = new RegExp(`^${repo.replace(/[/.]/g, '\\$&')}:([^@\\s]+)$`).exec(s.image ?? '');
  if (!m) throw new Error(`${where}: expected image ${repo}:<tag>, found ${s.image ?? 'none'}`);
  return m[1] as string;
}

function containerPort(s: Service, where: string): number {
  const first = s.ports?.[0];
  const target = typeof first === 'object' ? first.target : typeof first === 'number' ? first : first?.split(':').pop();
  const port = Number(target);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`${where}: no published port to read the frontend's from`);
  return port;
}

/**
 * Reads docker-compose.yml at `root` with compose's variables: the caller's environment first, then `root`/.env,
 * as compose resolves them.
 */
export function readTopology(root: string, env: NodeJS.ProcessEnv = process.env): Topology {
  const vars = { ...readDotEnv(path.join(root, '.env')), ...env };
  const compose = parse(readFileSync(path.join(root, COMPOSE_FILE), 'utf8'), { merge: true }) as {
    services?: Record<string, Service>;
  };
  const service = (name: string): Service => {
    const s = compose.services?.[name];
    if (!s) throw new Error(`${COMPOSE_FILE} has no service ${name}`);
    return s;
  };
  const where = (name: string) => `${COMPOSE_FILE} service ${name}`;

  const serverVersion = imageTag(service('temporal'), 'temporalio/server', where('temporal'));
  for (const job of ['temporal-schema', 'temporal-setup']) {
    const tag = imageTag(service(job), 'temporalio/admin-tools', where(job));
    if (tag !== serverVersion) {
      throw new Error(`${where(job)} uses admin-tools ${tag} but the server is ${serverVersion}: bump them together`);
    }
  }

  const pg = environmentOf(service('postgresql'), vars, where('postgresql'));
  const server = environmentOf(service('temporal'), vars, where('temporal'));
  const setup = environmentOf(service('temporal-setup'), vars, where('temporal-setup'));
  const need = (env: Record<string, string>, key: string, name: string): string => {
    const v = env[key];
    if (!v) throw new Error(`${where(name)} sets no ${key}`);
    return v;
  };
  const persistence = need(server, 'DB', 'temporal');
  if (persistence !== 'postgres12') {
    throw new Error(`${where('temporal')}: DB=${persistence}; scripts/cluster runs PostgreSQL (postgres12) only`);
  }

  return {
    serverVersion,
    persistence,
    postgres: {
      image: service('postgresql').image ?? '',
      user: need(pg, 'POSTGRES_USER', 'postgresql'),
      password: need(pg, 'POSTGRES_PASSWORD', 'postgresql'),
    },
    // Unset in compose means the temporalio/server image's own default (its config template), named here.
    temporalDb: {
      service: need(server, 'POSTGRES_SEEDS', 'temporal'),
      port: Number(server.DB_PORT || 5432),
      user: need(server, 'POSTGRES_USER', 'temporal'),
      password: server.POSTGRES_PWD ?? '',
      database: server.DBNAME || 'temporal',
      visibilityDatabase: server.VISIBILITY_DBNAME || 'temporal_visibility',
      numHistoryShards: Number(server.NUM_HISTORY_SHARDS || 4),
      logLevel: server.LOG_LEVEL || 'info',
    },
    frontend: { service: 'temporal', port: containerPort(service('temporal'), where('temporal')) },
    namespace: setup.TEMPORAL_NAMESPACE || 'default',
    schema: {
      service: 'temporal-schema',
      script: scriptOf(service('temporal-schema'), vars, where('temporal-schema')),
      environment: environmentOf(service('temporal-schema'), vars, where('temporal-schema')),
    },
    setup: {
      service: 'temporal-setup',
      script: scriptOf(service('temporal-setup'), vars, where('temporal-setup')),
      environment: setup,
    },
    stateDb: {
      service: 'argus-state-db',
      script: scriptOf(service('argus-state-db'), vars, where('argus-state-db')),
      environment: environmentOf(service('argus-state-db'), vars, where('argus-state-db')),
    },
    workerEnvironment: {
      ...envFiles(service('worker'), root),
      ...environmentOf(service('worker'), vars, where('worker')),
    },
  };
}

/**
 * Replaces each `from` in `text` by its `to`; throws when one does not occur, so a docker-compose.yml that no
 * longer has the shape these rewrites expect is caught at `up`, not by a job that quietly talks to nothing.
 */
export function rewrite(text: string, rules: [from: string, to: string][], where: string): string {
  let out = text;
  for (const [from, to] of rules) {
    if (!out.includes(from))
      throw new Error(`${where} no longer contains "${from}"; update scripts/cluster/compose.ts`);
    out = out.split(from).join(to);
  }
  return out;
}
