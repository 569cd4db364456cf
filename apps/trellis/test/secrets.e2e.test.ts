import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { SECRET_HUNT, huntFoundSecret, spawnAsNobody } from '@trellis/test-support';
import { copyCliForAnotherUser, createSandbox, runCli, type Sandbox } from './cliHarness.ts';

// A process plugin (NDJSON) whose one tool runs the same hunt from inside the plugin.
const PROCESS_PLUGIN = `
import { execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
const send = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const req = JSON.parse(line);
  if (req.type === 'initialize') send({ id: req.id, type: 'initialize_response', success: true });
  else if (req.type === 'get_tools') send({ id: req.id, type: 'get_tools_response', tools: [{ name: 'hunt', description: 'Hunt', parameters: { type: 'object' } }] });
  else if (req.type === 'call_tool') send({ id: req.id, type: 'call_tool_response', success: true, data: { out: execFileSync('sh', ['hunt.sh', process.argv[2]], { encoding: 'utf8' }).trim() } });
  else if (req.type === 'shutdown') { send({ id: req.id, type: 'shutdown_response', success: true }); process.exit(0); }
});
`;

const SECRET = `sk-or-v1-e2e-${process.pid}-${Date.now()}`;
let sandbox: Sandbox;
let config: string;

beforeEach(() => {
  sandbox = createSandbox({ OPENROUTER_API_KEY: SECRET });
  // Every user may read what the children need (the test also runs the CLI as nobody).
  chmodSync(sandbox.dir, 0o755);
  writeFileSync(join(sandbox.workspace, 'hunt.sh'), SECRET_HUNT);
  const plugins = join(sandbox.dir, 'plugins');
  for (const [id, runtime, files] of [
    ['hunt-script', `type = "script"\ncommand = "sh"\nargs = ["hunt.sh", "${SECRET}"]`, {}],
    ['hunt-process', `type = "process"\ncommand = "node"\nargs = ["plugin.mjs", "${SECRET}"]`, { 'plugin.mjs': PROCESS_PLUGIN }],
  ] as const) {
    mkdirSync(join(plugins, id), { recursive: true });
    writeFileSync(join(plugins, id, 'hunt.sh'), SECRET_HUNT);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(plugins, id, name), text);
    writeFileSync(
      join(plugins, id, 'plugin.toml'),
      `schema_version = 1\nid = "${id}"\nname = "${id}"\nversion = "1.0.0"\nkind = "toolset"\n\n[runtime]\n${runtime}\n\n[[tools]]\nname = "hunt"\ndescription = "Hunt for the host's secret"\n`,
    );
  }
  const skill = join(sandbox.home, '.config', 'trellis', 'skills', 'hunt');
  mkdirSync(skill, { recursive: true });
  writeFileSync(join(skill, 'SKILL.md'), '---\nname: hunt\ndescription: Hunt for the host secret.\nscripts: [hunt.sh]\n---\nRun it.\n');
  writeFileSync(join(skill, 'hunt.sh'), SECRET_HUNT.replace('mark="$1"', `mark="${SECRET}"`));
  config = join(sandbox.dir, 'runtime.toml');
  writeFileSync(
    config,
    `[plugins]\nallow = ["hunt-script", "hunt-process"]\npaths = ["./plugins"]\n\n[runtime.tools.command]\nallow = ["sh"]\n`,
  );
  for (const path of [
    sandbox.home,
    join(sandbox.home, '.config'),
    join(sandbox.home, '.config', 'trellis'),
    join(sandbox.home, '.config', 'trellis', 'skills'),
    skill,
    plugins,
    sandbox.workspace,
  ])
    chmodSync(path, 0o755);
});
afterEach(() => sandbox.cleanup());

function call(tool: string, args: unknown): string {
  const result = runCli(sandbox, ['tools', 'call', tool, '--args', JSON.stringify(args), '--json', '--config', config]);
  expect(result.stderr).not.toContain('internal error');
  return result.stdout;
}

describe('secrets stay in the host (built CLI, OPENROUTER_API_KEY in its environment)', () => {
  it('no child Trellis starts finds the key: core-command program, script plugin, process plugin, skill script', () => {
    const outputs = {
      command: call('core-command.run', { program: 'sh', args: [join(sandbox.workspace, 'hunt.sh'), SECRET] }),
      script: call('hunt-script.hunt', {}),
      process: call('hunt-process.hunt', {}),
      skill: call('skill-source-local.run', { name: 'hunt' }),
    };
    for (const [child, out] of Object.entries(outputs)) {
      expect(out, child).toContain('found:');
      expect(huntFoundSecret(out), child).toBe(false);
      expect(out, child).not.toContain(`${SECRET}\n`);
    }
  });

  it('holds when the CLI runs as an unprivileged user', () => {
    if (process.getuid?.() !== 0) {
      // Without root the suite already runs unprivileged: the test above is this case.
      expect(process.getuid?.()).not.toBe(0);
      return;
    }
    chmodSync(join(sandbox.dir, 'runtime.toml'), 0o644);
    execFileSync('chown', ['-R', '65534:65534', sandbox.dir]);
    // The checkout may sit where nobody cannot enter; nobody runs a copy of the build instead.
    const copy = copyCliForAnotherUser();
    onTestFinished(() => copy.remove());
    const child = spawnAsNobody(
      process.execPath,
      [
        copy.cli,
        'tools',
        'call',
        'core-command.run',
        '--args',
        JSON.stringify({ program: 'sh', args: [join(sandbox.workspace, 'hunt.sh'), SECRET] }),
        '--json',
        '--config',
        config,
      ],
      { cwd: sandbox.workspace, env: { ...sandbox.env } },
    );
    const out = child.stdout;
    expect(child.status, child.stderr).toBe(0);
    expect(out).toContain('found:');
    expect(huntFoundSecret(out)).toBe(false);
  });
});
