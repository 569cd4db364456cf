import type { RuntimeConfig } from '@trellis/config';
import { ERROR_CODES } from '@trellis/sdk';
import { deepFreeze } from './deepFreeze.ts';
import { expandProfile } from './expandProfile.ts';
import { SettingsValidators, resolvePluginSettingsWith } from './resolvePluginSettings.ts';
import { runSteps, type Steps } from '@trellis/sdk/internal';
import type { RegistryBuildCache } from './RegistryBuildCache.ts';
import type { AdmittedCandidate, DecidedCandidate, DecisionStep, PluginState, ProfilesData, Reason } from './types.ts';

/** What {@link decide} needs besides the admitted candidates. All plain data: decide is pure. */
export interface DecideOptions {
  readonly config: RuntimeConfig;
  readonly profiles: ProfilesData;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Program name → absolute path or null, from `findCommandsOnPath`. A name absent here counts as missing. */
  readonly commandsOnPath: Readonly<Record<string, string | null>>;
  /** Ids that `--allow/--enable/--disable` set for this run (the reasons name the flag). */
  readonly commandLine?: CommandLineSwitches;
  /** A host's cache across builds: an admission decided from equal inputs keeps the last decision. */
  readonly buildCache?: Pick<RegistryBuildCache, 'decide'>;
}

/** What `--allow ID`, `--enable ID` and `--disable ID` added to the config for one run. */
export interface CommandLineSwitches {
  readonly allow?: readonly string[];
  readonly enable?: readonly string[];
  readonly disable?: readonly string[];
}

/** Where a candidate came from, in words. */
export function describeSource(candidate: AdmittedCandidate): string {
  const facts = candidate.facts;
  return facts.bundled ? 'the bundled plugins' : `the ${facts.source.root} root (${facts.manifestPath})`;
}

/**
 * Decides every candidate's state. Pure. Rejected candidates stay rejected. Among the rest, two
 * with one id at the same root number are both rejected (`AMBIGUOUS_ID`); otherwise the lowest
 * root number wins and the others are `shadowed`, naming the winner. For each winner, first
 * match wins: required → enabled (a deny or disable on it is a `REQUIRED_OVERRIDE_IGNORED`
 * warning); `entries.<id>.enabled = false` → disabled; `= true` → enabled; deny → disabled;
 * allow → enabled; its profile within the active one → enabled; else `NOT_IN_PROFILE`. An
 * external plugin without `[runtime]` is disabled (`NO_IMPLEMENTATION`). An enabled plugin whose
 * settings fail its schema is disabled (`CONFIG_INVALID`); one missing an environment variable or
 * program is `unavailable`. Output order = input order.
 */
export function decide(admitted: readonly AdmittedCandidate[], options: DecideOptions): DecidedCandidate[] {
  return runSteps(decideSteps(admitted, options));
}

