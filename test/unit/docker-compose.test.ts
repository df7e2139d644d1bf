// Checks docker-compose.yml and the Dockerfile without a Docker engine: structure, pinned images,
// coherent startup order, no secrets, and the same search attributes as domain/ids.ts everywhere.
import { existsSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parse } from 'yaml';
import { SEARCH_ATTRIBUTES, SERVER_DYNAMIC_CONFIG } from '../../domain/ids';

const ROOT = join(__dirname, '..', '..');
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: unknown };
  environment?: string[] | Record<string, string | number | boolean | null>;
  ports?: (string | { target?: number; published?: string | number })[];
  volumes?: (string | { target?: string })[];
  entrypoint?: string | string[];
  command?: string | string[];
  restart?: string;
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const compose = parse(read('docker-compose.yml'), { merge: true }) as Compose;
const services = compose.services;
const service = (name: string): Service => {
  const s = services[name];
  if (!s) throw new Error(`docker-compose.yml has no service ${name}`);
  return s;
};

function dependencies(s: Service): Record<string, string> {
  if (!s.depends_on) return {};
  if (Array.isArray(s.depends_on)) return Object.fromEntries(s.depends_on.map((d) => [d, 'service_started']));
  return Object.fromEntries(Object.entries(s.depends_on).map(([d, v]) => [d, v?.condition ?? 'service_started']));
}

