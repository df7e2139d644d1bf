import { Option, type Command } from 'commander';
import { startFakeProvider, FAKE_SCENARIO_HELP } from '../../fakes/provider';
import { FAKE_REVIEWERS, type FakeReviewer } from '../../fakes/model';
import { InputError } from '../sweeps';
import { err, out } from './output';

async function fakeProvider(o: {
  scenario: string;
  port: string;
  host: string;
  reviewer: FakeReviewer;
  latencyMs: string;
  quiet?: boolean;
}) {
  if (!/^\d+$/.test(o.port)) throw new InputError(`--port must be a number, got "${o.port}"`);
  if (!/^\d+$/.test(o.latencyMs)) throw new InputError(`--latency-ms must be a number, got "${o.latencyMs}"`);
  let provider;
  try {
    provider = await startFakeProvider({
      port: Number(o.port),
      host: o.host,
      scenario: o.scenario,
      reviewer: o.reviewer,
      latencyMs: Number(o.latencyMs),
      log: o.quiet ? undefined : (line) => err(line),
    });
  } catch (e) {
    if (/unknown scenario|unknown reviewer|invalid port|invalid latencyMs|loopback/.test((e as Error).message))
      throw new InputError((e as Error).message);
    throw e;
  }
  out(
    [
      `Fake OpenAI-compatible provider on ${provider.url} (scenario ${o.scenario}, reviewer ${o.reviewer}).`,
      `Base URL: ${provider.baseUrl()}`,
      `Any scenario by path: ${provider.url}/s/<scenario>[/r/<reviewer>]/v1, e.g. ${provider.baseUrl('burst-2')}`,
      '',
      'Scenarios:',
      ...FAKE_SCENARIO_HELP.map((l) => `  ${l}`),
      `Reviewers: ${FAKE_REVIEWERS.join(', ')}`,
      '',
      'Endpoints file (--endpoints-file) for a sweep against it:',
      `  ${JSON.stringify([{ id: 'fake', baseUrl: provider.baseUrl(), model: 'argus-fake' }])}`,
      '',
      'Ctrl-C stops it.',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await provider.close();
  err('fake provider stopped');
}

/** `argus fake-provider`: the loopback fake provider of fakes/, for trials without a key. */
export function addFakeProviderCommand(program: Command): void {
  program
    .command('fake-provider')
    .description('Run the fake OpenAI-compatible provider (scripted model, misbehaves on request) until Ctrl-C.')
    .option('--scenario <name>', 'behaviour of the base URL /v1 (see the list it prints)', 'ok')
    .option('--port <port>', 'port on loopback (0: any free one)', '0')
    .option('--host <host>', 'loopback address to bind', '127.0.0.1')
    .addOption(
      new Option('--reviewer <kind>', 'how it answers review tasks').choices(FAKE_REVIEWERS).default('correct'),
    )
    .option('--latency-ms <ms>', "delay every answer by this many ms (a provider's latency, for benchmarks)", '0')
    .option('--quiet', 'do not log requests on stderr')
    .addHelpText('after', `\nScenarios:\n${FAKE_SCENARIO_HELP.map((l) => `  ${l}`).join('\n')}`)
    .action(async (o: Parameters<typeof fakeProvider>[0]) => fakeProvider(o));
}
