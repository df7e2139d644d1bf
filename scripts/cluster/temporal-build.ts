// The Temporal server and temporal-sql-tool of the version docker-compose.yml pins, built from the Go module
// proxy into .tools/temporal-server-<version>/bin once, and the module's own schema files found in the Go module
// cache. Nothing is fetched from anywhere but the proxies `go env GOPROXY` names: `direct` (a VCS checkout from the
// origin) is taken out of the list.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { lockFile } from './processes';

const MODULE = 'go.temporal.io/server';
const PACKAGES = [
  { pkg: 'cmd/server', built: 'server', name: 'temporal-server' },
  { pkg: 'cmd/tools/sql', built: 'sql', name: 'temporal-sql-tool' },
] as const;

export interface TemporalTools {
  serverBin: string;
  sqlToolBin: string;
  /** The module's folder in the Go module cache (its schema/ holds the SQL schema files). */
  moduleDir: string;
  /** Seconds the build took, when this call built the binaries. */
  builtInSeconds?: number;
}

function go(args: string[], env: NodeJS.ProcessEnv, cwd: string): { ok: boolean; out: string } {
  const r = spawnSync('go', args, { env, cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) {
    throw new Error(
      `cannot run go (${r.error.message}): the Temporal server is built from the Go module proxy; install Go 1.26+`,
    );
  }
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
}

/** The environment of every go command here: -mod=mod, and GOPROXY as configured minus `direct` and `off`. */
function goEnv(cwd: string): NodeJS.ProcessEnv {
  const read = (key: string) => go(['env', key], process.env, cwd).out.trim();
  const proxies = read('GOPROXY')
    .split(/[,|]/)
    .map((p) => p.trim())
    .filter((p) => p && p !== 'direct' && p !== 'off');
  if (!proxies.length) {
    throw new Error('go env GOPROXY names no module proxy (only direct/off): set GOPROXY to the module proxy');
  }
  const flags = read('GOFLAGS')
    .split(/\s+/)
    .filter((f) => f && !f.startsWith('-mod='));
  return { ...process.env, GOPROXY: proxies.join(','), GOFLAGS: [...flags, '-mod=mod'].join(' ') };
}

function versionOf(bin: string): string {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  return r.status === 0 ? r.stdout.trim() : '';
}

/**
 * The two binaries of `version`, built with `go install pkg@v<version>` on first use (minutes on 2 cores; the
 * time goes to `build.json` beside them), and the module's folder. `say` reports progress.
 */
export async function ensureTemporalTools(
  root: string,
  version: string,
  say: (line: string) => void,
): Promise<TemporalTools> {
  const home = path.join(root, '.tools', `temporal-server-${version}`);
  const bin = path.join(home, 'bin');
  const target = (name: string) => path.join(bin, name);
  mkdirSync(home, { recursive: true });
  const env = goEnv(home);
  const ready = () => PACKAGES.every((p) => versionOf(target(p.name)).endsWith(` ${version}`));

  let builtInSeconds: number | undefined;
  if (!ready()) {
    const release = await lockFile(path.join(home, '.build.lock'));
    try {
      if (!ready()) builtInSeconds = build(home, version, env, say);
    } finally {
      release();
    }
  }

  const download = go(['mod', 'download', '-json', `${MODULE}@v${version}`], env, home);
  const moduleDir = download.ok ? ((JSON.parse(download.out) as { Dir?: string }).Dir ?? '') : '';
  if (!moduleDir || !existsSync(path.join(moduleDir, 'schema'))) {
    throw new Error(`go mod download ${MODULE}@v${version} gave no module folder with schema/:\n${download.out}`);
  }
  return {
    serverBin: target('temporal-server'),
    sqlToolBin: target('temporal-sql-tool'),
    moduleDir,
    ...(builtInSeconds !== undefined ? { builtInSeconds } : {}),
  };
}

function build(home: string, version: string, env: NodeJS.ProcessEnv, say: (line: string) => void): number {
  const log = path.join(home, 'build.log');
  const out = mkdtempSync(path.join(home, '.build-'));
  const started = Date.now();
  say(
    `building Temporal server ${version} and temporal-sql-tool from the Go module proxy (first use only; ` +
      `4 to 6 minutes on 2 cores; log ${path.relative(process.cwd(), log)})`,
  );
  try {
    // nice: the build takes both cores for minutes; whatever else runs on the machine keeps its share.
    const r = spawnSync(
      'nice',
      ['-n', '10', 'go', 'install', '-p', '2', ...PACKAGES.map((p) => `${MODULE}/${p.pkg}@v${version}`)],
      { env: { ...env, GOBIN: out }, cwd: home, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
    );
    writeFileSync(log, `${r.stdout ?? ''}${r.stderr ?? ''}`);
    if (r.error || r.status !== 0) {
      throw new Error(
        `go install ${MODULE}@v${version} failed (${r.error?.message ?? `exit ${r.status}`}); see ${log}:\n` +
          `${(r.stderr ?? '').split('\n').slice(-15).join('\n')}`,
      );
    }
    mkdirSync(path.join(home, 'bin'), { recursive: true });
    for (const p of PACKAGES) renameSync(path.join(out, p.built), path.join(home, 'bin', p.name));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  const seconds = Math.round((Date.now() - started) / 100) / 10;
  const goVersion = go(['version'], env, home).out.trim();
  writeFileSync(
    path.join(home, 'build.json'),
    `${JSON.stringify({ version, seconds, goVersion, builtAt: new Date().toISOString() }, null, 2)}\n`,
  );
  say(`built in ${seconds} s`);
  return seconds;
}
