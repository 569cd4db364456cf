import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MODULE = fileURLToPath(new URL('./earlyHangups.ts', import.meta.url));

/** Runs a child that loads the module with `words` on its command line, sends itself SIGHUP, then reports. */
function hangUpWith(words: readonly string[]) {
  const script = `
    const { takeEarlyHangups } = await import(${JSON.stringify(MODULE)});
    process.kill(process.pid, 'SIGHUP');
    setTimeout(() => {
      console.log(JSON.stringify({ caught: takeEarlyHangups(), again: takeEarlyHangups() }));
    }, 100);
  `;
  return spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, '--', ...words], { encoding: 'utf8' });
}

describe('earlyHangups: SIGHUP before serve/run hold it themselves', () => {
  it('holds a SIGHUP for a serve or run command line, and hands it over once', () => {
    for (const command of ['serve', 'run']) {
      const child = hangUpWith(['--config', 'x.toml', command]);
      expect(child.signal, child.stderr).toBeNull();
      expect(JSON.parse(child.stdout)).toEqual({ caught: true, again: false });
    }
  });

  it('leaves any other command to Node: SIGHUP ends it', () => {
    const child = hangUpWith(['tools', 'list']);
    expect(child.signal).toBe('SIGHUP');
    expect(child.stdout).toBe('');
  });
});
