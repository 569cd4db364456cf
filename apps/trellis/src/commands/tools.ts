import type { ToolOutcome } from '@trellis/sdk';
import type { Assembly } from '../assemble.ts';
import { EXIT, FailedError, UsageError } from '../errors.ts';
import { formatTable, toJson, type CommandIO } from '../io.ts';
import type { CommandLine } from '../parseCommandLine.ts';
import { readArgsText } from '../cliHabits.ts';

const FORMATS = ['mcp', 'openai', 'anthropic'] as const;

/** `trellis tools list [--json] [--format mcp|openai|anthropic]`: the tools offered now. */
export function toolsList(line: CommandLine, io: CommandIO, assembly: Assembly): number {
  const format = line.options.format;
  const offered = assembly.catalog.offered();
  if (format !== undefined) {
    if (!(FORMATS as readonly string[]).includes(format))
      throw new UsageError(`--format must be one of ${FORMATS.join(', ')}; got "${format}"`);
    // Exactly what `assembly.catalog.render(format)` returns: the array a model API takes as `tools`.
    io.out(toJson(assembly.catalog.render(format as (typeof FORMATS)[number])));
    return EXIT.OK;
  }
  const hidden = assembly.catalog.availability().filter((a) => !a.offered);
  if (line.flags.json) {
    io.out(
      toJson({
        tools: offered.map((d) => ({
          name: d.name,
          plugin: d.plugin,
          description: d.description,
          inputSchema: d.inputSchema,
          contract: d.contract,
        })),
        ...(line.options.all ? { notOffered: hidden.map((a) => ({ name: a.name, plugin: a.plugin, reason: a.reason })) } : {}),
      }),
    );
    return EXIT.OK;
  }
  io.out(
    formatTable(
      ['NAME', 'DESCRIPTION'],
      offered.map((d) => [d.name, firstSentence(d.description)]),
    ),
  );
  if (line.options.all && hidden.length > 0) {
    io.out(
      `\nKnown but not offered:\n${formatTable(
        ['NAME', 'WHY'],
        hidden.map((a) => [a.name, a.reason ? `${a.reason.code}: ${a.reason.message}` : 'not offered']),
      )}`,
    );
  }
  io.out(`\n${offered.length} tool${offered.length === 1 ? '' : 's'} offered`);
  io.out(
    hidden.length > 0
      ? `; ${hidden.length} known but not offered: ${notOfferedSummary(
          hidden.map((a) => a.name),
          line.options.all === true,
        )}\n`
      : '\n',
  );
  return EXIT.OK;
}

/** The names of tools not offered, a few at most, and where to read why. */
function notOfferedSummary(names: readonly string[], listed: boolean): string {
  const shown = names.slice(0, 5).join(', ') + (names.length > 5 ? `, and ${names.length - 5} more` : '');
  return listed ? shown : `${shown} (\`trellis tools list --all\` says why)`;
}

/** `trellis tools describe <name>`. */
export function toolsDescribe(line: CommandLine, io: CommandIO, assembly: Assembly): number {
  // The model-API name (`builtin-tools__now`) works too, as it does for `tools call`.
  const name = assembly.catalog.fromModelToolName(line.args[0]!) ?? line.args[0]!;
  const descriptor = assembly.catalog.get(name);
  const availability = assembly.catalog.availability().find((a) => a.name === name);
  if (descriptor === undefined && availability === undefined) {
    const nearest = assembly.catalog.nearest(name);
    throw new FailedError(
      `no tool is named "${name}"${nearest ? `; did you mean "${nearest}"?` : ''} (\`trellis tools list --all\` shows them all)`,
      'TOOL_NOT_FOUND',
    );
  }
  if (line.flags.json) {
    io.out(
      toJson({
        ...(descriptor ?? { name }),
        offered: availability?.offered ?? false,
        ...(availability?.reason ? { reason: availability.reason } : {}),
      }),
    );
    return EXIT.OK;
  }
  io.out(`${name}\n`);
  if (availability && !availability.offered && availability.reason)
    io.out(`  not offered: ${availability.reason.code}: ${availability.reason.message}\n`);
  if (descriptor) {
    io.out(`  plugin: ${descriptor.plugin}\n\n${indent(descriptor.description)}\n\n`);
    if (descriptor.tags.length > 0) io.out(`  tags: ${descriptor.tags.join(', ')}\n`);
    const c = descriptor.contract;
    io.out(
      `  contract: side effects ${c.sideEffects ? 'yes' : 'no'}, idempotent ${c.idempotent ? 'yes' : 'no'}, deadline ${c.deadlineMs} ms, retries ${c.maxRetries}, isolation ${c.isolation}, sandbox ${c.sandbox}, approval ${c.approval}${c.capabilities.length ? `, capabilities ${c.capabilities.join(' ')}` : ''}\n`,
    );
    io.out(`  runs in: ${RUNS_IN[c.isolation]}\n`);
    io.out(`  input schema:\n${indent(JSON.stringify(descriptor.inputSchema, null, 2), 4)}\n`);
    for (const example of descriptor.examples)
      io.out(`  example: ${example.description}\n    trellis tools call ${name} --args '${JSON.stringify(example.input)}'\n`);
  }
  return EXIT.OK;
}

