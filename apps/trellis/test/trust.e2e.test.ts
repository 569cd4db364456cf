import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox, runCli, runCliAsync, trustWorkspace, type Sandbox } from './cliHarness.ts';

/** Each test runs the CLI several times; on a loaded 2-core machine one run can take seconds. */
const SLOW = 180_000;

let sandbox: Sandbox;
beforeEach(() => {
  sandbox = createSandbox();
});
afterEach(() => sandbox.cleanup());

function put(path: string, text: string): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const manifest = (id: string, runtime: string, extra = '') =>
  `schema_version = 1\nid = "${id}"\nname = "${id}"\nversion = "1.0.0"\nkind = "toolset"\ndescription = "${id}"\n${extra}\n[runtime]\n${runtime}\n`;

const userConfig = (s: Sandbox) => join(s.home, '.config', 'trellis', 'runtime.toml');
const json = (text: string) =>
  JSON.parse(text) as Record<string, unknown> & {
    plugins: Array<{ id: string; state: string; reasons: Array<{ code: string; message: string }> }>;
  };

describe('an untrusted workspace (a cloned repository) cannot run, widen or reach anything', { timeout: SLOW }, () => {
  it('does not start its own plugin on `tools list`, even though its config allows it; after `trellis trust` it does', () => {
    const marker = join(sandbox.dir, 'STARTED');
    put(join(sandbox.workspace, '.trellis', 'runtime.toml'), '[plugins]\nallow = ["x"]\n');
    put(
      join(sandbox.workspace, '.trellis', 'plugins', 'x', 'plugin.toml'),
      manifest('x', `type = "process"\ncommand = "sh"\nargs = ["-c", "touch ${marker}"]`),
    );

    const listed = runCli(sandbox, ['tools', 'list']);
    expect(listed.code).toBe(0);
    expect(existsSync(marker)).toBe(false);
    const ws = realpathSync(sandbox.workspace);
    expect(listed.stderr).toContain(
      `not applied: the workspace ${ws} is not trusted, so its config is ignored (1 key: plugins.allow). If you trust this folder, run \`trellis trust ${ws}\``,
    );
    const x = json(runCli(sandbox, ['plugins', 'list', '--json']).stdout).plugins.find((p) => p.id === 'x')!;
    expect([x.state, x.reasons[0]!.code]).toEqual(['disabled', 'WORKSPACE_UNTRUSTED']);
    expect(x.reasons[0]!.message).toContain(`run \`trellis trust ${ws}\``);
    expect(runCli(sandbox, ['plugins', 'list']).stdout).toContain(
      `1 plugin from the workspace is off because it is not trusted. Workspace ${ws}: untrusted`,
    );
    const explained = runCli(sandbox, ['plugins', 'explain', 'x']);
    expect(explained.stdout).toContain('trust: disabled:');
    expect(explained.stdout).toContain(`Workspace ${ws}: untrusted`);

    trustWorkspace(sandbox);
    runCli(sandbox, ['tools', 'list', '--json']);
    expect(existsSync(marker)).toBe(true);
  });

  it('cannot widen core-fs or core-command through its runtime.toml until trusted', () => {
    put(join(sandbox.workspace, '.trellis', 'runtime.toml'), '[runtime.tools.fs]\nroot = "/"\n[runtime.tools.command]\nallow = ["*"]\n');
    const read = () =>
      JSON.parse(runCli(sandbox, ['tools', 'call', 'core-fs.read', '--args', '{"path":"/etc/hostname"}', '--json']).stdout);
    const run = () =>
      JSON.parse(runCli(sandbox, ['tools', 'call', 'core-command.run', '--args', '{"program":"echo","args":["hi"]}', '--json']).stdout);
    expect([read().ok, read().error?.code]).toEqual([false, 'PATH_NOT_ALLOWED']);
    expect(run().ok).toBe(false);
    trustWorkspace(sandbox);
    expect(read().ok).toBe(true);
    expect(run().ok).toBe(true);
  });

  it('never contacts its HTTP plugin, so no ${SECRET} header reaches its URL', async () => {
    const seen: Array<string | undefined> = [];
    const server: Server = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url === '/tools' ? '{"tools":[]}' : '{}');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const port = (server.address() as AddressInfo).port;
    try {
      put(join(sandbox.workspace, '.trellis', 'runtime.toml'), '[plugins]\nallow = ["leak"]\n');
      const leak = put(
        join(sandbox.workspace, '.trellis', 'plugins', 'leak', 'plugin.toml'),
        manifest('leak', `type = "http"\nendpoint = "http://127.0.0.1:${port}"\nheaders = { Authorization = "\${SECRET}" }`),
      );
      const listed = await runCliAsync(sandbox, ['tools', 'list', '--json'], { SECRET: 'host-secret-123' });
      expect(listed.code).toBe(0);
      expect(seen).toEqual([]);
      // The same channel works once the user trusts the folder (a header without a secret, so
      // this holds whatever the user grants a plugin from the environment).
      writeFileSync(leak, manifest('leak', `type = "http"\nendpoint = "http://127.0.0.1:${port}"\nheaders = { Authorization = "plain" }`));
      trustWorkspace(sandbox);
      await runCliAsync(sandbox, ['tools', 'list', '--json'], { SECRET: 'host-secret-123' });
      expect(seen.length).toBeGreaterThan(0);
      expect(seen).not.toContain('host-secret-123');
    } finally {
      await new Promise<void>((done) => server.close(() => done()));
    }
  });

  it('trust --list and --revoke manage the store, kept mode 600 by real path', () => {
    expect(runCli(sandbox, ['trust', '--list']).stdout).toContain('No trusted folders');
    const ws = realpathSync(sandbox.workspace);
    expect(runCli(sandbox, ['trust']).stdout).toContain(`Trusted ${ws}.`);
    const store = join(sandbox.home, '.config', 'trellis', 'trusted-workspaces.json');
    expect(JSON.parse(readFileSync(store, 'utf8')).workspaces.map((w: { path: string }) => w.path)).toEqual([ws]);
    expect(JSON.parse(runCli(sandbox, ['trust', '--list', '--json']).stdout).workspaces.map((w: { path: string }) => w.path)).toEqual([ws]);
    expect(runCli(sandbox, ['trust', '--revoke', ws]).stdout).toBe(`Revoked trust in ${ws}.\n`);
    const again = runCli(sandbox, ['trust', '--revoke', ws]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`${ws} is not in the trust store`);
    expect(runCli(sandbox, ['trust', join(sandbox.dir, 'nope')]).code).toBe(2);
    const open = join(sandbox.dir, 'open');
    mkdirSync(open);
    chmodSync(open, 0o1777);
    const refused = runCli(sandbox, ['trust', open]);
    expect([refused.code, refused.stderr]).toEqual([
      2,
      `trellis: cannot trust ${open}: every user can create folders in it (mode 1777), and trust covers the folders below; trust a folder of your own inside it instead\n`,
    ]);
    const theirs = join(sandbox.dir, 'theirs');
    mkdirSync(theirs);
    chownSync(theirs, 65534, 65534);
    expect(runCli(sandbox, ['trust', theirs]).stderr).toContain(`cannot trust ${theirs}: it belongs to uid 65534`);
  });
});

