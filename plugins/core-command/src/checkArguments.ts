import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ERROR_CODES, ToolError } from '@trellis/sdk';
import { isPathInside } from '@trellis/sdk/internal';
import type { ProgramRulesInput } from './ProgramRulesSchema.ts';
import { SHIPPED_PROGRAM_RULES } from './shippedProgramRules.ts';
import type { ProgramRules } from './shippedProgramRules.ts';

/** The rules that apply to one program under one name, and why each shipped pattern is there. */
interface NamedRules {
  readonly name: string;
  readonly rules: ProgramRules;
  /** Which keys (and subcommands) the user set, so the message names where the rule came from. */
  readonly userKeys: ReadonlySet<string>;
  readonly reasons: Readonly<Record<string, string>>;
}

/**
 * The effective rules for `name`: the shipped ones with each key the user set replacing the
 * shipped key (`subcommand_deny_args` one subcommand at a time). Null when neither has any.
 */
export function effectiveRules(name: string, user: Readonly<Record<string, ProgramRulesInput>>): NamedRules | null {
  const shipped = Object.hasOwn(SHIPPED_PROGRAM_RULES, name) ? SHIPPED_PROGRAM_RULES[name] : undefined;
  const mine = Object.hasOwn(user, name) ? user[name] : undefined;
  if (shipped === undefined && mine === undefined) return null;
  const userKeys = new Set<string>();
  for (const [key, value] of Object.entries(mine ?? {})) {
    if (value === undefined) continue;
    if (key === 'subcommand_deny_args') for (const sub of Object.keys(value as object)) userKeys.add(`subcommand_deny_args.${sub}`);
    else userKeys.add(key);
  }
  const rules: ProgramRules = {
    has_subcommands: mine?.has_subcommands ?? shipped?.has_subcommands ?? false,
    deny_args: mine?.deny_args ?? shipped?.deny_args ?? [],
    deny_global_args: mine?.deny_global_args ?? shipped?.deny_global_args ?? [],
    global_args_with_value: mine?.global_args_with_value ?? shipped?.global_args_with_value ?? [],
    subcommand_deny_args: { ...shipped?.subcommand_deny_args, ...mine?.subcommand_deny_args },
    path_args: mine?.path_args ?? shipped?.path_args ?? [],
  };
  return { name, rules, userKeys, reasons: shipped?.reasons ?? {} };
}

function globToRegExp(pattern: string): RegExp {
  let source = '^';
  for (const char of pattern) {
    if (char === '*') source += '[\\s\\S]*';
    else if (char === '?') source += '[\\s\\S]';
    else source += char.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`${source}$`, 'iu');
}

/**
 * Whether `arg` is what `pattern` refuses. `--name` also catches `--name=value` and every
 * abbreviation git's option parser would accept (`--upload-p`); `-x` (one letter) catches
 * `-xVALUE` and bundles (`-qx`); `*`/`?` make a case-insensitive glob over the whole argument;
 * anything else must be equal.
 */
export function argumentMatches(pattern: string, arg: string): boolean {
  if (pattern === '*') return true;
  if (/[*?]/.test(pattern)) return globToRegExp(pattern).test(arg);
  if (/^--[^-=]/.test(pattern)) {
    if (!arg.startsWith('--') || arg.length <= 2) return false;
    const name = arg.slice(2).split('=', 1)[0]!;
    return name.length > 0 && pattern.slice(2).startsWith(name);
  }
  if (/^-[A-Za-z0-9]$/.test(pattern)) {
    return /^-[^-]/.test(arg) && arg.includes(pattern[1]!);
  }
  return arg === pattern;
}

/** Where the subcommand is: the first argument that is not an option or an option's value. */
function findSubcommand(args: readonly string[], withValue: readonly string[]): number {
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg === '--') return -1;
    if (!arg.startsWith('-') || arg === '-') return i;
    if (withValue.includes(arg)) i += 1;
  }
  return -1;
}

/** The value of a path option at `i`, if `args[i]` is one: `-C <p>`, `-C<p>`, `--git-dir <p>`, `--git-dir=<p>`. */
function pathValue(option: string, args: readonly string[], i: number): string | undefined {
  const arg = args[i]!;
  if (arg === option) return args[i + 1];
  if (arg.startsWith(`${option}=`)) return arg.slice(option.length + 1);
  if (/^-[A-Za-z0-9]$/.test(option) && arg.startsWith(option) && arg.length > 2) return arg.slice(2);
  return undefined;
}

