import { describe, expect, it } from 'vitest';
import { parseRuntimeConfig } from './parseRuntimeConfig.ts';
import { RuntimeConfigSchema } from './RuntimeConfigSchema.ts';

const DEFAULTS = RuntimeConfigSchema.parse({});

function parse(text: string | Uint8Array, env: Record<string, string | undefined> = {}) {
  return parseRuntimeConfig(text, { fileName: 'runtime.toml', env, baseDir: '/base' });
}

describe('parseRuntimeConfig: valid input', () => {
  it('fills every default for an empty file', () => {
    expect(parse('')).toEqual({ value: DEFAULTS, warnings: [], errors: [] });
  });

  it('reads every section and resolves relative paths against baseDir', () => {
    const result = parse(`
[plugins]
profile = "full"
allow = ["core-python"]
deny = ["core-web"]
paths = ["./vendor-plugins", "/opt/trellis/plugins", "../shared"]

[plugins.entries.telegram]
enabled = true
config = { chat_ids = [1, 2] }

[runtime]
tool_timeout_seconds = 30
audit_log = "logs/audit.jsonl"
debug_log = "/var/log/trellis-debug.log"

[runtime.policy]
deny = ["core-command.*"]

[runtime.tools.fs]
root = "."
max_read_bytes = 1048576

[serve]
token = "0123456789abcdef0123"
tool_names = "short"
`);
    expect(result).toEqual({
      value: {
        plugins: {
          profile: 'full',
          allow: ['core-python'],
          deny: ['core-web'],
          paths: ['/base/vendor-plugins', '/opt/trellis/plugins', '/shared'],
          entries: { telegram: { enabled: true, config: { chat_ids: [1, 2] } } },
        },
        runtime: {
          ...DEFAULTS.runtime,
          tool_timeout_seconds: 30,
          audit_log: '/base/logs/audit.jsonl',
          debug_log: '/var/log/trellis-debug.log',
          policy: { allow: ['*'], deny: ['core-command.*'], ask: [] },
          tools: { fs: { root: '.', max_read_bytes: 1048576 } },
        },
        serve: { token: '0123456789abcdef0123', tool_names: 'short', allowed_origins: [] },
      },
      warnings: [],
      errors: [],
    });
  });

  it('refuses a [serve] token shorter than 16 characters, naming the key', () => {
    const result = parseRuntimeConfig('[serve]\ntoken = "short"\n', { fileName: 'runtime.toml', env: {} });
    expect(result.errors.map((e) => e.message).join('\n')).toMatch(
      /serve\.token.*must be empty or a usable token: it must be at least 16 characters/,
    );
  });

  it('refuses a [serve] token a client could not send: a trailing newline, a space, a non-ASCII letter', () => {
    for (const token of ['0123456789abcdef0123\\n', '0123456789 abcdef0123', '0123456789abcdéf0123']) {
      const result = parseRuntimeConfig(`[serve]\ntoken = "${token}"\n`, { fileName: 'runtime.toml', env: {} });
      expect(result.errors.map((e) => e.message).join('\n')).toMatch(/serve\.token.*may hold only letters, digits and - \. _ ~ \+ \//);
    }
    expect(parseRuntimeConfig('[serve]\ntoken = "AbC-._~+/0123456789=="\n', { fileName: 'runtime.toml', env: {} }).errors).toEqual([]);
  });

  it('refuses a health check interval under 1 second (0 turns checks off), naming the key', () => {
    const result = parse('[plugins.entries.git-helper]\nhealth_check_interval_seconds = 0.0001\n');
    expect(result.errors.map((e) => e.message).join('\n')).toMatch(
      /plugins\.entries\.git-helper\.health_check_interval_seconds.*must be 0 \(no health checks\) or at least 1 second/,
    );
    expect(parse('[plugins.entries.git-helper]\nhealth_check_interval_seconds = 0\n').errors).toEqual([]);
    expect(parse('[plugins.entries.git-helper]\nhealth_check_interval_seconds = 1.5\n').errors).toEqual([]);
  });

  it('resolves relative paths against the folder of fileName when no baseDir is given', () => {
    const result = parseRuntimeConfig('[plugins]\npaths = ["p"]\n[runtime]\naudit_log = "a.log"\n', {
      fileName: '/etc/trellis/runtime.toml',
      env: {},
    });
    expect(result.value?.plugins.paths).toEqual(['/etc/trellis/p']);
    expect(result.value?.runtime.audit_log).toBe('/etc/trellis/a.log');
    expect(result.value?.runtime.debug_log).toBe('');
  });

  it('accepts a UTF-8 BOM and CRLF line ends, as bytes and as text', () => {
    const text = '\uFEFF[plugins]\r\nprofile = "messaging"\r\n# ünïcode comment\r\n';
    const expected = { value: { ...DEFAULTS, plugins: { ...DEFAULTS.plugins, profile: 'messaging' } }, warnings: [], errors: [] };
    expect(parse(text)).toEqual(expected);
    expect(parse(new TextEncoder().encode(text))).toEqual(expected);
  });

  it('returns plain objects (with Object.prototype) in open tables', () => {
    const result = parse('[runtime.tools.web]\nheaders = { accept = "text/html" }\n');
    const web = result.value?.runtime.tools.web as Record<string, unknown>;
    expect(Object.getPrototypeOf(web)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(web.headers)).toBe(Object.prototype);
  });
});

describe('parseRuntimeConfig: TOML syntax errors carry line and column', () => {
  it('reports a missing value', () => {
    expect(parse('[plugins]\nprofile = \n')).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "TOML_SYNTAX",
            "column": 11,
            "file": "runtime.toml",
            "line": 2,
            "message": "runtime.toml:2:11: invalid TOML: invalid value; fix the file at this position",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
  });

  it('reports a duplicate table', () => {
    expect(parse('[runtime]\nmax_retries = 1\n\n[runtime]\nmax_retries = 2\n')).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "TOML_SYNTAX",
            "column": 2,
            "file": "runtime.toml",
            "line": 4,
            "message": "runtime.toml:4:2: invalid TOML: trying to redefine an already defined table or value; fix the file at this position",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
  });

  it('reports an unterminated string on a CRLF line with the right line', () => {
    expect(parse('[plugins]\r\nprofile = "full\r\n')).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "TOML_SYNTAX",
            "column": 16,
            "file": "runtime.toml",
            "line": 2,
            "message": "runtime.toml:2:16: invalid TOML: control characters are not allowed in strings; fix the file at this position",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
  });

  it('reports an integer that does not fit and never echoes the source line', () => {
    const result = parse('[runtime]\nmax_retries = 99999999999999999999 # sk-literal-in-file\n');
    expect(result).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "TOML_SYNTAX",
            "column": 15,
            "file": "runtime.toml",
            "line": 2,
            "message": "runtime.toml:2:15: invalid TOML: integer value cannot be represented losslessly; fix the file at this position",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
    expect(JSON.stringify(result)).not.toContain('sk-literal-in-file');
  });
});

describe('parseRuntimeConfig: schema errors', () => {
  it('names file, line, column and key path, in the words of a TOML user', () => {
    expect(
      parse(`[plugins]
profile = "huge"
allow = ["Core_Python", "ok"]
paths = [""]

[plugins.entries.Bad_Id]
enabled = true

[plugins.entries.telegram]
enabled = "yes"
max_restarts = 1000

[runtime]
tool_timeout_seconds = 0
max_retries = 1.5
audit_log = 5
capabilities = "*"
tools.fs = 3
policy = []
max_output_bytes = inf
retry_backoff_ms = nan
debug_log = 1979-05-27
`),
    ).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "CONFIG_SCHEMA",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "plugins.profile",
            "line": 2,
            "message": "runtime.toml:2:1: plugins.profile: must be one of "minimal", "messaging", "full"",
          },
          {
            "code": "CONFIG_SCHEMA",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "plugins.allow[0]",
            "line": 3,
            "message": "runtime.toml:3:1: plugins.allow[0]: must be 1–64 lowercase letters, digits or dashes, starting and ending with a letter or digit",
          },
          {
            "code": "CONFIG_SCHEMA",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "plugins.paths[0]",
            "line": 4,
            "message": "runtime.toml:4:1: plugins.paths[0]: must not be empty",
          },
          {
            "code": "CONFIG_SCHEMA",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "plugins.entries.Bad_Id",
            "line": 6,
            "message": "runtime.toml:6:1: plugins.entries.Bad_Id: is not a valid key here: must be 1–64 lowercase letters, digits or dashes, starting and ending with a letter or digit",
          },
          {
            "code": "CONFIG_SCHEMA",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "plugins.entries.telegram.enabled",
            "line": 10,
            "message": "runtime.toml:10:1: plugins.entries.telegram.enabled: must be true or false, not a string",
          },
          {
            "code": "CONFIG_SCHEMA",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "plugins.entries.telegram.max_restarts",
            "line": 11,
            "message": "runtime.toml:11:1: plugins.entries.telegram.max_restarts: must be at most 100",
          },
          {
            "code": "CONFIG_SCHEMA",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.tool_timeout_seconds",
            "line": 14,
            "message": "runtime.toml:14:1: runtime.tool_timeout_seconds: must be greater than 0",
          },
          {
            "code": "CONFIG_SCHEMA",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.max_retries",
            "line": 15,
            "message": "runtime.toml:15:1: runtime.max_retries: must be a whole number",
          },
          {
            "code": "CONFIG_SCHEMA",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.audit_log",
            "line": 16,
            "message": "runtime.toml:16:1: runtime.audit_log: must be a string, not a number",
          },
          {
            "code": "CONFIG_SCHEMA",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.capabilities",
            "line": 17,
            "message": "runtime.toml:17:1: runtime.capabilities: must be an array, not a string",
          },
          {
            "code": "CONFIG_SCHEMA",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.tools.fs",
            "line": 18,
            "message": "runtime.toml:18:1: runtime.tools.fs: must be a table, not a number",
          },
          {
            "code": "CONFIG_SCHEMA",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.policy",
            "line": 19,
            "message": "runtime.toml:19:1: runtime.policy: must be a table, not an array",
          },
          {
            "code": "CONFIG_SCHEMA",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.max_output_bytes",
            "line": 20,
            "message": "runtime.toml:20:1: runtime.max_output_bytes: must be a finite number, not inf",
          },
          {
            "code": "CONFIG_SCHEMA",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.retry_backoff_ms",
            "line": 21,
            "message": "runtime.toml:21:1: runtime.retry_backoff_ms: must be a finite number, not nan",
          },
          {
            "code": "CONFIG_SCHEMA",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.debug_log",
            "line": 22,
            "message": "runtime.toml:22:1: runtime.debug_log: must be a string, not a date",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
  });
});

describe('parseRuntimeConfig: unknown keys are warnings with suggestions', () => {
  it('warns, suggests the closest key, and still returns a value', () => {
    expect(
      parse(`[plugin]
profile = "full"

[plugins]
profil = "full"
Allow = ["x"]
completely_unrelated = 1

[plugins.entries.telegram]
enable = true

[runtime]
tool-timeout-seconds = 10
max_retires = 2
`),
    ).toMatchInlineSnapshot(`
      {
        "errors": [],
        "value": {
          "plugins": {
            "allow": [],
            "deny": [],
            "entries": {
              "telegram": {},
            },
            "paths": [],
            "profile": "minimal",
          },
          "runtime": {
            "audit_log": "",
            "capabilities": [
              "*",
            ],
            "config_poll_interval": 0,
            "debug_log": "",
            "max_concurrency": 8,
            "max_output_bytes": 1048576,
            "max_retries": 0,
            "policy": {
              "allow": [
                "*",
              ],
              "ask": [],
              "deny": [],
            },
            "reload_queue_timeout": 5,
            "retry_backoff_ms": 200,
            "tool_timeout_seconds": 120,
            "tools": {},
          },
          "serve": {
            "allowed_origins": [],
            "token": "",
            "tool_names": "qualified",
          },
        },
        "warnings": [
          {
            "code": "UNKNOWN_KEY",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "plugin",
            "line": 1,
            "message": "runtime.toml:1:1: plugin: unknown key, ignored; did you mean \`plugins\`?",
          },
          {
            "code": "UNKNOWN_KEY",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "plugins.profil",
            "line": 5,
            "message": "runtime.toml:5:1: plugins.profil: unknown key, ignored; did you mean \`profile\`?",
          },
          {
            "code": "UNKNOWN_KEY",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "plugins.Allow",
            "line": 6,
            "message": "runtime.toml:6:1: plugins.Allow: unknown key, ignored; did you mean \`allow\`?",
          },
          {
            "code": "UNKNOWN_KEY",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "plugins.completely_unrelated",
            "line": 7,
            "message": "runtime.toml:7:1: plugins.completely_unrelated: unknown key, ignored; the keys in [plugins] are \`profile\`, \`allow\`, \`deny\`, \`paths\`, \`entries\`",
          },
          {
            "code": "UNKNOWN_KEY",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "plugins.entries.telegram.enable",
            "line": 10,
            "message": "runtime.toml:10:1: plugins.entries.telegram.enable: unknown key, ignored; did you mean \`enabled\`?",
          },
          {
            "code": "UNKNOWN_KEY",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.tool-timeout-seconds",
            "line": 13,
            "message": "runtime.toml:13:1: runtime.tool-timeout-seconds: unknown key, ignored; did you mean \`tool_timeout_seconds\`?",
          },
          {
            "code": "UNKNOWN_KEY",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.max_retires",
            "line": 14,
            "message": "runtime.toml:14:1: runtime.max_retires: unknown key, ignored; did you mean \`max_retries\`?",
          },
        ],
      }
    `);
  });

  it('does not check keys inside open tables', () => {
    const result = parse(`[runtime.tools.anything]
whatever = { deeply = { nested = [1, "two"] } }

[plugins.entries.mcp.config]
servers = { fs = { command = "npx" } }
`);
    expect(result.warnings).toEqual([]);
    expect(result.errors).toEqual([]);
    expect(result.value?.runtime.tools).toEqual({ anything: { whatever: { deeply: { nested: [1, 'two'] } } } });
    expect(result.value?.plugins.entries).toEqual({ mcp: { config: { servers: { fs: { command: 'npx' } } } } });
  });
});

describe('parseRuntimeConfig: ${VAR} expansion', () => {
  const text = `[plugins]
paths = ["\${PLUGIN_HOME}/plugins", "literal-$\${NOT_A_VAR}"]

[plugins.entries.telegram.config]
token = "\${TELEGRAM_TOKEN}"
nested = { list = ["a-\${USER_NAME}-b", 7] }

[runtime]
audit_log = "\${LOG_DIR}/audit.jsonl"

[runtime.tools.openrouter]
api_key = "\${OPENROUTER_API_KEY}"
`;
  const env = {
    PLUGIN_HOME: '/home/me/.trellis',
    TELEGRAM_TOKEN: '123:telegram-secret',
    USER_NAME: 'me',
    LOG_DIR: 'logs',
    OPENROUTER_API_KEY: 'sk-or-secret',
  };

  it('expands in every string value, in arrays and open tables, and keeps $${ literal', () => {
    const result = parse(text, env);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.value?.plugins.paths).toEqual(['/home/me/.trellis/plugins', '/base/literal-${NOT_A_VAR}']);
    expect(result.value?.plugins.entries.telegram?.config).toEqual({
      token: '123:telegram-secret',
      nested: { list: ['a-me-b', 7] },
    });
    expect(result.value?.runtime.audit_log).toBe('/base/logs/audit.jsonl');
    expect(result.value?.runtime.tools.openrouter).toEqual({ api_key: 'sk-or-secret' });
  });

  it('reports each missing variable with the key path that references it', () => {
    const { TELEGRAM_TOKEN: _t, OPENROUTER_API_KEY: _o, ...partial } = env;
    expect(parse(text, partial)).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "ENV_VAR_MISSING",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "plugins.entries.telegram.config.token",
            "line": 5,
            "message": "runtime.toml:5:1: plugins.entries.telegram.config.token: environment variable TELEGRAM_TOKEN is not set (referenced as \${TELEGRAM_TOKEN}); set it, or write $\${ for a literal "\${"",
          },
          {
            "code": "ENV_VAR_MISSING",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.tools.openrouter.api_key",
            "line": 12,
            "message": "runtime.toml:12:1: runtime.tools.openrouter.api_key: environment variable OPENROUTER_API_KEY is not set (referenced as \${OPENROUTER_API_KEY}); set it, or write $\${ for a literal "\${"",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
  });

  it('treats a variable set to the empty string as set', () => {
    const result = parse('[runtime.tools.x]\nkey = "<${EMPTY}>"\n', { EMPTY: '' });
    expect(result.value?.runtime.tools.x).toEqual({ key: '<>' });
  });

  it('reports malformed references', () => {
    expect(parse('[runtime.tools.x]\na = "${1ABC}"\nb = "${HOME:-/root}"\nc = "${OPEN"\n', { HOME: '/root' })).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "ENV_VAR_SYNTAX",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.tools.x.a",
            "line": 2,
            "message": "runtime.toml:2:1: runtime.tools.x.a: bad variable reference "\${1ABC}"; write \${NAME} (letters, digits and _, not starting with a digit), or $\${ for a literal "\${"",
          },
          {
            "code": "ENV_VAR_SYNTAX",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.tools.x.b",
            "line": 3,
            "message": "runtime.toml:3:1: runtime.tools.x.b: bad variable reference "\${HOME:-/root}"; write \${NAME} (letters, digits and _, not starting with a digit), or $\${ for a literal "\${"",
          },
          {
            "code": "ENV_VAR_SYNTAX",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.tools.x.c",
            "line": 4,
            "message": "runtime.toml:4:1: runtime.tools.x.c: bad variable reference "\${" without a closing "}"; write \${NAME} (letters, digits and _, not starting with a digit), or $\${ for a literal "\${"",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
  });

  it('does not expand values of unknown keys (they are ignored)', () => {
    const result = parse('[runtime]\nunknown_thing = "${NOT_SET}"\n');
    expect(result.errors).toEqual([]);
    expect(result.warnings.map((w) => w.code)).toEqual(['UNKNOWN_KEY']);
  });

  it('never shows an expanded secret, even when the expanded value fails validation', () => {
    const secret = 'Sk_Live/0123456789abcdef';
    const secretEnv = { SECRET: secret };
    const result = parse(
      `[plugins]
profile = "\${SECRET}"
allow = ["\${SECRET}"]
deny = ["x-\${SECRET}"]
paths = ["\${SECRET}", 3]

[plugins.entries."\${SECRET}"]
enabled = true

[plugins.entries.ok]
enabled = "\${SECRET}"
max_restarts = "\${SECRET}"

[runtime]
max_retries = "\${SECRET}"
audit_log = ["\${SECRET}"]
capabilities = "\${SECRET}"
tools = "\${SECRET}"
misspelled_key = "\${SECRET}"
`,
      secretEnv,
    );
    expect(result.value).toBeUndefined();
    expect(result.warnings).toHaveLength(1);
    const everything = JSON.stringify([result.errors, result.warnings]);
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain('0123456789');
    expect(result.errors.map((e) => e.keyPath)).toMatchInlineSnapshot(`
      [
        "plugins.profile",
        "plugins.allow[0]",
        "plugins.deny[0]",
        "plugins.paths[1]",
        "plugins.entries."\${SECRET}"",
        "plugins.entries.ok.enabled",
        "plugins.entries.ok.max_restarts",
        "runtime.max_retries",
        "runtime.audit_log",
        "runtime.capabilities",
        "runtime.tools",
      ]
    `);
  });
});

describe('parseRuntimeConfig: forbidden keys', () => {
  it('refuses __proto__, constructor and prototype anywhere and pollutes nothing', () => {
    const result = parse(`__proto__ = { polluted = "root" }
constructor.prototype.polluted = "ctor"

[plugins.entries.ok]
config = { __proto__ = { polluted = "inline" } }

[runtime.tools.x.__proto__]
polluted = "header"

[runtime.tools.y]
"prototype" = { polluted = "quoted" }
a.__proto__.polluted = "dotted"
list = [{ __proto__ = { polluted = "in-array" } }]
`);
    expect(result).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "FORBIDDEN_KEY",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "__proto__",
            "line": 1,
            "message": "runtime.toml:1:1: __proto__: the key "__proto__" is not allowed anywhere in a config file (it could pollute prototypes); rename or remove it",
          },
          {
            "code": "FORBIDDEN_KEY",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "constructor",
            "line": 2,
            "message": "runtime.toml:2:1: constructor: the key "constructor" is not allowed anywhere in a config file (it could pollute prototypes); rename or remove it",
          },
          {
            "code": "FORBIDDEN_KEY",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "plugins.entries.ok.config.__proto__",
            "line": 5,
            "message": "runtime.toml:5:1: plugins.entries.ok.config.__proto__: the key "__proto__" is not allowed anywhere in a config file (it could pollute prototypes); rename or remove it",
          },
          {
            "code": "FORBIDDEN_KEY",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.tools.x.__proto__",
            "line": 7,
            "message": "runtime.toml:7:1: runtime.tools.x.__proto__: the key "__proto__" is not allowed anywhere in a config file (it could pollute prototypes); rename or remove it",
          },
          {
            "code": "FORBIDDEN_KEY",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.tools.y.prototype",
            "line": 11,
            "message": "runtime.toml:11:1: runtime.tools.y.prototype: the key "prototype" is not allowed anywhere in a config file (it could pollute prototypes); rename or remove it",
          },
          {
            "code": "FORBIDDEN_KEY",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.tools.y.a.__proto__",
            "line": 12,
            "message": "runtime.toml:12:1: runtime.tools.y.a.__proto__: the key "__proto__" is not allowed anywhere in a config file (it could pollute prototypes); rename or remove it",
          },
          {
            "code": "FORBIDDEN_KEY",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "runtime.tools.y.list[0].__proto__",
            "line": 13,
            "message": "runtime.toml:13:1: runtime.tools.y.list[0].__proto__: the key "__proto__" is not allowed anywhere in a config file (it could pollute prototypes); rename or remove it",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
  });
});

describe('parseRuntimeConfig: hostile nesting never crashes or hangs', () => {
  it('lists at most 100 errors and 100 warnings, then says how many more there are', () => {
    const text = Array.from({ length: 5000 }, (_, i) => `[t${i}]\n__proto__ = 1\n`).join('');
    const result = parse(text);
    expect(result.errors).toHaveLength(101);
    expect(result.warnings).toHaveLength(101);
    expect(result.errors[0]).toEqual({
      code: 'FORBIDDEN_KEY',
      file: 'runtime.toml',
      keyPath: 't0.__proto__',
      line: 2,
      column: 1,
      message:
        'runtime.toml:2:1: t0.__proto__: the key "__proto__" is not allowed anywhere in a config file (it could pollute prototypes); rename or remove it',
    });
    expect(result.errors[99]?.keyPath).toBe('t99.__proto__');
    expect(result.errors[100]).toEqual({
      code: 'FORBIDDEN_KEY',
      file: 'runtime.toml',
      message: 'runtime.toml: 4900 more problems not shown; fix the ones above first',
    });
    expect(result.warnings[100]).toEqual({
      code: 'UNKNOWN_KEY',
      file: 'runtime.toml',
      message: 'runtime.toml: 4900 more problems not shown; fix the ones above first',
    });
  });

  it('refuses a dotted key 10000 parts long', () => {
    const result = parse(`${Array.from({ length: 10_000 }, () => 'a').join('.')} = 1\n`);
    expect(result).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "CONFIG_TOO_DEEP",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a",
            "line": 1,
            "message": "runtime.toml:1:1: a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a: tables and arrays nest deeper than 32 levels (dotted keys and table headers count); flatten this part of the config",
          },
        ],
        "value": undefined,
        "warnings": [
          {
            "code": "UNKNOWN_KEY",
            "column": 1,
            "file": "runtime.toml",
            "keyPath": "a",
            "line": 1,
            "message": "runtime.toml:1:1: a: unknown key, ignored; the keys at the top level are \`plugins\`, \`runtime\`, \`serve\`",
          },
        ],
      }
    `);
  });

  it('refuses a table header 10000 parts deep', () => {
    const result = parse(`[plugins]\nprofile = "full"\n[${Array.from({ length: 10_000 }, (_, i) => `k${i % 10}`).join('.')}]\nx = 1\n`);
    expect(result.value).toBeUndefined();
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatchObject({ code: 'CONFIG_TOO_DEEP', line: 3, column: 1 });
  });

  it('refuses deeply nested inline arrays', () => {
    expect(parse(`x = ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`)).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "CONFIG_TOO_DEEP",
            "column": 37,
            "file": "runtime.toml",
            "line": 1,
            "message": "runtime.toml:1:37: arrays and inline tables nest deeper than 32 levels; flatten this value",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
  });

  it('refuses deeply nested inline tables', () => {
    expect(parse(`[runtime.tools.x]\ny = ${'{ a = '.repeat(50_000)}1${' }'.repeat(50_000)}\n`)).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "CONFIG_TOO_DEEP",
            "column": 197,
            "file": "runtime.toml",
            "line": 2,
            "message": "runtime.toml:2:197: arrays and inline tables nest deeper than 32 levels; flatten this value",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
  });

  it('refuses depth built from a header, a dotted key and an inline value together', () => {
    const header = Array.from({ length: 12 }, (_, i) => `h${i}`).join('.');
    const dotted = Array.from({ length: 12 }, (_, i) => `d${i}`).join('.');
    const result = parse(`[runtime.tools.${header}]\n${dotted} = ${'['.repeat(12)}${']'.repeat(12)}\n`);
    expect(result.errors.map((e) => [e.code, e.line])).toEqual([['CONFIG_TOO_DEEP', 2]]);
  });

  it('accepts a value path of 32 parts and refuses 33', () => {
    const keys = (n: number) => Array.from({ length: n }, (_, i) => `k${i}`).join('.');
    // runtime.tools.x is 3 parts.
    expect(parse(`[runtime.tools.x]\n${keys(29)} = 1\n`).errors).toEqual([]);
    expect(parse(`[runtime.tools.x]\n${keys(28)} = [1]\n`).errors).toEqual([]);
    expect(parse(`[runtime.tools.x]\n${keys(30)} = 1\n`).errors.map((e) => e.code)).toEqual(['CONFIG_TOO_DEEP']);
    expect(parse(`[runtime.tools.x]\n${keys(29)} = [1]\n`).errors.map((e) => e.code)).toEqual(['CONFIG_TOO_DEEP']);
  });
});

describe('parseRuntimeConfig: encoding and size', () => {
  const encode = (s: string) => new TextEncoder().encode(s);
  const join = (...parts: Uint8Array[]) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  };

  it('refuses a NUL byte with its byte offset, line and column', () => {
    expect(parse(join(encode('[plugins]\nprofile = "fu'), Uint8Array.of(0), encode('ll"\n')))).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "CONFIG_ENCODING",
            "column": 14,
            "file": "runtime.toml",
            "line": 2,
            "message": "runtime.toml:2:14: NUL byte at byte offset 23; a TOML file cannot contain NUL bytes (is this a binary file?)",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
  });

  it('counts the BOM in the byte offset but not in the column', () => {
    expect(parse(join(Uint8Array.of(0xef, 0xbb, 0xbf), encode('a = "é'), Uint8Array.of(0), encode('"\n')))).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "CONFIG_ENCODING",
            "column": 7,
            "file": "runtime.toml",
            "line": 1,
            "message": "runtime.toml:1:7: NUL byte at byte offset 10; a TOML file cannot contain NUL bytes (is this a binary file?)",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
  });

  it('refuses a NUL character in text input', () => {
    expect(parse('[runtime]\n\0')).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "CONFIG_ENCODING",
            "column": 1,
            "file": "runtime.toml",
            "line": 2,
            "message": "runtime.toml:2:1: NUL byte at byte offset 10; a TOML file cannot contain NUL bytes (is this a binary file?)",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
  });

  it('refuses invalid UTF-8 with its byte offset, line and column', () => {
    expect(parse(join(encode('# ok\n[plugins]\nprofile = "é'), Uint8Array.of(0xc3, 0x28), encode('"\n')))).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "CONFIG_ENCODING",
            "column": 13,
            "file": "runtime.toml",
            "line": 3,
            "message": "runtime.toml:3:13: invalid UTF-8 at byte offset 28; save the file as UTF-8",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
  });

  it('refuses overlong encodings, surrogates and truncated sequences', () => {
    for (const bad of [[0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0xff]]) {
      const result = parse(join(encode('a = "'), Uint8Array.from(bad)));
      expect(result.errors.map((e) => [e.code, e.line, e.column])).toEqual([['CONFIG_ENCODING', 1, 6]]);
    }
  });

  it('refuses UTF-16', () => {
    expect(parse(Uint8Array.of(0xff, 0xfe, 0x61, 0x00))).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "CONFIG_ENCODING",
            "column": 1,
            "file": "runtime.toml",
            "line": 1,
            "message": "runtime.toml:1:1: the file starts with a UTF-16 byte order mark; save it as UTF-8",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
  });

  it('refuses more than 1 MiB, as bytes and as text', () => {
    const big = `# ${'x'.repeat(1024 * 1024)}\n`;
    expect(parse(big)).toMatchInlineSnapshot(`
      {
        "errors": [
          {
            "code": "CONFIG_TOO_LARGE",
            "file": "runtime.toml",
            "message": "runtime.toml: the file is 1048579 bytes, over the 1048576-byte (1 MiB) limit; a runtime.toml is a few KiB — check that this is the right file",
          },
        ],
        "value": undefined,
        "warnings": [],
      }
    `);
    expect(parse(encode(big)).errors.map((e) => e.code)).toEqual(['CONFIG_TOO_LARGE']);
  });

  it('accepts exactly 1 MiB', () => {
    const text = `# ${'x'.repeat(1024 * 1024 - 3)}\n`;
    expect(parse(text)).toEqual({ value: DEFAULTS, warnings: [], errors: [] });
  });
});

describe('parseRuntimeConfig: hostile ${VAR} references', () => {
  it('lists a few of many missing variables and malformed references, then how many more', () => {
    const missing = Array.from({ length: 50_000 }, (_, i) => `\${V${i}}`).join('');
    const malformed = '${1}'.repeat(50_000);
    expect(parse(`[runtime.tools.x]\na = "${missing}"\nb = "${malformed}"\n`).errors.map((e) => e.message)).toEqual([
      'runtime.toml:2:1: runtime.tools.x.a: environment variables V0, V1, V2, V3, V4 and 49995 more are not set (referenced as ${V0}, ${V1}, ${V2}, ${V3}, ${V4} and 49995 more); set them, or write $${ for a literal "${"',
      'runtime.toml:3:1: runtime.tools.x.b: bad variable reference "${1}", "${1}", "${1}", "${1}", "${1}" and 49995 more; write ${NAME} (letters, digits and _, not starting with a digit), or $${ for a literal "${"',
    ]);
  });
});
