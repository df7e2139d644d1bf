// Jest globalSetup: gives the whole run one dedicated Temporal dev server, separate from `npm run server`.
// Tests read where it is from process.env (see test/support/temporal-env.ts):
//   TEMPORAL_TEST_ADDRESS  host:port of the frontend (set it yourself to use an existing server instead)
//   TEMPORAL_TEST_UI_URL   Web UI of that server
//   TEMPORAL_CLI_PATH      absolute path of the temporal CLI
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const HOST = '127.0.0.1';
const HEALTH_TIMEOUT_MS = 60_000;
// Mirrors SEARCH_ATTRIBUTES in domain/ids.ts; test/unit/docker-compose.test.ts fails if they drift.
const SEARCH_ATTRIBUTES = ['ArgusPartial=Bool', 'ArgusCatalog=Keyword', 'ArgusMode=Keyword'];
// Mirrors SERVER_DYNAMIC_CONFIG in domain/ids.ts (same test).
const SERVER_DYNAMIC_CONFIG = ['history.transferProcessorMaxPollRPS=200'];

function findCli() {
  if (process.env.TEMPORAL_CLI_PATH && fs.existsSync(process.env.TEMPORAL_CLI_PATH)) {
    return path.resolve(process.env.TEMPORAL_CLI_PATH);
  }
  const out = execFileSync('bash', [path.join(ROOT, 'scripts', 'find-temporal.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return out.trim();
}

function healthy(cli, address) {
  try {
    const out = execFileSync(cli, ['operator', 'cluster', 'health', '--address', address], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 5_000,
    });
    return out.includes('SERVING');
  } catch {
    return false;
  }
}

function portFree(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, HOST, () => server.close(() => resolve(true)));
  });
}

function ephemeralPort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// 7244/8244 when free (easy to find in the UI while debugging), otherwise any free pair, so that
// several runs (or a developer's and CI's) can share a machine.
async function pickPorts() {
  if ((await portFree(7244)) && (await portFree(8244))) return { port: 7244, uiPort: 8244 };
  return { port: await ephemeralPort(), uiPort: await ephemeralPort() };
}

function ensureSearchAttributes(cli, address) {
  for (const spec of SEARCH_ATTRIBUTES) {
    const [name, type] = spec.split('=');
    try {
      execFileSync(
        cli,
        ['operator', 'search-attribute', 'create', '--address', address, '--name', name, '--type', type],
        {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
    } catch (err) {
      if (!/already exists/i.test(String(err.stderr)))
        throw new Error(`cannot register ${name} on ${address}: ${err.stderr}`, { cause: err });
    }
  }
}

// One log per port; random ports would pile them up, so drop those older than a day.
function pruneOldLogs(dir) {
  const dayAgo = Date.now() - 24 * 3600 * 1000;
  for (const name of fs.readdirSync(dir)) {
    if (!/^temporal-test-\d+\.log$/.test(name)) continue;
    const file = path.join(dir, name);
    try {
      if (fs.statSync(file).mtimeMs < dayAgo) fs.unlinkSync(file);
    } catch {
      /* another run removed it */
    }
  }
}

/** Signals the server's whole process group (it was spawned detached, so it leads one). */
function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

module.exports = async function globalSetup() {
  const cli = findCli();
  process.env.TEMPORAL_CLI_PATH = cli;

  if (process.env.TEMPORAL_TEST_ADDRESS) {
    const address = process.env.TEMPORAL_TEST_ADDRESS;
    if (!healthy(cli, address))
      throw new Error(`TEMPORAL_TEST_ADDRESS=${address} does not answer as a healthy Temporal server`);
    ensureSearchAttributes(cli, address);
    return;
  }

  // A port taken between the probe and the bind (another run starting at the same moment) makes the
  // server exit at once; try again on fresh ephemeral ports.
  let lastError;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const ports = attempt === 1 ? await pickPorts() : { port: await ephemeralPort(), uiPort: await ephemeralPort() };
    try {
      const { address, uiUrl, ms } = await startServer(cli, ports);
      process.env.TEMPORAL_TEST_ADDRESS = address;
      process.env.TEMPORAL_TEST_UI_URL = uiUrl;
      if (process.env.ARGUS_TEST_VERBOSE) {
        process.stderr.write(`\nargus: test Temporal server ${address} (UI ${uiUrl}) up in ${ms} ms\n`);
      }
      return;
    } catch (err) {
      lastError = err;
      if (!err.exitedEarly) break;
    }
  }
  throw lastError;
};

async function startServer(cli, { port, uiPort }) {
  const address = `${HOST}:${port}`;
  const logDir = path.join(ROOT, '.argus', 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  pruneOldLogs(logDir);
  const logFile = path.join(logDir, `temporal-test-${port}.log`);
  const log = fs.openSync(logFile, 'w');
  const args = ['server', 'start-dev', '--ip', HOST, '--port', String(port), '--ui-port', String(uiPort)];
  for (const spec of SEARCH_ATTRIBUTES) args.push('--search-attribute', spec);
  for (const spec of SERVER_DYNAMIC_CONFIG) args.push('--dynamic-config-value', spec);
  // No --db-filename: an in-memory store, fresh for every run and gone with the process.
  const started = Date.now();
  const child = spawn(cli, args, { cwd: os.tmpdir(), detached: true, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  child.unref();
  let exited = null;
  const exit = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      exited = signal ?? code;
      resolve();
    }),
  );

  const state = { pid: child.pid, logFile, exit, stopped: false };
  const stop = () => {
    if (state.stopped) return;
    state.stopped = true;
    killGroup(child.pid, 'SIGKILL');
  };
  // Teardown is the normal path; these cover a run that is interrupted before it gets there.
  const onSignal = (sig) => {
    stop();
    process.kill(process.pid, sig);
  };
  process.once('exit', stop);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.once(sig, onSignal);
  const fail = (why, exitedEarly) => {
    stop();
    process.removeListener('exit', stop);
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.removeListener(sig, onSignal);
    const tail = fs.readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n');
    return Object.assign(new Error(`test Temporal dev server on ${address} ${why}; log ${logFile}:\n${tail}`), {
      exitedEarly,
    });
  };
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  // Healthy is not enough when the port was taken: it may be someone else's server answering. Ours
  // must also still be alive a moment later.
  for (;;) {
    if (exited !== null) throw fail(`exited (${exited})`, true);
    if (Date.now() - started > HEALTH_TIMEOUT_MS) throw fail(`was not healthy after ${HEALTH_TIMEOUT_MS / 1000} s`);
    if (healthy(cli, address)) {
      await sleep(300);
      if (exited === null) break;
    } else {
      await sleep(200);
    }
  }
  globalThis.__ARGUS_TEST_TEMPORAL__ = state;
  return { address, uiUrl: `http://${HOST}:${uiPort}`, ms: Date.now() - started };
}

module.exports.killGroup = killGroup;