/** Where a tool's code runs, by its contract's `isolation`, as `tools describe` says it. */
const RUNS_IN: Record<string, string> = {
  inline: 'the host thread (cheap, bounded work only)',
  worker: 'a worker thread of the tool pool, terminated at the deadline (the host thread stays free)',
  process: 'a child process (external plugin), killed with its process group',
};

/** `trellis tools search <query> [--limit N]`. */
export function toolsSearch(line: CommandLine, io: CommandIO, assembly: Assembly): number {
  const limit = line.options.limit === undefined ? 10 : Number(line.options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new UsageError(`--limit must be a whole number from 1 to 1000; got "${line.options.limit}"`);
  const hits = assembly.catalog.search(line.args[0]!, { limit });
  const notOffered = matchNotOffered(assembly, line.args[0]!);
  if (line.flags.json) {
    io.out(toJson({ query: line.args[0], hits, notOffered }));
    return EXIT.OK;
  }
  if (hits.length === 0) io.out(`No offered tool matches "${line.args[0]}".\n`);
  else
    io.out(
      formatTable(
        ['NAME', 'SCORE', 'DESCRIPTION'],
        hits.map((h) => [h.name, h.score.toFixed(2), firstSentence(h.description)]),
      ),
    );
  if (notOffered.length > 0) {
    io.out(
      `\nKnown but not offered:\n${formatTable(
        ['NAME', 'WHY'],
        notOffered.map((a) => [a.name, a.reason ? `${a.reason.code}: ${a.reason.message}` : 'not offered']),
      )}`,
    );
  }
  return EXIT.OK;
}

/**
 * Tools known but not offered whose name or plugin id holds a word of the query. Their
 * descriptions may be unknown (a disabled plugin is not loaded), so the match is on names only.
 */
function matchNotOffered(
  assembly: Assembly,
  query: string,
): Array<{ name: string; plugin: string; reason?: { code: string; message: string } }> {
  const words = query
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 2);
  if (words.length === 0) return [];
  return assembly.catalog
    .availability()
    .filter((a) => !a.offered && words.some((w) => a.name.toLowerCase().includes(w) || a.plugin.toLowerCase().includes(w)))
    .map((a) => ({ name: a.name, plugin: a.plugin, ...(a.reason ? { reason: { code: a.reason.code, message: a.reason.message } } : {}) }));
}

/** `trellis tools call <name> --args JSON [--json]`: exit 0 when ok, 1 when the tool failed. */
export async function toolsCall(line: CommandLine, io: CommandIO, assembly: Assembly): Promise<number> {
  const { text, from } = await readArgsText(line.options.args ?? '{}', io);
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (error) {
    const where = from === '--args' ? '--args must be JSON' : `--args: ${from} must hold JSON`;
    throw new UsageError(
      `${where}, e.g. --args '{"path":"README.md"}', --args @input.json or --args - (stdin): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const outcome: ToolOutcome = await assembly.runtime.invoke({ name: line.args[0]!, input });
  if (line.flags.json) {
    io.out(toJson(outcome));
  } else if (outcome.ok) {
    io.out(typeof outcome.value === 'string' ? `${outcome.value}${outcome.value.endsWith('\n') ? '' : '\n'}` : toJson(outcome.value));
  } else {
    io.err(`${outcome.error.code}: ${outcome.error.message}${outcome.error.retryable ? ' (retryable)' : ''}\n`);
  }
  return outcome.ok ? EXIT.OK : EXIT.FAILED;
}

function firstSentence(text: string): string {
  const first = text.split('\n')[0] ?? '';
  const end = first.search(/\.(\s|$)/);
  const sentence = end === -1 ? first : first.slice(0, end + 1);
  return sentence.length > 100 ? `${sentence.slice(0, 99)}…` : sentence;
}

function indent(text: string, spaces = 2): string {
  const pad = ' '.repeat(spaces);
  return text
    .split('\n')
    .map((l) => (l === '' ? l : pad + l))
    .join('\n');
}