/** {@link decide}, pausable after every id decided (see `Steps`). */
export function* decideSteps(admitted: readonly AdmittedCandidate[], options: DecideOptions): Steps<DecidedCandidate[]> {
  const groups = new Map<string, number[]>();
  admitted.forEach((candidate, index) => {
    if (candidate.rejected || untrustedWorkspaceOf(candidate) !== undefined) return;
    const list = groups.get(candidate.id);
    if (list === undefined) groups.set(candidate.id, [index]);
    else list.push(index);
  });

  const out: Array<DecidedCandidate | undefined> = new Array(admitted.length);
  const context: DecideContext = {
    options,
    activeProfiles: expandProfile(options.profiles, options.config.plugins.profile),
    settingsValidators: new SettingsValidators(),
    allowed: new Set(options.config.plugins.allow),
    denied: new Set(options.config.plugins.deny),
  };

  admitted.forEach((candidate, index) => {
    const workspace = untrustedWorkspaceOf(candidate);
    if (workspace !== undefined) {
      // Listed, never run: admission findings (if any) follow the headline.
      out[index] = new Decided(
        candidate,
        'disabled',
        [untrustedReason(candidate, workspace), ...candidate.reasons],
        candidate.warnings,
        null,
        context,
        null,
      );
    } else if (candidate.rejected)
      out[index] = new Decided(candidate, 'rejected', candidate.reasons, candidate.warnings, null, context, null);
  });

  const cache = options.buildCache;
  let decided = 0;
  for (const indexes of groups.values()) {
    decided += 1;
    if (decided > 1) yield;
    if (indexes.length === 1) {
      // The common case: one candidate per id.
      const candidate = admitted[indexes[0]!]!;
      out[indexes[0]!] =
        cache === undefined
          ? decideWinner(candidate, ONLY_CANDIDATE, context)
          : cache.decide(candidate, decisionInputs(candidate, context), () => decideWinner(candidate, ONLY_CANDIDATE, context));
      continue;
    }
    const byPriority = new Map<number, number[]>();
    for (const i of indexes) {
      const p = admitted[i]!.facts.source.priority;
      const list = byPriority.get(p);
      if (list === undefined) byPriority.set(p, [i]);
      else list.push(i);
    }
    let winner: number | null = null;
    for (const p of [...byPriority.keys()].sort((a, b) => a - b)) {
      const at = byPriority.get(p)!;
      if (at.length > 1) {
        for (const i of at) {
          const candidate = admitted[i]!;
          const others = at.filter((j) => j !== i).map((j) => describeSource(admitted[j]!));
          const reason = {
            code: ERROR_CODES.AMBIGUOUS_ID,
            message: `id "${candidate.id}" is declared by ${at.length} manifests at the same priority (${candidate.facts.source.root} root): this one and ${others.join(', ')}; rename or remove all but one`,
          };
          out[i] = new Decided(candidate, 'rejected', [reason], candidate.warnings, null, context, null);
        }
        continue;
      }
      const i = at[0]!;
      if (winner === null) {
        winner = i;
        continue;
      }
      const candidate = admitted[i]!;
      const win = admitted[winner]!;
      const reason = {
        code: ERROR_CODES.SHADOWED,
        message: `shadowed by "${win.id}" from ${describeSource(win)}, which has a lower root number (${win.facts.source.priority} < ${candidate.facts.source.priority}); remove one of them or give this one another id`,
      };
      out[i] = new Decided(candidate, 'shadowed', [reason], candidate.warnings, null, context, null);
    }
    if (winner !== null) {
      const candidate = admitted[winner]!;
      const losers = indexes.filter((j) => j !== winner && out[j]?.state === 'shadowed').map((j) => describeSource(admitted[j]!));
      const selection: DecisionStep = {
        step: 'selection',
        message: losers.length === 0 ? 'the only admitted candidate with this id' : `wins over ${losers.join(', ')} (lowest root number)`,
      };
      out[winner] = decideWinner(candidate, selection, context);
    }
  }
  const result = new Array<DecidedCandidate>(out.length);
  let rest = 0;
  for (let i = 0; i < out.length; i += 1) {
    const d = out[i];
    if (d !== undefined) result[i] = d;
    else {
      rest += 1;
      if (rest > 1) yield;
      result[i] = decideWinner(admitted[i]!, ONLY_CANDIDATE, context);
    }
  }
  return result;
}

/** The untrusted workspace a candidate was found in, if it was. */
function untrustedWorkspaceOf(candidate: AdmittedCandidate): string | undefined {
  return candidate.facts.bundled ? undefined : candidate.facts.source.untrustedWorkspace;
}

function untrustedReason(candidate: AdmittedCandidate, workspace: string): Reason {
  const where = candidate.facts.bundled ? '' : ` (${candidate.facts.manifestPath})`;
  return {
    code: ERROR_CODES.WORKSPACE_UNTRUSTED,
    message: `"${candidate.id}" comes from the plugin folder of the workspace ${workspace}${where}, which you have not trusted, so it is not started and takes no part in the decision. If you trust this folder, run \`trellis trust ${shellArg(workspace)}\``,
  };
}

