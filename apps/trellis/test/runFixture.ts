import type { FakeBotApiServer, FakeOpenAiServer } from '@trellis/testing';
import { startLongRunning, type LongRunning, type Sandbox } from './cliHarness.ts';

// What the `trellis run` end-to-end tests share: a messaging config pointing at the local Bot API
// and OpenAI-protocol servers, and starting `run` with the keys those servers accept.

/** The settings a test varies; the rest is fixed. */
export interface MessagingSettings {
  readonly model?: string;
  readonly allowed?: readonly number[];
  readonly pollTimeout?: number;
  readonly apiRoot?: string;
  readonly openrouterEnabled?: boolean;
  readonly telegramEnabled?: boolean;
  /** More `[plugins.entries.telegram.config]` keys (`api_timeout_seconds`…). */
  readonly telegram?: Readonly<Record<string, number | string>>;
}

/** A `runtime.toml` for the messaging profile against the two local servers. */
export function messagingConfig(model: FakeOpenAiServer, telegram: FakeBotApiServer, settings: MessagingSettings = {}): string {
  return [
    '[plugins]',
    'profile = "messaging"',
    ...(settings.openrouterEnabled === false ? ['[plugins.entries.openrouter]', 'enabled = false'] : []),
    '[plugins.entries.openrouter.config]',
    `base_url = "${model.baseUrl}"`,
    `model = "${settings.model ?? 'test/model'}"`,
    'max_retries = 0',
    ...(settings.telegramEnabled === false ? ['[plugins.entries.telegram]', 'enabled = false'] : []),
    '[plugins.entries.telegram.config]',
    `api_root = "${settings.apiRoot ?? telegram.apiRoot}"`,
    `allowed_chat_ids = [${(settings.allowed ?? [7]).join(', ')}]`,
    `poll_timeout_seconds = ${settings.pollTimeout ?? 2}`,
    ...Object.entries(settings.telegram ?? {}).map(([key, value]) => `${key} = ${JSON.stringify(value)}`),
    '',
  ].join('\n');
}

/**
 * Starts `trellis run --config <config>` with the test keys and waits for its "serving" line; a run
 * that never serves is killed before the error is thrown.
 */
export async function startRun(sandbox: Sandbox, config: string, token: string, extraArgs: readonly string[] = []): Promise<LongRunning> {
  const run = startLongRunning(sandbox, ['run', '--config', config, ...extraArgs], {
    OPENROUTER_API_KEY: 'sk-e2e',
    TELEGRAM_BOT_TOKEN: token,
  });
  try {
    await run.waitForLog('the serving line', (l) => l.msg === 'serving');
  } catch (error) {
    run.child.kill('SIGKILL');
    throw error;
  }
  return run;
}