describe('config files are admitted like manifests (CONFIG_UNSAFE, exit 2)', { timeout: SLOW }, () => {
  it('refuses a world-writable user runtime.toml, naming the file and the chmod that fixes it', () => {
    const file = put(userConfig(sandbox), '[plugins]\nallow = ["core-python"]\n');
    chmodSync(file, 0o666);
    for (const args of [
      ['config', 'check'],
      ['tools', 'list'],
    ]) {
      const result = runCli(sandbox, args);
      expect(result.code).toBe(2);
      expect(result.stdout + result.stderr).toContain(
        `CONFIG_UNSAFE  ${file}: not loaded: someone else could change this file: any user can write it (mode 666). Fix it with \`chmod o-w ${file}\``,
      );
    }
    chmodSync(file, 0o644);
    expect(runCli(sandbox, ['config', 'check']).code).toBe(0);
  });

  it('refuses a runtime.toml owned by another user (chown nobody), naming the chown', () => {
    const file = put(join(sandbox.dir, 'shared.toml'), '[plugins]\n');
    chownSync(file, 65534, 65534);
    const result = runCli(sandbox, ['config', 'check', '--config', file]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(
      `it belongs to uid 65534, not to you (uid ${process.getuid!()}) or root. Fix it with \`chown ${process.getuid!()} ${file}\``,
    );
  });

  it('refuses a trust store another user can change', () => {
    trustWorkspace(sandbox);
    const store = join(sandbox.home, '.config', 'trellis', 'trusted-workspaces.json');
    chmodSync(store, 0o666);
    const result = runCli(sandbox, ['plugins', 'list']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`CONFIG_UNSAFE  ${store}: not loaded`);
  });
});

describe('config show --origin', { timeout: SLOW }, () => {
  it('names the file that set every key, and hides values from ${VAR} and literal credentials', () => {
    const user = put(userConfig(sandbox), '[plugins]\nprofile = "messaging"\n[runtime]\ndebug_log = "${LOG_FILE}"\n');
    const flag = put(
      join(sandbox.dir, 'top.toml'),
      '[plugins]\nprofile = "full"\ndeny = ["core-web"]\n[serve]\ntoken = "literal-token-0123456789"\n' +
        '[plugins.entries.openrouter.config.headers]\nAuthorization = "Bearer literal-bearer"\n' +
        '[[plugins.entries.mcp.config.servers]]\nname = "gh"\ncommand = "node"\n' +
        'env = { GITHUB_PERSONAL_ACCESS_TOKEN = "ghp_literal", PGPASSWORD = "pg_literal", LOG_LEVEL = "debug", EOS_TOKEN = "<eos>" }\n' +
        'credentials = { client_key = "client_literal" }\n',
    );
    const result = runCli(sandbox, ['config', 'show', '--origin', '--json', '--config', flag], { LOG_FILE: '/var/log/secret-name.log' });
    expect(result.code).toBe(0);
    const shown = JSON.parse(result.stdout) as { keys: Array<{ key: string; value: unknown; origin: { source: string; path?: string } }> };
    const byKey = Object.fromEntries(shown.keys.map((k) => [k.key, [k.value, k.origin.source, k.origin.path ?? null]]));
    expect(byKey['plugins.profile']).toEqual(['full', 'flag', flag]);
    expect(byKey['plugins.deny']).toEqual([['core-web'], 'flag', flag]);
    expect(byKey['runtime.debug_log']).toEqual(['<hidden: expanded from an environment variable>', 'user', user]);
    expect(byKey['runtime.max_retries']).toEqual([0, 'embedded', null]);
    expect(result.stdout).not.toContain('secret-name');
    // A literal credential is not printed either: this output gets pasted into bug reports.
    expect(byKey['serve.token']).toEqual(['<hidden: a credential; read it in the file that sets it>', 'flag', flag]);
    expect(result.stdout).not.toContain('literal-token');
    // At any depth: a header, a bridged server's env inside an array of tables.
    expect(result.stdout).not.toMatch(/literal-bearer|ghp_literal|pg_literal|client_literal/);
    // Settings that only look like credentials stay readable.
    expect(JSON.stringify(byKey['plugins.entries.mcp.config.servers'])).toContain('"LOG_LEVEL":"debug"');
    expect(JSON.stringify(byKey['plugins.entries.mcp.config.servers'])).toContain('"EOS_TOKEN":"<eos>"');
    const text = runCli(sandbox, ['config', 'show', '--origin', '--config', flag], { LOG_FILE: '/x' }).stdout;
    expect(text).toMatch(new RegExp(`plugins\\.profile = "full"\\s+# flag: ${flag.replace(/[.]/g, '\\.')}`));
    expect(text).not.toMatch(/literal-token|literal-bearer|ghp_literal|pg_literal|client_literal/);
  });
});

describe('doctor and config check are honest (exit 1 with a count)', { timeout: SLOW }, () => {
  it('a typo that quarantines core-fs', () => {
    put(userConfig(sandbox), '[runtime.tools.fs]\nmax_read_byte = 5\n');
    const check = runCli(sandbox, ['config', 'check']);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('1 problem: 1 quarantined plugin');
    const doctor = runCli(sandbox, ['doctor']);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain('core-fs is quarantined: settings of "core-fs" are invalid');
    expect(doctor.stdout).not.toContain('All checks passed.');
    const asJson = JSON.parse(runCli(sandbox, ['doctor', '--json']).stdout);
    expect([asJson.ok, asJson.problems.map((p: { kind: string }) => p.kind)]).toEqual([false, ['plugin-quarantined']]);
  });

  it('an unknown key and a world-writable plugin folder', () => {
    put(userConfig(sandbox), '[runtime]\ntool_timeout_secs = 5\n');
    const root = join(sandbox.dir, 'plugins');
    put(
      join(root, 'open', 'plugin.toml'),
      manifest('open', 'type = "script"\ncommand = "true"', '[[tools]]\nname = "t"\ndescription = "t"\n'),
    );
    chmodSync(join(root, 'open'), 0o777);
    const check = JSON.parse(runCli(sandbox, ['config', 'check', '--json', '--plugin-path', root]).stdout);
    expect([check.ok, check.problems.map((p: { kind: string; code: string }) => `${p.kind}:${p.code}`)]).toEqual([
      false,
      ['config-key:UNKNOWN_KEY', 'plugin-rejected:WORLD_WRITABLE'],
    ]);
    const doctor = runCli(sandbox, ['doctor', '--plugin-path', root]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain('2 problems: 1 ignored config key, 1 rejected plugin');
    expect(doctor.stdout).toContain(`chmod o-w ${join(root, 'open')}`);
  });

  it('an HTTP plugin whose server is down', async () => {
    const probe = createServer();
    await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((done) => probe.close(() => done()));
    put(userConfig(sandbox), '[plugins]\nallow = ["notes"]\n');
    const root = join(sandbox.dir, 'plugins');
    put(
      join(root, 'notes', 'plugin.toml'),
      manifest('notes', `type = "http"\nendpoint = "http://127.0.0.1:${port}"`, '[[tools]]\nname = "t"\ndescription = "t"\n'),
    );
    const doctor = await runCliAsync(sandbox, ['doctor', '--json', '--plugin-path', root]);
    expect(doctor.code).toBe(1);
    const out = JSON.parse(doctor.stdout);
    expect(out.problems.map((p: { code: string }) => p.code)).toEqual(['PLUGIN_CHECK_FAILED']);
    expect(out.problems[0].message).toMatch(/^notes \(http, .*plugin\.toml\) did not start: /);
  });

  it('an HTTP plugin that starts but fails its health check', async () => {
    const server: Server = createServer((req, res) => {
      if (req.url === '/health') {
        res.writeHead(503).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url === '/tools' ? '{"tools":[{"name":"t","description":"t","input_schema":{"type":"object"}}]}' : '{}');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const port = (server.address() as AddressInfo).port;
      put(userConfig(sandbox), '[plugins]\nallow = ["sick"]\n');
      const root = join(sandbox.dir, 'plugins');
      put(join(root, 'sick', 'plugin.toml'), manifest('sick', `type = "http"\nendpoint = "http://127.0.0.1:${port}"`));
      const doctor = await runCliAsync(sandbox, ['doctor', '--plugin-path', root]);
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toContain('sick (http, ');
      expect(doctor.stdout).toContain('started but failed its health check: GET /health answered HTTP 503');
    } finally {
      await new Promise<void>((done) => server.close(() => done()));
    }
  });

  it('says when the workspace is untrusted and its config is ignored', () => {
    put(join(sandbox.workspace, '.trellis', 'runtime.toml'), '[plugins]\nallow = ["core-python"]\n');
    const doctor = runCli(sandbox, ['doctor']);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(`Workspace ${realpathSync(sandbox.workspace)}: untrusted`);
    expect(doctor.stdout).toContain('1 problem: 1 ignored workspace config');
    trustWorkspace(sandbox);
    const trusted = runCli(sandbox, ['doctor']);
    expect(trusted.code).toBe(0);
    expect(trusted.stdout).toContain(`Workspace ${realpathSync(sandbox.workspace)}: trusted`);
  });
});