function shellArg(value: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

const ONLY_CANDIDATE: DecisionStep = Object.freeze({ step: 'selection', message: 'the only admitted candidate with this id' });

function identityStep(c: AdmittedCandidate): DecisionStep {
  if (c.facts.bundled) return { step: 'identity', message: `bundled plugin "${c.id}" (${c.facts.descriptor.packageName})` };
  return {
    step: 'identity',
    message:
      c.manifest !== null
        ? `"${c.id}" from ${c.facts.manifestPath}`
        : `"${c.id}" (the folder name: the manifest ${c.facts.manifestPath} did not parse or was not read)`,
  };
}

function admissionStep(c: AdmittedCandidate): DecisionStep {
  if (c.facts.bundled) return { step: 'admission', message: 'skipped: bundled plugins are checked when the build links them' };
  const passed = c.checks.filter((k) => k.result === 'pass').length;
  if (c.rejected) return { step: 'admission', message: `rejected by ${c.reasons.map((r) => r.code).join(', ')}` };
  return {
    step: 'admission',
    message: `admitted (${passed} check(s) passed${c.warnings.length > 0 ? `, warnings: ${c.warnings.map((w) => w.code).join(', ')}` : ''})`,
  };
}

interface PolicyResult {
  readonly enabled: boolean;
  readonly reason: Reason;
  readonly warnings: Reason[];
  readonly explanation: string;
}

const unsaid = (_rule: string, _upTo: number): string => '';

function explanation(id: string, rule: string, upTo: number): string {
  const seen = ['not required', `no [plugins.entries.${id}] enabled switch`, 'not in deny', 'not in allow'].slice(0, upTo);
  return [...seen, rule].join('; ');
}

function decidePolicy(c: AdmittedCandidate, context: DecideContext, explain: boolean): PolicyResult {
  const { config, commandLine } = context.options;
  const activeProfiles = context.activeProfiles;
  const id = c.id;
  const manifest = c.manifest!;
  const entry = config.plugins.entries[id];
  const denied = context.denied.has(id);
  const allowed = context.allowed.has(id);
  const active = config.plugins.profile;
  // The words for `explain` are only built when asked for: 10,000 plugins do not pay for them
  // (nor for a closure to build them).
  const said = explain ? (rule: string, upTo: number): string => explanation(id, rule, upTo) : unsaid;
  // Where an enabled switch came from: the command line of this run, or runtime.toml.
  const enabledBy = commandLine?.enable?.includes(id)
    ? `--enable ${id} on the command line`
    : commandLine?.disable?.includes(id)
      ? `--disable ${id} on the command line`
      : `[plugins.entries.${id}] enabled = ${entry?.enabled}`;
  if (c.facts.bundled && manifest.required) {
    const warnings: Reason[] = [];
    if (denied)
      warnings.push({
        code: ERROR_CODES.REQUIRED_OVERRIDE_IGNORED,
        message: `[plugins] deny names "${id}", a required plugin; it stays enabled. Remove "${id}" from deny`,
      });
    if (entry?.enabled === false) {
      warnings.push({
        code: ERROR_CODES.REQUIRED_OVERRIDE_IGNORED,
        message: commandLine?.disable?.includes(id)
          ? `--disable ${id} is ignored: "${id}" is required and stays enabled`
          : `[plugins.entries.${id}] enabled = false is ignored: "${id}" is required and stays enabled. Remove the line`,
      });
    }
    return {
      enabled: true,
      reason: { code: ERROR_CODES.REQUIRED, message: `"${id}" is required and always enabled` },
      warnings,
      explanation: 'required → enabled',
    };
  }
  if (entry?.enabled === false) {
    const fix = commandLine?.disable?.includes(id) ? 'drop the flag to enable' : 'set it to true or remove it to enable';
    return {
      enabled: false,
      reason: { code: ERROR_CODES.DISABLED_BY_ENTRY, message: `disabled by ${enabledBy}; ${fix}` },
      warnings: [],
      explanation: said(`${enabledBy} → disabled`, 1),
    };
  }
  if (entry?.enabled === true) {
    return {
      enabled: true,
      reason: { code: ERROR_CODES.ENABLED_BY_ENTRY, message: `enabled by ${enabledBy}` },
      warnings: [],
      explanation: said(`${enabledBy} → enabled`, 1),
    };
  }
  if (denied) {
    return {
      enabled: false,
      reason: { code: ERROR_CODES.DENIED, message: `disabled because [plugins] deny names "${id}"; remove it from deny to enable` },
      warnings: [],
      explanation: said('in [plugins] deny → disabled', 2),
    };
  }
  if (allowed) {
    const where = commandLine?.allow?.includes(id) ? `--allow ${id} on the command line` : `[plugins] allow names "${id}"`;
    return {
      enabled: true,
      reason: { code: ERROR_CODES.ALLOWED, message: `enabled because ${where}` },
      warnings: [],
      explanation: said(`${commandLine?.allow?.includes(id) ? `--allow ${id} on the command line` : 'in [plugins] allow'} → enabled`, 3),
    };
  }
  if (manifest.profile !== undefined && activeProfiles.includes(manifest.profile)) {
    return {
      enabled: true,
      reason: {
        code: ERROR_CODES.IN_PROFILE,
        message:
          manifest.profile === active
            ? `enabled by profile "${active}"`
            : `enabled by profile "${active}" (which includes "${manifest.profile}")`,
      },
      warnings: [],
      explanation: said(`its profile "${manifest.profile}" is part of the active profile "${active}" → enabled`, 4),
    };
  }
  const its =
    manifest.profile === undefined
      ? 'it belongs to no profile (opt-in only)'
      : `its profile "${manifest.profile}" is not part of "${active}"`;
  // Name a profile only when one would enable it: an opt-in plugin is in none.
  const larger =
    manifest.profile === undefined
      ? undefined
      : Object.keys(context.options.profiles).find(
          (name) => name !== active && expandProfile(context.options.profiles, name).includes(manifest.profile!),
        );
  const fix = `add "${id}" to [plugins] allow in runtime.toml (or pass --allow ${id} for one run), or set [plugins.entries.${id}] enabled = true${larger !== undefined ? `, or choose profile "${larger}"` : ''}`;
  return {
    enabled: false,
    reason: { code: ERROR_CODES.NOT_IN_PROFILE, message: `not in profile "${active}": ${its}; ${fix}` },
    warnings: [],
    explanation: said(`${its} → disabled`, 4),
  };
}

function hasTools(c: AdmittedCandidate): boolean {
  // A provider or connector adds a model or a channel, not tools; its contract is what it offers.
  if (c.facts.bundled) {
    const d = c.facts.descriptor;
    return d.tools.length > 0 || d.dynamicTools === true || (d.contracts?.length ?? 0) > 0;
  }
  const m = c.manifest!;
  return m.tools.length > 0 || m.runtime?.type === 'process' || m.runtime?.type === 'http';
}

interface DecideContext {
  readonly options: DecideOptions;
  readonly activeProfiles: readonly string[];
  /** Compiled settings schemas, shared by this run's plugins and dropped with it. */
  readonly settingsValidators: SettingsValidators;
  /** `[plugins] allow` and `deny` as sets: an allow list naming each of 1,000 plugins is not scanned 1,000 times. */
  readonly allowed: ReadonlySet<string>;
  readonly denied: ReadonlySet<string>;
}

/**
 * A decided candidate whose `trace` (the words `explain` shows) is built on first access from
 * the same pure inputs, so deciding 10,000 plugins does not build 70,000 sentences nobody reads.
 */
class Decided implements DecidedCandidate {
  #trace: readonly DecisionStep[] | null = null;
  readonly #context: DecideContext;
  readonly #selection: DecisionStep | null;

  constructor(
    readonly admitted: AdmittedCandidate,
    readonly state: PluginState,
    readonly reasons: readonly Reason[],
    readonly warnings: readonly Reason[],
    readonly settings: Readonly<Record<string, unknown>> | null,
    context: DecideContext,
    selection: DecisionStep | null,
  ) {
    this.#context = context;
    this.#selection = selection;
    Object.freeze(this);
  }

  get trace(): readonly DecisionStep[] {
    this.#trace ??= Object.freeze(buildTrace(this, this.#context, this.#selection));
    return this.#trace;
  }
}

function buildTrace(d: Decided, context: DecideContext, selection: DecisionStep | null): DecisionStep[] {
  const c = d.admitted;
  const steps: DecisionStep[] = [identityStep(c), admissionStep(c)];
  const head = d.reasons[0]!;
  if (head.code === ERROR_CODES.WORKSPACE_UNTRUSTED) {
    steps.push({ step: 'trust', message: `disabled: ${head.message}` });
    return steps;
  }
  if (c.rejected) return steps;
  if (selection === null) {
    steps.push({ step: 'selection', message: d.state === 'rejected' ? `rejected: ${head.message}` : head.message });
    return steps;
  }
  steps.push(selection);
  const policy = decidePolicy(c, context, true);
  steps.push({ step: 'policy', message: policy.explanation });
  if (head.code === ERROR_CODES.NO_IMPLEMENTATION) {
    steps.push({ step: 'implementation', message: `disabled: ${head.message}` });
    return steps;
  }
  steps.push({
    step: 'implementation',
    message: c.facts.bundled ? 'bundled implementation, loaded on first use' : `out of process (${c.manifest!.runtime!.type})`,
  });
  if (!policy.enabled) return steps;
  if (head.code === ERROR_CODES.CONFIG_INVALID) {
    steps.push({ step: 'config', message: `invalid: ${head.message}` });
    return steps;
  }
  const settingsKey = c.facts.bundled ? c.facts.descriptor.settings?.key : undefined;
  steps.push({ step: 'config', message: settingsKey !== undefined ? `settings [runtime.tools.${settingsKey}] valid` : 'valid' });
  if (d.state === 'unavailable') {
    steps.push({
      step: 'availability',
      message: `unavailable: ${d.reasons
        .slice(0, -1)
        .map((m) => m.message)
        .join('; ')}`,
    });
  } else {
    const needs = [...c.manifest!.requires_env, ...c.manifest!.requires_commands];
    steps.push({ step: 'availability', message: needs.length === 0 ? 'needs nothing from the environment' : `found ${needs.join(', ')}` });
  }
  return steps;
}

/**
 * Everything besides the admission itself that {@link decideWinner} reads for the only candidate
 * of its id, as plain data: two builds with equal inputs decide it alike (and explain it alike).
 * A test decides random sequences of configs with and without the cache and expects the same.
 */
function decisionInputs(c: AdmittedCandidate, context: DecideContext): unknown {
  const { config, commandLine, env, commandsOnPath, profiles } = context.options;
  const id = c.id;
  const manifest = c.manifest;
  const settingsKey = c.facts.bundled ? c.facts.descriptor.settings?.key : undefined;
  return [
    config.plugins.entries[id] ?? null,
    context.allowed.has(id),
    context.denied.has(id),
    config.plugins.profile,
    context.activeProfiles,
    profiles,
    commandLine?.allow?.includes(id) === true,
    commandLine?.enable?.includes(id) === true,
    commandLine?.disable?.includes(id) === true,
    manifest === null ? null : manifest.requires_env.map((name) => env[name] ?? null),
    manifest === null ? null : manifest.requires_commands.map((name) => commandsOnPath[name] ?? null),
    settingsKey === undefined ? null : (config.runtime.tools[settingsKey] ?? null),
  ];
}

function decideWinner(c: AdmittedCandidate, selection: DecisionStep, context: DecideContext): DecidedCandidate {
  const { options } = context;
  const manifest = c.manifest!;
  const policy = decidePolicy(c, context, false);
  const warnings: Reason[] = c.warnings.length === 0 && policy.warnings.length === 0 ? [] : [...c.warnings, ...policy.warnings];
  if (!hasTools(c)) {
    warnings.push({
      code: ERROR_CODES.NO_TOOLS,
      message: c.facts.bundled
        ? `"${c.id}" has no tools yet; it adds nothing to the tool catalog`
        : `"${c.id}" declares no [[tools]] and its runtime cannot list tools; add [[tools]] entries to its plugin.toml`,
    });
  }

  if (!c.facts.bundled && manifest.runtime === undefined) {
    const reason = {
      code: ERROR_CODES.NO_IMPLEMENTATION,
      message: `${c.facts.manifestPath} has no [runtime] and no bundled plugin implements "${c.id}"; add a [runtime] table (process, script or http) so Trellis can run it`,
    };
    return new Decided(c, 'disabled', policy.enabled ? [reason] : [reason, policy.reason], warnings, null, context, selection);
  }
  if (!policy.enabled) return new Decided(c, 'disabled', [policy.reason], warnings, null, context, selection);

  const descriptor = c.facts.bundled ? c.facts.descriptor : undefined;
  const settings = resolvePluginSettingsWith({ id: c.id, manifest, descriptor, config: options.config }, context.settingsValidators);
  if (settings.value === null) {
    const reason = {
      code: ERROR_CODES.CONFIG_INVALID,
      message: `settings of "${c.id}" are invalid, so it is disabled: ${settings.errors.join('; ')}; fix runtime.toml`,
    };
    return new Decided(c, 'disabled', [reason, policy.reason], warnings, null, context, selection);
  }

  const missing: Reason[] = [];
  for (const name of manifest.requires_env) {
    const value = options.env[name];
    if (value === undefined || value === '') {
      missing.push({
        code: ERROR_CODES.MISSING_ENV,
        message: `environment variable ${name} is not set; "${c.id}" needs it. Set ${name} to make it available`,
      });
    }
  }
  for (const name of manifest.requires_commands) {
    if (!options.commandsOnPath[name]) {
      missing.push({
        code: ERROR_CODES.MISSING_COMMAND,
        message: `program ${name} is not on PATH; "${c.id}" needs it. Install ${name} or add its folder to PATH`,
      });
    }
  }
  // Frozen: a live host hands one decision's settings to every generation that keeps it.
  const value = deepFreeze(settings.value);
  if (missing.length > 0) return new Decided(c, 'unavailable', [...missing, policy.reason], warnings, value, context, selection);
  return new Decided(c, 'enabled', [policy.reason], warnings, value, context, selection);
}