function environment(s: Service): Record<string, string | null> {
  if (!s.environment) return {};
  if (Array.isArray(s.environment)) {
    return Object.fromEntries(
      s.environment.map((e) => {
        const i = e.indexOf('=');
        return i < 0 ? [e, null] : [e.slice(0, i), e.slice(i + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(s.environment).map(([k, v]) => [k, v === null ? null : String(v)]));
}

/** Everything a service (transitively) waits for. */
function closure(name: string, seen = new Set<string>()): Set<string> {
  for (const dep of Object.keys(dependencies(service(name)))) {
    if (!seen.has(dep)) {
      seen.add(dep);
      closure(dep, seen);
    }
  }
  return seen;
}

function publishedPorts(s: Service): string[] {
  return (s.ports ?? []).map((p) => (typeof p === 'string' ? p : `${p.published}:${p.target}`));
}

function script(s: Service): string {
  return [s.entrypoint, s.command]
    .flat()
    .filter((x): x is string => typeof x === 'string')
    .join('\n');
}

function allStrings(value: unknown, path = ''): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => allStrings(v, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => allStrings(v, path ? `${path}.${k}` : k));
  }
  return [];
}

const expectedAttributes = SEARCH_ATTRIBUTES.map((a) => `${a.name}=${a.type}`).sort();

describe('docker-compose.yml', () => {
  it('has the production topology', () => {
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining(['postgresql', 'temporal', 'temporal-ui', 'temporal-setup', 'argus-state-db', 'worker']),
    );
  });

  it.each(Object.entries(services).filter(([, s]) => s.image && !s.build))(
    'pins the image of %s to a tag',
    (_name, s) => {
      const image = s.image ?? '';
      const tag = image.includes('@sha256:') ? 'digest' : image.slice(image.lastIndexOf(':') + 1);
      expect(image).toMatch(/:[\w.-]+(@sha256:[a-f0-9]{64})?$/);
      expect(tag).not.toBe('latest');
    },
  );

  it('keeps the Temporal server and admin-tools on the same version', () => {
    const version = (image = '') => image.split(':')[1];
    const tools = Object.values(services).filter((s) => s.image?.startsWith('temporalio/admin-tools:'));
    expect(tools.length).toBeGreaterThan(0);
    for (const t of tools) expect(version(t.image)).toBe(version(service('temporal').image));
  });

  it('runs Temporal on the PostgreSQL service with persistent storage', () => {
    expect(service('postgresql').image).toMatch(/^postgres:16(\.|$)/);
    expect(service('postgresql').healthcheck?.test).toBeDefined();
    expect(
      service('postgresql').volumes?.some((v) =>
        String(typeof v === 'string' ? v : v.target).includes('/var/lib/postgresql/data'),
      ),
    ).toBe(true);
    const env = environment(service('temporal'));
    expect(env.DB).toBe('postgres12');
    expect(env.POSTGRES_SEEDS).toBe('postgresql');
    expect(closure('temporal').has('postgresql')).toBe(true);
  });

  it('waits only on health checks that exist and on one-shot jobs that finish', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const [dep, condition] of Object.entries(dependencies(s))) {
        expect([name, dep, Object.keys(services).includes(dep)]).toEqual([name, dep, true]);
        if (condition === 'service_healthy')
          expect([dep, service(dep).healthcheck?.test]).toEqual([dep, expect.anything()]);
        if (condition === 'service_completed_successfully') {
          expect([dep, service(dep).restart ?? 'no']).toEqual([dep, expect.stringMatching(/^(no|on-failure(:\d+)?)$/)]);
        }
      }
    }
    expect(dependencies(service('temporal-ui')).temporal).toBe('service_healthy');
    expect(dependencies(service('temporal-setup')).temporal).toBe('service_healthy');
  });

  it('exposes gRPC on 7233 and the Web UI on 8233', () => {
    expect(publishedPorts(service('temporal'))).toContain('7233:7233');
    expect(publishedPorts(service('temporal-ui'))).toContain('8233:8080');
    expect(environment(service('temporal-ui')).TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it('registers exactly the search attributes of domain/ids.ts', () => {
    const setup = service('temporal-setup');
    expect(setup.image).toMatch(/^temporalio\/admin-tools:/);
    const created = [...script(setup).matchAll(/search-attribute create\s+--name\s+(\w+)\s+--type\s+(\w+)/g)].map(
      (m) => `${m[1]}=${m[2]}`,
    );
    expect(created.sort()).toEqual(expectedAttributes);
  });

  it('builds the worker from the Dockerfile and points it at the compose cluster', () => {
    const worker = service('worker');
    const build = typeof worker.build === 'string' ? { context: worker.build } : worker.build;
    expect(build?.context).toBe('.');
    expect(build?.dockerfile ?? 'Dockerfile').toBe('Dockerfile');
    const env = environment(worker);
    expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(env.TEMPORAL_NAMESPACE).toBeDefined();
    expect(env.ARGUS_STATE_DIR).toBe('/data');
    expect([...closure('worker')]).toEqual(expect.arrayContaining(['temporal', 'temporal-setup', 'argus-state-db']));
  });

  it('scales the worker: no fixed name or host port, sweep state in its own database of the compose PostgreSQL', () => {
    const worker = service('worker') as Service & { container_name?: string };
    expect(worker.container_name).toBeUndefined();
    expect(publishedPorts(worker)).toEqual([]);
    const url = new URL(environment(worker).ARGUS_STATE_URL ?? '');
    expect(url.protocol).toBe('postgresql:');
    expect(url.hostname).toBe('postgresql');
    const database = url.pathname.slice(1);
    expect(database).not.toMatch(/^temporal/);
    // The one-shot that creates it makes that very database, and the worker waits for it.
    expect(script(service('argus-state-db'))).toContain(`CREATE DATABASE ${database}`);
    expect(dependencies(worker)['argus-state-db']).toBe('service_completed_successfully');
    // File catalogs (the demo's copy) are on a named volume all workers share; no other state is local.
    const mounts = (worker.volumes ?? []).map((v) => (typeof v === 'string' ? v : `${v.target}`));
    expect(mounts).toEqual([expect.stringMatching(/^[\w-]+:\/data\/catalogs$/)]);
    expect(Object.keys(compose.volumes ?? {})).toContain(mounts[0]!.split(':')[0]);
  });

  const hasGo = spawnSync('go', ['version']).status === 0;
  (hasGo ? it : it.skip)(
    'loads with compose-go, the Compose Specification loader of docker compose',
    () => {
      const r = spawnSync('go', ['run', '.', join(ROOT, 'docker-compose.yml')], {
        cwd: join(ROOT, 'tools', 'compose-check'),
        encoding: 'utf8',
        timeout: 600_000,
        env: { ...process.env, POSTGRES_PASSWORD: '', ARGUS_STATE_PASSWORD: '' },
      });
      expect(r.stderr).not.toMatch(/compose-check:/);
      expect(r.status).toBe(0);
      const loaded = JSON.parse(r.stdout) as {
        services: Record<
          string,
          { containerName: string; hostPorts: string[] | null; dependsOn: Record<string, string> }
        >;
      };
      expect(Object.keys(loaded.services).sort()).toEqual(Object.keys(services).sort());
      expect(loaded.services.worker).toEqual(expect.objectContaining({ containerName: '', hostPorts: null }));
    },
    600_000,
  );

  it('contains no secrets', () => {
    for (const [path, value] of allStrings(compose)) {
      expect([path, value]).not.toEqual([path, expect.stringMatching(/\bsk-[A-Za-z0-9_-]{8,}/)]);
    }
    for (const [name, s] of Object.entries(services)) {
      for (const [key, value] of Object.entries(environment(s))) {
        if (/(API_KEY|SECRET|TOKEN)$/i.test(key) && value) {
          // Only a reference to the caller's environment is allowed, never a value.
          expect([name, key, value]).toEqual([name, key, expect.stringMatching(/^\$\{\w+\}$/)]);
        }
      }
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = existsSync(join(ROOT, 'Dockerfile')) ? read('Dockerfile') : '';
  const lines = dockerfile.split('\n').map((l) => l.trim());

  it('exists and starts the compiled worker as a non-root user', () => {
    expect(dockerfile).not.toBe('');
    expect(lines.filter((l) => l.startsWith('FROM ')).every((l) => /^FROM node:20-bookworm-slim\b/.test(l))).toBe(true);
    const cmd = lines.filter((l) => l.startsWith('CMD ')).pop() ?? '';
    // exec: node itself gets the signals; its heap is ARGUS_WORKER_HEAP_MB, which the image sets to 1024.
    expect(JSON.parse(cmd.slice(4))).toEqual([
      'sh',
      '-c',
      'exec node --max-old-space-size="$ARGUS_WORKER_HEAP_MB" dist/worker/main.js',
    ]);
    expect(lines).toContain('ENV ARGUS_WORKER_HEAP_MB=1024');
    const user = lines.filter((l) => l.startsWith('USER ')).pop() ?? '';
    expect(user).toMatch(/^USER \S+$/);
    expect(user).not.toMatch(/^USER (root|0)$/);
    expect(dockerfile).toMatch(/npm ci/);
    expect(dockerfile).toMatch(/npm run build/);
  });
});

describe('search attributes outside domain/', () => {
  it.each([
    ['scripts/lib.sh', /ARGUS_SEARCH_ATTRIBUTES=\(([^)]*)\)/],
    ['test/global-setup.js', /const SEARCH_ATTRIBUTES = \[([^\]]*)\]/],
  ])('%s lists the same ones as domain/ids.ts', (file, pattern) => {
    const list = pattern.exec(read(file))?.[1] ?? '';
    const specs = [...list.matchAll(/(\w+=\w+)/g)].map((m) => m[1]);
    expect(specs.sort()).toEqual(expectedAttributes);
  });
});

describe('server dynamic config outside domain/', () => {
  const expected = Object.entries(SERVER_DYNAMIC_CONFIG)
    .map(([k, v]) => `${k}=${v}`)
    .sort();
  it.each([
    ['scripts/lib.sh', /ARGUS_SERVER_DYNAMIC_CONFIG=\(([^)]*)\)/],
    ['test/global-setup.js', /const SERVER_DYNAMIC_CONFIG = \[([^\]]*)\]/],
  ])('%s gives the same settings as domain/ids.ts', (file, pattern) => {
    const list = pattern.exec(read(file))?.[1] ?? '';
    const specs = [...list.matchAll(/([\w.]+=\w+)/g)].map((m) => m[1]);
    expect(specs.sort()).toEqual(expected);
  });
});
