import { describe, expect, it } from 'vitest';
import { parseCommandLine } from './parseCommandLine.ts';

describe('parseCommandLine', () => {
  it('parses a command with global flags anywhere', () => {
    const line = parseCommandLine([
      '--profile',
      'full',
      'tools',
      'call',
      'builtin-tools.echo',
      '--args',
      '{}',
      '--json',
      '--plugin-path',
      'a',
      '--plugin-path',
      'b',
    ]);
    expect(line).toEqual({
      command: ['tools', 'call'],
      args: ['builtin-tools.echo'],
      flags: { profile: 'full', pluginPaths: ['a', 'b'], json: true },
      options: { args: '{}' },
      help: false,
      version: false,
    });
  });

  it.each([
    [['frobnicate'], 'unknown command "frobnicate"; run `trellis --help` for the list'],
    [['tools'], 'missing subcommand for "tools"; use one of: tools list, tools describe, tools search, tools call'],
    [['tools', 'zap'], 'unknown subcommand "zap" for "tools"; use one of: tools list, tools describe, tools search, tools call'],
    [['tools', 'call'], '`trellis tools call` needs <name>'],
    [['plugins', 'list', 'extra'], '`trellis plugins list` takes no arguments; unexpected "extra"'],
    [['doctor', '--args', '{}'], '`trellis doctor` does not take --args'],
    [['doctor', '--profile', 'huge'], '--profile must be one of minimal, messaging, full; got "huge"'],
    [['trust', 'a', 'b'], '`trellis trust` takes [dir]; unexpected "b"'],
    [['doctor', '--origin'], '`trellis doctor` does not take --origin'],
    [['config', 'check', '--revoke', 'x'], '`trellis config check` does not take --revoke'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(message);
  });

  it('parses trust with an optional folder, --list and --revoke, and config show --origin', () => {
    expect([parseCommandLine(['trust']).args, parseCommandLine(['trust', 'dir']).args]).toEqual([[], ['dir']]);
    expect(parseCommandLine(['trust', '--list']).options).toEqual({ list: true });
    expect(parseCommandLine(['trust', '--revoke', '/x']).options).toEqual({ revoke: '/x' });
    expect(parseCommandLine(['config', 'show', '--origin', '--json'])).toMatchObject({
      command: ['config', 'show'],
      options: { origin: true },
      flags: { json: true },
    });
  });

  it('parses serve and its HTTP flags, and refuses them on other commands', () => {
    expect(parseCommandLine(['serve']).options).toEqual({});
    expect(parseCommandLine(['serve', '--http', '--host', '::1', '--port', '0', '--no-auth'])).toMatchObject({
      command: ['serve'],
      options: { http: true, host: '::1', port: '0', noAuth: true },
    });
    expect(() => parseCommandLine(['serve', 'extra'])).toThrow('`trellis serve` takes no arguments; unexpected "extra"');
    expect(() => parseCommandLine(['doctor', '--no-auth'])).toThrow('`trellis doctor` does not take --no-auth');
  });

  it('parses status and plugins list --running, and refuses --running elsewhere or with --state', () => {
    expect(parseCommandLine(['status', '--json'])).toMatchObject({ command: ['status'], args: [], options: {}, flags: { json: true } });
    expect(() => parseCommandLine(['status', 'extra'])).toThrow('`trellis status` takes no arguments; unexpected "extra"');
    expect(parseCommandLine(['plugins', 'list', '--running']).options).toEqual({ running: true });
    expect(() => parseCommandLine(['tools', 'list', '--running'])).toThrow('`trellis tools list` does not take --running');
    expect(() => parseCommandLine(['plugins', 'list', '--running', '--state', 'enabled'])).toThrow(
      '--state goes without --running (the running host lists every plugin)',
    );
  });

  it('names an unknown flag', () => {
    expect(() => parseCommandLine(['doctor', '--nope'])).toThrow(/Unknown option '--nope'.*trellis --help/);
  });
});
