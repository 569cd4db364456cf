import { describe, expect, it } from 'vitest';
import type { HostServices } from '@trellis/sdk';
import { createResourceCatalog } from './index.ts';
import { splitName, stem, tokenize } from './searchIndex.ts';
import { BUNDLED, SNAPSHOT, config, entry, manifest, spec } from '../test/fixtures.ts';

describe('tokenizing', () => {
  it('splits names on dots, underscores, dashes and camelCase humps', () => {
    expect(['core-fs.read_file', 'mcp.github.createIssue', 'HTTPRequest.getURLList', 'a__b--c..d', 'ext.naïveTool'].map(splitName)).toEqual(
      [
        ['core', 'fs', 'read', 'file'],
        ['mcp', 'github', 'create', 'issue'],
        ['http', 'request', 'get', 'url', 'list'],
        ['a', 'b', 'c', 'd'],
        ['ext', 'naïve', 'tool'],
      ],
    );
  });

  it('drops stopwords and strips a few suffixes', () => {
    expect(tokenize('Reads the files and lists directories, matching patterns in queries')).toEqual([
      'read',
      'file',
      'list',
      'directory',
      'match',
      'pattern',
      'query',
    ]);
    expect(['status', 'class', 'analysis', 'boxes', 'bus', 'string', 'sing'].map(stem)).toEqual([
      'status',
      'class',
      'analysis',
      'box',
      'bus',
      'str',
      'sing',
    ]);
  });
});

// The fixture host plus an MCP bridge with servers' tools, as a host with a larger catalog sees them.
const MCP_TOOLS = [
  spec('github.create_issue', 'Create a new issue in a GitHub repository.', { tags: ['github', 'issues'] }),
  spec('github.list_issues', 'List issues of a GitHub repository, filtered by state or label.', { tags: ['github', 'issues'] }),
  spec('github.create_pull_request', 'Open a pull request from a branch in a GitHub repository.', { tags: ['github'] }),
  spec('github.search_code', 'Search source code across GitHub repositories.', { tags: ['github', 'search'] }),
  spec('slack.post_message', 'Post a message to a Slack channel.', { tags: ['chat', 'messaging'] }),
  spec('slack.list_channels', 'List the channels of the Slack workspace.', { tags: ['chat'] }),
  spec('postgres.query', 'Run a read-only SQL query against the Postgres database and return rows.', { tags: ['database', 'sql'] }),
  spec('browser.screenshot', 'Take a screenshot of the current browser page.', { tags: ['browser'] }),
];

function largeCatalog() {
  return createResourceCatalog({
    snapshot: {
      plugins: [...SNAPSHOT.plugins, entry('mcp', 'enabled', { manifest: manifest({ id: 'mcp', kind: 'bridge' }), bundled: true })],
    },
    bundled: [...BUNDLED, { manifest: { id: 'mcp' }, tools: [] }],
    config: config(),
  }).withDiscoveredTools('mcp', MCP_TOOLS);
}

describe('search', () => {
  const catalog = largeCatalog();
  const top = (query: string, limit = 3) => catalog.search(query, { limit }).map((hit) => hit.name);

  it('ranks the obvious tool first for everyday queries', () => {
    expect({
      'read file': top('read file'),
      'git diff': top('git diff'),
      'current time': top('current time', 1),
      'find files matching a pattern': top('find files matching a pattern', 1),
      csv: top('csv'),
      'open an issue on github': top('open an issue on github', 2),
      'send a slack message': top('send a slack message', 1),
      'sql database': top('sql database', 1),
      readFile: top('readFile', 1),
      createIssue: top('createIssue', 1),
      'list directories': top('list directories', 1),
      'search tools': top('search tools', 1),
    }).toEqual({
      'read file': ['core-fs.read', 'core-table.read_table', 'core-fs.write'],
      'git diff': ['git-helper.diff', 'git-helper.status', 'git-helper.commit'],
      'current time': ['builtin-tools.now'],
      'find files matching a pattern': ['core-fs.glob'],
      csv: ['core-table.read_table'],
      'open an issue on github': ['mcp.github.create_issue', 'mcp.github.list_issues'],
      'send a slack message': ['mcp.slack.post_message'],
      'sql database': ['mcp.postgres.query'],
      readFile: ['core-fs.read'],
      createIssue: ['mcp.github.create_issue'],
      'list directories': ['core-fs.list'],
      'search tools': ['builtin-tools.search_tools'],
    });
  });

  it('fits the sdk HostServices.searchTools signature', () => {
    const host: Pick<HostServices, 'searchTools'> = { searchTools: (query, options) => catalog.search(query, options) };
    expect(host.searchTools('csv', { limit: 1 }).map((hit) => hit.name)).toEqual(['core-table.read_table']);
  });

  it('returns whole hits, searches only offered tools, and honours the limit', () => {
    expect(catalog.search('git diff', { limit: 1 })).toEqual([
      {
        name: 'git-helper.diff',
        plugin: 'git-helper',
        description: 'Show changes between the working tree and the last commit as a unified diff.',
        score: 3.6297,
      },
    ]);
    expect([top('fetch url over http'), top('openrouter completion'), top('zzz'), top(''), catalog.search('file', { limit: 0 })]).toEqual([
      [],
      [],
      [],
      [],
      [],
    ]);
    expect(top('file', 10).sort()).toEqual(['core-fs.glob', 'core-fs.list', 'core-fs.read', 'core-fs.stat', 'core-fs.write']);
    expect(catalog.search('file', { limit: 2 }).length).toBe(2);
  });
});
