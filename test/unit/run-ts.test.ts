// scripts/run-ts.js and `npm run worker` with real processes: signals reach the TypeScript child, and the
// wrapper ends the way the child did. Each wrapper runs in its own session (detached): no terminal, so
// run-ts passes SIGINT on, and afterAll can kill whatever a failed test left behind by process group.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const RUN_TS = path.join(ROOT, 'scripts', 'run-ts.js');

const ENTRIES: Record<string, string> = {
  'wait.ts': `const tag: string = 'ready';
console.log(\`\${tag} \${process.pid}\`);
setInterval(() => {}, 1000);
`,
  'trap.ts': `for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const)
  process.on(s, () => {
    console.log(\`got \${s}\`);
    process.exit(0);
  });
console.log(\`ready \${process.pid}\`);
setInterval(() => {}, 1000);
`,
  'exit7.ts': `const code: number = 7;
console.log(\`ready \${process.pid}\`);
process.exit(code);
`,
};

let dir: string;
const groups: number[] = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'argus-run-ts-'));
  for (const [name, text] of Object.entries(ENTRIES)) fs.writeFileSync(path.join(dir, name), text);
});

afterAll(() => {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Started {
  pid: number;
  childPid: Promise<number>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}

function start(command: string, args: string[], cwd = ROOT): Started {
  const proc = spawn(command, args, {
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  if (proc.pid === undefined) throw new Error(`cannot start ${command}`);
  groups.push(proc.pid);
  let out = '';
  let resolveChild: (pid: number) => void = () => {};
  const childPid = new Promise<number>((resolve) => (resolveChild = resolve));
  proc.stdout.on('data', (b: Buffer) => {
    out += b.toString();
    const m = /ready (\d+)/.exec(out);
    if (m) resolveChild(Number(m[1]));
  });
  proc.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { pid: proc.pid, childPid, exit, output: () => out };
}

const runTs = (entry: string): Started => start(process.execPath, [RUN_TS, path.join(dir, entry)]);

/** Alive and not a zombie waiting for its parent to reap it. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function goneWithin(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !alive(pid);
}

jest.setTimeout(60_000);

describe('scripts/run-ts.js', () => {
  test('SIGTERM to the wrapper stops the child, and the wrapper dies of SIGTERM like it', async () => {
    const w = runTs('wait.ts');
    const child = await w.childPid;
    expect(alive(child)).toBe(true);
    process.kill(w.pid, 'SIGTERM');
    expect(await w.exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(await goneWithin(child, 5000)).toBe(true);
  });

  test.each(['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const)(
    'passes %s on; a child that handles it and exits 0 makes the wrapper exit 0',
    async (signal) => {
      const w = runTs('trap.ts');
      const child = await w.childPid;
      process.kill(w.pid, signal);
      expect(await w.exit).toEqual({ code: 0, signal: null });
      expect(w.output()).toContain(`got ${signal}`);
      expect(await goneWithin(child, 5000)).toBe(true);
    },
  );

  test('a child that exits 7 makes the wrapper exit 7', async () => {
    const w = runTs('exit7.ts');
    expect(await w.exit).toEqual({ code: 7, signal: null });
  });

  test('a child killed with SIGKILL makes the wrapper end by SIGKILL, not 0', async () => {
    const w = runTs('wait.ts');
    const child = await w.childPid;
    process.kill(child, 'SIGKILL');
    expect(await w.exit).toEqual({ code: null, signal: 'SIGKILL' });
  });
});

describe('npm run worker', () => {
  test('package.json and scripts/worker.sh leave no shell between npm and node', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.worker).toBe('exec bash scripts/worker.sh');
    const sh = fs
      .readFileSync(path.join(ROOT, 'scripts', 'worker.sh'), 'utf8')
      .trim()
      .split('\n');
    expect(sh).toContain('bash scripts/ensure-deps.sh 1>&2');
    expect(sh[sh.length - 1]).toBe('exec node scripts/run-ts.js worker/main.ts "$@"');
  });

  test('kill <pid of npm> stops the child of the same chain (npm → exec bash → exec node run-ts.js)', async () => {
    const pkgDir = fs.mkdtempSync(path.join(dir, 'pkg-'));
    fs.writeFileSync(
      path.join(pkgDir, 'package.json'),
      JSON.stringify({ name: 'run-ts-chain', version: '1.0.0', scripts: { w: 'exec bash w.sh' } }),
    );
    fs.writeFileSync(
      path.join(pkgDir, 'w.sh'),
      `set -euo pipefail\nexec node ${JSON.stringify(RUN_TS)} ${JSON.stringify(path.join(dir, 'wait.ts'))} "$@"\n`,
    );
    const npm = start('npm', ['run', '--silent', 'w'], pkgDir);
    const child = await npm.childPid;
    process.kill(npm.pid, 'SIGTERM');
    // npm passes SIGTERM to its child and, when that dies of it, re-raises it on itself.
    expect(await npm.exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(await goneWithin(child, 5000)).toBe(true);
  });
});
