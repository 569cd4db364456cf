import { describe, expect, it } from 'vitest';
import { LIFECYCLE_TRANSITIONS, LifecycleMachine, type LifecycleTransition } from './lifecycle.ts';
import type { Logger } from './logger.ts';

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (message: string, fields?: Readonly<Record<string, unknown>>) =>
    lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`);
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('LifecycleMachine', () => {
  it('records each move with its time, the error for error/disabled, and the restart count', () => {
    const machine = new LifecycleMachine({ plugin: 'notes', maxRestarts: 2 });
    const seen: LifecycleTransition[] = [];
    machine.onTransition((t) => seen.push(t));
    expect(machine.report()).toEqual({ state: 'unloaded', restarts: 0, maxRestarts: 2 });
    machine.moveTo('initializing');
    machine.moveTo('active');
    machine.moveTo('active'); // no-op
    machine.lastError = 'plugin notes failed its health check (HTTP 503)';
    machine.recordHealthCheck(false, machine.lastError);
    machine.moveTo('error');
    machine.restarts = 1;
    machine.moveTo('recovering');
    machine.moveTo('active');
    machine.recordHealthCheck(true, 'ignored when healthy');
    expect(seen.map((t) => `${t.from}→${t.to}`)).toEqual([
      'unloaded→initializing',
      'initializing→active',
      'active→error',
      'error→recovering',
      'recovering→active',
    ]);
    expect(seen[2]).toMatchObject({ plugin: 'notes', error: 'plugin notes failed its health check (HTTP 503)', restarts: 0 });
    expect(seen[3]).not.toHaveProperty('error');
    expect(seen[4]).toMatchObject({ restarts: 1 });
    const report = machine.report();
    expect(report).toEqual({
      state: 'active',
      since: seen[4]!.at,
      lastError: 'plugin notes failed its health check (HTTP 503)',
      restarts: 1,
      maxRestarts: 2,
      lastHealthCheck: { healthy: true, at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
    });
  });

  it('a move outside the table is applied and logged as a bug; a throwing listener is logged and the others still run', () => {
    const logger = recordingLogger();
    const machine = new LifecycleMachine({ plugin: 'mcp', part: 'github', logger });
    const seen: string[] = [];
    machine.onTransition(() => {
      throw new Error('listener broke');
    });
    const off = machine.onTransition((t) => seen.push(`${t.part}: ${t.from}→${t.to}`));
    machine.moveTo('recovering');
    expect(machine.state).toBe('recovering');
    expect(seen).toEqual(['github: unloaded→recovering']);
    expect(logger.lines).toEqual([
      'warn lifecycle transition outside the state machine (a bug in Trellis) {"plugin":"mcp","part":"github","from":"unloaded","to":"recovering"}',
      'error a lifecycle listener threw {"plugin":"mcp","error":"listener broke"}',
    ]);
    off();
    machine.moveTo('active');
    expect(seen).toHaveLength(1);
  });

  it('disabled is final except for shutting down', () => {
    expect(LIFECYCLE_TRANSITIONS.disabled).toEqual(['unloaded']);
    for (const from of ['initializing', 'active', 'error', 'recovering'] as const)
      expect(LIFECYCLE_TRANSITIONS[from]).toContain('disabled');
    expect(LIFECYCLE_TRANSITIONS.error).not.toContain('active');
  });
});