/** The realpath of `path`, or of its deepest existing parent with the missing names appended. */
async function realpathOrParent(path: string): Promise<string> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      await lstat(current);
      return join(await realpath(current), ...missing);
    } catch {
      const parent = dirname(current);
      if (parent === current) return path;
      missing.unshift(basename(current));
      current = parent;
    }
  }
}

function refusal(named: NamedRules, where: string, arg: string, ruleKey: string, pattern: string, reasonKey: string): ToolError {
  const { name } = named;
  const fromUser = named.userKeys.has(ruleKey);
  const reason = fromUser ? undefined : named.reasons[reasonKey];
  const key = `[runtime.tools.command.programs.${name}] ${ruleKey}`;
  const why = reason === undefined ? '' : ` because ${reason}`;
  const rule = `the ${fromUser ? 'configured' : 'shipped'} rule "${pattern}" in ${key}`;
  return new ToolError(
    ERROR_CODES.POLICY_DENIED,
    `${where}: "${arg.length > 200 ? `${arg.slice(0, 200)}…` : arg}" is refused for ${name}${why} (${rule}). Run it without that argument; if the user trusts this use, they can change the rule under [runtime.tools.command.programs.${name}] in runtime.toml.`,
  );
}

/**
 * Applies the argument rules of every name the program goes by (as called, as found on PATH,
 * its realpath) to `args`; throws `POLICY_DENIED` naming the program, the argument, the rule
 * and the config key that holds it. Path options must name a place inside the workspace.
 */
export async function checkArguments(options: {
  names: readonly string[];
  args: readonly string[];
  programs: Readonly<Record<string, ProgramRulesInput>>;
  cwd: string;
  workspace: string;
}): Promise<void> {
  const { args, programs, cwd } = options;
  let workspace: string | undefined;
  const seen = new Set<string>();
  for (const name of options.names) {
    if (seen.has(name)) continue;
    seen.add(name);
    const named = effectiveRules(name, programs);
    if (named === null) continue;
    const { rules } = named;
    const sub = rules.has_subcommands ? findSubcommand(args, rules.global_args_with_value) : -1;
    const subName = sub === -1 ? undefined : args[sub]!;
    const subRules =
      subName !== undefined && Object.hasOwn(rules.subcommand_deny_args, subName) ? rules.subcommand_deny_args[subName]! : [];
    for (const [i, arg] of args.entries()) {
      const where = `args[${i}]`;
      for (const pattern of rules.deny_args) {
        if (argumentMatches(pattern, arg)) throw refusal(named, where, arg, 'deny_args', pattern, pattern);
      }
      if (sub === -1 || i < sub) {
        for (const pattern of rules.deny_global_args) {
          if (argumentMatches(pattern, arg)) throw refusal(named, where, arg, 'deny_global_args', pattern, pattern);
        }
      }
      if (sub !== -1 && i > sub) {
        for (const pattern of subRules) {
          if (argumentMatches(pattern, arg))
            throw refusal(named, where, arg, `subcommand_deny_args.${subName}`, pattern, `${subName} ${pattern}`);
        }
      }
      // With subcommands, path options belong before the subcommand (git -C); after it the same
      // letters mean something else (git log -C finds copies).
      if (sub !== -1 && i >= sub) continue;
      for (const option of rules.path_args) {
        const value = pathValue(option, args, i);
        if (value === undefined) continue;
        workspace ??= await realpath(options.workspace);
        const target = await realpathOrParent(resolve(cwd, value));
        if (!isPathInside(workspace, target)) {
          const why = named.userKeys.has('path_args') ? '' : ` (${named.reasons[option] ?? 'it reaches outside the workspace'})`;
          throw new ToolError(
            ERROR_CODES.POLICY_DENIED,
            `${where}: ${option} "${value}" leads to "${target}", outside the workspace "${workspace}"${why}; ${name} may only be pointed inside the workspace (the rule "${option}" in [runtime.tools.command.programs.${name}] path_args). Use a path inside the workspace; the user can change the rule under [runtime.tools.command.programs.${name}] in runtime.toml.`,
          );
        }
      }
    }
  }
}
