// `npm run cluster -- up|down|status`: the topology of docker-compose.yml without a container engine. PostgreSQL,
// the Temporal server on it (postgres12 for both stores), the namespace and ARGUS's search attributes, and N ARGUS
// workers on the PostgreSQL state store, every address on 127.0.0.1. Versions and settings come from
// docker-compose.yml itself (scripts/cluster/compose.ts); the one-shot jobs run compose's own scripts.
//   up [--workers N]   start what is not running (N workers, default 2); reuses the data and ports of earlier runs
//   down               stop everything `up` started; the data stays for the next `up`
//   status [--json]    what runs; --json prints the one line scripts rely on, or fails when the server is down
// --dir DIR (or ARGUS_CLUSTER_DIR): where the cluster keeps itself, default .argus/cluster/.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { readTopology, rewrite, type OneShot, type Topology } from './cluster/compose';
import { initPostgres, postgresBinDir, startPostgres, stopPostgres } from './cluster/postgres';
import {
  isOurs,
  lockFile,
  logSince,
  portFree,
  runStep,
  sizeOf,
  sleep,
  startDetached,
  stopProcess,
} from './cluster/processes';
import {
  clusterPaths,
  markers,
  readClusterState,
  writeClusterState,
  type ClusterPaths,
  type ClusterState,
} from './cluster/state';
import { SERVER_PORT_NAMES, writeServerConfig, type ServerPorts } from './cluster/temporal-config';
import { ensureTemporalTools } from './cluster/temporal-build';

const ROOT = path.resolve(__dirname, '..');
const HOST = '127.0.0.1';
const DEFAULT_WORKERS = 2;
const PORT_RANGE = [20000, 32767] as const;
const inRange = (p: number) => p >= PORT_RANGE[0] && p <= PORT_RANGE[1];
const SERVER_HEALTH_TIMEOUT_MS = 120_000;
// Generous: every worker compiles ARGUS with tsx at start, all at once, on 2 cores shared with the server.
const WORKER_READY_TIMEOUT_MS = 180_000;

const say = (line: string) => process.stderr.write(`argus: ${line}\n`);
const rel = (p: string) => path.relative(process.cwd(), p) || '.';

function usage(): string {
  return [
    'usage: npm run cluster -- up [--workers N] | down | status [--json]   [--dir DIR]',
    '  up       start the docker-compose.yml topology from binaries (PostgreSQL, Temporal, N workers; default 2)',
    '  down     stop everything up started; the data stays for the next up',
    '  status   what runs; --json prints {"address", "namespace", "persistence", "workers", "serverVersion"}',
  ].join('\n');
}

/** What the children run with: our tools first on PATH, nothing else of the caller's shell but the basics. */
function baseEnv(paths: ClusterPaths): NodeJS.ProcessEnv {
  const keep = ['HOME', 'USER', 'LOGNAME', 'LANG', 'TMPDIR', 'TZ', 'GOPATH', 'GOMODCACHE'];
  const env: NodeJS.ProcessEnv = Object.fromEntries(keep.flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : [])));
  return { ...env, PATH: `${paths.binDir}${path.delimiter}${process.env.PATH ?? '/usr/bin:/bin'}` };
}

function findTemporalCli(): string {
  const r = spawnSync('bash', [path.join(ROOT, 'scripts', 'find-temporal.sh')], { encoding: 'utf8' });
  if (r.status !== 0 || !r.stdout.trim()) throw new Error(`no temporal CLI (scripts/find-temporal.sh): ${r.stderr}`);
  return r.stdout.trim();
}

/** The names compose's scripts call, on the one PATH the cluster's jobs get. */
function linkTools(binDir: string, tools: Record<string, string>): void {
  mkdirSync(binDir, { recursive: true });
  for (const [name, target] of Object.entries(tools)) {
    rmSync(path.join(binDir, name), { force: true });
    symlinkSync(target, path.join(binDir, name));
  }
}

