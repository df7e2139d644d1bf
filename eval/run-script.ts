/**
 * Run a standalone script's `main` (argv → exit code). The exit code is set, not forced with process.exit():
 * exiting at once would cut a large report still being written to a pipe. A thrown error prints one line,
 * `<label>: <message>`, and exits 1.
 */
export function runScript(label: string, main: (argv: string[]) => Promise<number>): void {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`${label}: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