function healthy(cli: string, address: string): boolean {
  const r = spawnSync(cli, ['operator', 'cluster', 'health', '--address', address], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  return r.status === 0 && r.stdout.includes('SERVING');
}

const address = (s: ClusterState) => `${HOST}:${s.ports.frontend}`;

/** Ports of the last run where they are free; fresh ones where a process that is not ours took one. */
async function choosePorts(
  state: ClusterState | null,
  running: { postgres: boolean; temporal: boolean },
): Promise<ClusterState['ports']> {
  const taken = new Set<number>();
  // Below Linux's ephemeral range: the server records its membership port in a SMALLINT column
  // (cluster_membership.rpc_port), so a port over 32767 makes it exit at startup; and no outgoing connection
  // holds a port here between our probe and the bind.
  const pick = async (): Promise<number> => {
    for (;;) {
      const p = PORT_RANGE[0] + Math.floor(Math.random() * (PORT_RANGE[1] - PORT_RANGE[0]));
      if (!taken.has(p) && (await portFree(p))) {
        taken.add(p);
        return p;
      }
    }
  };
  const old = state?.ports;
  let postgres = old?.postgres;
  if (!postgres || (!running.postgres && !(inRange(postgres) && (await portFree(postgres))))) postgres = await pick();
  taken.add(postgres);
  let server: ServerPorts | undefined = old;
  if (old && !running.temporal) {
    for (const name of SERVER_PORT_NAMES) if (!inRange(old[name]) || !(await portFree(old[name]))) server = undefined;
  }
  if (!server) {
    const fresh: Partial<ServerPorts> = {};
    for (const name of SERVER_PORT_NAMES) fresh[name] = await pick();
    server = fresh as ServerPorts;
  }
  const ports = { postgres } as ClusterState['ports'];
  for (const name of SERVER_PORT_NAMES) ports[name] = server[name];
  return ports;
}

/**
 * A /metrics port for each worker about to start: the one it had where that is still free, else a fresh one in
 * the cluster's range that no port of the cluster holds.
 */
async function chooseMetricsPorts(state: ClusterState, starting: number[]): Promise<void> {
  const ports = (state.metricsPorts ??= {});
  const taken = new Set<number>([...Object.values(state.ports), ...Object.values(ports)]);
  for (const n of starting) {
    const old = ports[n];
    if (old && inRange(old) && (await portFree(old))) continue;
    for (;;) {
      const p = PORT_RANGE[0] + Math.floor(Math.random() * (PORT_RANGE[1] - PORT_RANGE[0]));
      if (!taken.has(p) && (await portFree(p))) {
        taken.add(p);
        ports[n] = p;
        break;
      }
    }
  }
}

function oneShot(paths: ClusterPaths, job: OneShot, script: string, env: Record<string, string>, timeoutMs: number) {
  runStep(`docker-compose.yml ${job.service}`, ['/bin/sh', '-c', script], {
    env: { ...baseEnv(paths), ...env },
    cwd: paths.dir,
    timeoutMs,
    log: path.join(paths.logs, `${job.service}.log`),
  });
}

/** The worker service's environment with compose's service addresses turned into the cluster's loopback ones. */
function workerEnv(topology: Topology, paths: ClusterPaths, state: ClusterState, n: number): NodeJS.ProcessEnv {
  const w = topology.workerEnvironment;
  const db = topology.temporalDb;
  const where = `docker-compose.yml service worker`;
  const fe = `${topology.frontend.service}:${topology.frontend.port}`;
  return {
    ...baseEnv(paths),
    ...w,
    TEMPORAL_ADDRESS: rewrite(w.TEMPORAL_ADDRESS ?? '', [[fe, address(state)]], `${where} TEMPORAL_ADDRESS`),
    ARGUS_STATE_URL: rewrite(
      w.ARGUS_STATE_URL ?? '',
      [[`@${db.service}:${db.port}/`, `@${HOST}:${state.ports.postgres}/`]],
      `${where} ARGUS_STATE_URL`,
    ),
    // Compose's /data is each container's own: here each worker gets a folder of its own.
    ARGUS_STATE_DIR: paths.workerDir(n),
    // Compose's workers each serve /metrics on a network of their own; here they share 127.0.0.1, a port each.
    ARGUS_METRICS_HOST: HOST,
    ARGUS_METRICS_PORT: String(state.metricsPorts?.[n]),
    ARGUS_CLUSTER_WORKER: markers.worker(paths, n).slice('ARGUS_CLUSTER_WORKER='.length),
  };
}

async function startWorker(topology: Topology, paths: ClusterPaths, state: ClusterState, n: number): Promise<number> {
  mkdirSync(paths.workerDir(n), { recursive: true });
  const log = paths.workerLog(n);
  const from = sizeOf(log);
  const pid = startDetached(['bash', path.join(ROOT, 'scripts', 'worker.sh')], {
    env: workerEnv(topology, paths, state, n),
    cwd: ROOT,
    log,
  });
  const deadline = Date.now() + WORKER_READY_TIMEOUT_MS;
  for (;;) {
    if (/ARGUS worker polling/.test(logSince(log, from))) return pid;
    if (!isOurs(pid, markers.worker(paths, n))) {
      throw new Error(`worker ${n} exited before polling; log ${log}:\n${logSince(log, from).slice(-3000)}`);
    }
    if (Date.now() > deadline) {
      await stopProcess(pid, { first: 'SIGTERM', graceMs: 5_000 });
      throw new Error(`worker ${n} was not polling after ${WORKER_READY_TIMEOUT_MS / 1000} s; log ${log}`);
    }
    await sleep(250);
  }
}

const stopWorker = (pid: number) => stopProcess(pid, { first: 'SIGTERM', graceMs: 30_000 });
const stopServer = (pid: number) => stopProcess(pid, { first: 'SIGTERM', graceMs: 30_000 });

async function up(paths: ClusterPaths, workers: number): Promise<void> {
  const topology = readTopology(ROOT);
  mkdirSync(paths.logs, { recursive: true });
  const release = await lockFile(paths.lockFile);
  try {
    const started = Date.now();
    const tools = await ensureTemporalTools(ROOT, topology.serverVersion, say);
    const cli = findTemporalCli();
    const pgBin = postgresBinDir(ROOT);
    linkTools(paths.binDir, {
      temporal: cli,
      'temporal-sql-tool': tools.sqlToolBin,
      'temporal-server': tools.serverBin,
      psql: path.join(pgBin, 'psql'),
    });

    const previous = readClusterState(paths);
    const running = {
      postgres: isOurs(previous?.pids.postgres, markers.postgres(paths)),
      temporal: isOurs(previous?.pids.temporal, markers.temporal(paths)),
    };
    const ports = await choosePorts(previous, running);
    // A running server of another version, or one whose database moved to a new port, is started again.
    if (
      previous?.pids.temporal &&
      running.temporal &&
      (previous.serverVersion !== topology.serverVersion || previous.ports.postgres !== ports.postgres)
    ) {
      say(`restarting the Temporal server (pid ${previous.pids.temporal}): its version or database changed`);
      await stopServer(previous.pids.temporal);
      running.temporal = false;
    }
    const state: ClusterState = {
      serverVersion: topology.serverVersion,
      namespace: topology.namespace,
      persistence: topology.persistence,
      ports,
      pids: {
        postgres: running.postgres ? (previous?.pids.postgres ?? null) : null,
        temporal: running.temporal ? (previous?.pids.temporal ?? null) : null,
        workers: {},
      },
      workers,
      metricsPorts: { ...previous?.metricsPorts },
    };
    // Workers still running keep the addresses they were started with: when those moved, they start again.
    const moved =
      previous && (previous.ports.postgres !== ports.postgres || previous.ports.frontend !== ports.frontend);
    for (const [n, pid] of Object.entries(previous?.pids.workers ?? {})) {
      if (!isOurs(pid, markers.worker(paths, Number(n)))) continue;
      if (moved || Number(n) > workers) {
        say(`stopping worker ${n} (pid ${pid})${moved ? ': the cluster moved to new ports' : ''}`);
        await stopWorker(pid);
      } else state.pids.workers[n] = pid;
    }
    writeClusterState(paths, state);

    const db = topology.temporalDb;
    if (!state.pids.postgres) {
      if (
        initPostgres({
          bin: pgBin,
          dataDir: paths.pgData,
          user: topology.postgres.user,
          password: topology.postgres.password,
        })
      ) {
        say(`initialised PostgreSQL in ${rel(paths.pgData)}`);
      }
      state.pids.postgres = await startPostgres({
        bin: pgBin,
        dataDir: paths.pgData,
        port: ports.postgres,
        user: topology.postgres.user,
        password: topology.postgres.password,
        log: path.join(paths.logs, 'postgres.log'),
      });
      writeClusterState(paths, state);
      say(`PostgreSQL on ${HOST}:${ports.postgres} (pid ${state.pids.postgres})`);
      const sd = topology.stateDb;
      oneShot(
        paths,
        sd,
        sd.script,
        {
          ...sd.environment,
          PGHOST: rewrite(sd.environment.PGHOST ?? '', [[db.service, HOST]], `${sd.service} PGHOST`),
          PGPORT: String(ports.postgres),
        },
        60_000,
      );
    }

    if (!state.pids.temporal) {
      const sc = topology.schema;
      const schemaScript = rewrite(
        sc.script,
        [
          [`--ep ${db.service} -p ${db.port}`, `--ep ${HOST} -p ${ports.postgres}`],
          ['/etc/temporal/schema/', `${tools.moduleDir}/schema/`],
        ],
        `docker-compose.yml service ${sc.service}`,
      );
      oneShot(paths, sc, schemaScript, sc.environment, 300_000);
      say(`databases ${db.database} and ${db.visibilityDatabase} at the schema of Temporal ${topology.serverVersion}`);
      mkdirSync(paths.temporalDir, { recursive: true });
      const config = writeServerConfig({
        dir: paths.temporalDir,
        topology,
        moduleDir: tools.moduleDir,
        postgresPort: ports.postgres,
        ports,
      });
      const log = path.join(paths.logs, 'temporal.log');
      const from = sizeOf(log);
      const pid = startDetached([tools.serverBin, '--config-file', config, '--allow-no-auth', 'start'], {
        env: baseEnv(paths),
        cwd: paths.temporalDir,
        log,
      });
      state.pids.temporal = pid;
      writeClusterState(paths, state);
      const deadline = Date.now() + SERVER_HEALTH_TIMEOUT_MS;
      while (!healthy(cli, address(state))) {
        if (!isOurs(pid, markers.temporal(paths))) {
          throw new Error(
            `the Temporal server exited during startup; log ${log}:\n${logSince(log, from).slice(-3000)}`,
          );
        }
        if (Date.now() > deadline) {
          throw new Error(`the Temporal server was not SERVING after ${SERVER_HEALTH_TIMEOUT_MS / 1000} s; log ${log}`);
        }
        await sleep(500);
      }
      say(`Temporal ${topology.serverVersion} SERVING on ${address(state)} (pid ${pid})`);
      const st = topology.setup;
      const fe = `${topology.frontend.service}:${topology.frontend.port}`;
      oneShot(
        paths,
        st,
        st.script,
        {
          ...st.environment,
          TEMPORAL_ADDRESS: rewrite(st.environment.TEMPORAL_ADDRESS ?? '', [[fe, address(state)]], `${st.service}`),
        },
        180_000,
      );
      say(`namespace ${topology.namespace} and ARGUS's search attributes registered (${st.service})`);
    }

    const missing = Array.from({ length: workers }, (_, i) => i + 1).filter((n) => !state.pids.workers[n]);
    if (missing.length) {
      // Once, before the workers: each runs scripts/worker.sh, whose dependency check must not race an install.
      runStep('scripts/ensure-deps.sh', ['bash', path.join(ROOT, 'scripts', 'ensure-deps.sh')], {
        env: process.env,
        cwd: ROOT,
        timeoutMs: 600_000,
        log: path.join(paths.logs, 'ensure-deps.log'),
      });
      await chooseMetricsPorts(state, missing);
      writeClusterState(paths, state);
      const pids = await Promise.allSettled(missing.map((n) => startWorker(topology, paths, state, n)));
      pids.forEach((r, i) => {
        if (r.status === 'fulfilled') state.pids.workers[String(missing[i])] = r.value;
      });
      writeClusterState(paths, state);
      const failed = pids.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    }
    writeClusterState(paths, state);

    const took = ((Date.now() - started) / 1000).toFixed(1);
    const built = tools.builtInSeconds !== undefined ? ` (of which ${tools.builtInSeconds} s building Temporal)` : '';
    const wasUp = running.postgres && running.temporal && missing.length === 0;
    say(wasUp ? 'the cluster was already up' : `cluster up in ${took} s${built}`);
    console.log(
      [
        `Temporal ${topology.serverVersion} on ${address(state)}, namespace ${topology.namespace}, persistence ${topology.persistence}`,
        `PostgreSQL on ${HOST}:${ports.postgres}: ${db.database}, ${db.visibilityDatabase}, argus_state`,
        `${workers} ARGUS worker(s) on the PostgreSQL state store (pids ${Object.values(state.pids.workers).join(', ')})` +
          metricsText(state, Object.keys(state.pids.workers)),
        `data and logs in ${rel(paths.dir)}; stop with: npm run cluster -- down`,
        `use it: TEMPORAL_ADDRESS=${address(state)} npm run argus -- sweep start --demo`,
      ].join('\n'),
    );
  } finally {
    release();
  }
}

async function down(paths: ClusterPaths): Promise<void> {
  mkdirSync(paths.dir, { recursive: true });
  const release = await lockFile(paths.lockFile);
  try {
    const state = readClusterState(paths);
    if (!state) {
      say(`no cluster in ${rel(paths.dir)}`);
      return;
    }
    const stopped: string[] = [];
    await Promise.all(
      Object.entries(state.pids.workers).map(async ([n, pid]) => {
        if (isOurs(pid, markers.worker(paths, Number(n)))) stopped.push(`worker ${n} (${await stopWorker(pid)})`);
      }),
    );
    state.pids.workers = {};
    writeClusterState(paths, state);
    if (isOurs(state.pids.temporal, markers.temporal(paths))) {
      stopped.push(`Temporal (${await stopServer(state.pids.temporal)})`);
    }
    state.pids.temporal = null;
    writeClusterState(paths, state);
    if (isOurs(state.pids.postgres, markers.postgres(paths))) {
      stopped.push(`PostgreSQL (${await stopPostgres(state.pids.postgres)})`);
    }
    state.pids.postgres = null;
    writeClusterState(paths, state);
    say(stopped.length ? `stopped ${stopped.join(', ')}` : 'nothing was running');
    say(`data kept in ${rel(paths.dir)}; the next up reuses it`);
  } finally {
    release();
  }
}

/** Where the given workers serve /metrics, for the human lines of `up` and `status` ('' when none does). */
function metricsText(state: ClusterState, workers: string[]): string {
  const urls = workers.flatMap((n) => {
    const port = state.metricsPorts?.[n];
    return port ? [`http://${HOST}:${port}/metrics`] : [];
  });
  return urls.length ? `; metrics at ${urls.join(', ')}` : '';
}

/** The line scripts parse: exactly these keys, in this order, with this spacing. */
function statusJson(state: ClusterState, workers: number): string {
  const q = JSON.stringify;
  return (
    `{"address": ${q(address(state))}, "namespace": ${q(state.namespace)}, "persistence": ${q(state.persistence)}, ` +
    `"workers": ${workers}, "serverVersion": ${q(state.serverVersion)}}`
  );
}

function status(paths: ClusterPaths, json: boolean): number {
  const state = readClusterState(paths);
  const pg = isOurs(state?.pids.postgres, markers.postgres(paths));
  const server = isOurs(state?.pids.temporal, markers.temporal(paths));
  const live = Object.entries(state?.pids.workers ?? {}).filter(([n, pid]) =>
    isOurs(pid, markers.worker(paths, Number(n))),
  );
  const serving = !!state && server && healthy(findTemporalCli(), address(state));
  if (json) {
    if (!state || !serving) {
      say(
        state ? `the cluster's Temporal server is not running (${rel(paths.dir)})` : `no cluster in ${rel(paths.dir)}`,
      );
      return 1;
    }
    console.log(statusJson(state, live.length));
    return 0;
  }
  if (!state) {
    console.log(`no cluster in ${rel(paths.dir)} (start one with: npm run cluster -- up)`);
    return 1;
  }
  const logs = rel(paths.logs);
  console.log(
    [
      `PostgreSQL   ${pg ? `running on ${HOST}:${state.ports.postgres} (pid ${state.pids.postgres})` : 'stopped'}`,
      `Temporal     ${server ? `${serving ? 'SERVING' : 'running, not SERVING'} on ${address(state)} (pid ${state.pids.temporal})` : 'stopped'}, ` +
        `version ${state.serverVersion}, namespace ${state.namespace}, persistence ${state.persistence}`,
      `workers      ${live.length} of ${state.workers} running${live.length ? ` (pids ${live.map(([, p]) => p).join(', ')})` : ''}` +
        metricsText(
          state,
          live.map(([n]) => n),
        ),
      `data         ${rel(paths.dir)}; logs ${logs}`,
    ].join('\n'),
  );
  return serving && live.length === state.workers ? 0 : 1;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      workers: { type: 'string' },
      json: { type: 'boolean', default: false },
      dir: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, ...extra] = positionals;
  if (values.help) {
    console.log(usage());
    return 0;
  }
  if (!command || extra.length || !['up', 'down', 'status'].includes(command)) {
    console.error(usage());
    return 2;
  }
  const workers = values.workers === undefined ? DEFAULT_WORKERS : Number(values.workers);
  if (!Number.isInteger(workers) || workers < 0 || workers > 32) {
    console.error(`--workers must be a whole number from 0 to 32 (got "${values.workers}")`);
    return 2;
  }
  const paths = clusterPaths(ROOT, values.dir);
  if (command === 'up') await up(paths, workers);
  else if (command === 'down') await down(paths);
  else return status(paths, values.json);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    say(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
