import { isAbsolute, resolve } from 'node:path';
import { ERROR_CODES, MAX_MANIFEST_BYTES } from '@trellis/sdk';
import { formatMode, isUnsafeFolderMode, isWorldWritable, type Steps } from '@trellis/sdk/internal';
import { containsPath } from './containsPath.ts';
import type { PluginManifest } from '@trellis/sdk';
import type { ParsedManifest } from './parseManifest.ts';
import { registryDependency } from './prepareRegistry.ts';
import type {
  AdmissionCheck,
  AdmissionPolicy,
  AdmittedCandidate,
  CandidateFacts,
  ExternalCandidateFacts,
  FolderFacts,
  Reason,
} from './types.ts';

const STICKY = 0o1000;
const PARENT_SEGMENT = /(?:^|[\\/])\.\.(?:[\\/]|$)/;

// Passing checks are shared frozen constants: 10,000 candidates allocate no check objects or
// message strings for the common case.
const check = (code: string, title: string, result: AdmissionCheck['result'], message: string): AdmissionCheck =>
  Object.freeze({ code, title, result, message });
const PASS_LOCATION = check(
  ERROR_CODES.PATH_ESCAPE,
  'inside its discovery root',
  'pass',
  'manifest and plugin folder resolve inside the root',
);
const PASS_FILE = check(
  ERROR_CODES.UNSAFE_FILE,
  'a regular, single-linked file of at most 256 KiB',
  'pass',
  'a regular file with one link, within the size limit',
);
const PASS_WORLD_WRITABLE = check(
  ERROR_CODES.WORLD_WRITABLE,
  'not writable by every user',
  'pass',
  'neither the manifest nor any folder up to the root is world-writable',
);
const PASS_OWNER = check(
  ERROR_CODES.UNSAFE_OWNER,
  'owned by you or root',
  'pass',
  'the manifest and every folder up to the root belong to you or root',
);
const PASS_SYMLINK = check(ERROR_CODES.SYMLINK, 'no symlink on the way', 'pass', 'no symlink between the root and the manifest');
const PASS_MANIFEST = check(ERROR_CODES.MANIFEST_INVALID, 'valid plugin.toml', 'pass', 'valid TOML that matches the plugin.toml schema');
const PASS_RESERVED = check(
  ERROR_CODES.RESERVED_ID,
  'id not reserved by a required bundled plugin',
  'pass',
  'not the id of a required bundled plugin',
);
const SKIP_NOT_BUNDLED = check(
  ERROR_CODES.BUNDLED_ID_WITHOUT_RUNTIME,
  'a bundled id only with its own [runtime]',
  'skip',
  'not the id of a bundled plugin',
);
const PASS_NO_SIDE_EFFECTS = check(ERROR_CODES.SIDE_EFFECTS_NOT_ALLOWED, 'side effects allowed', 'pass', 'declares no side effects');
const SKIP_NO_RUNTIME = check(ERROR_CODES.PATH_ESCAPE, '[runtime] paths stay in the plugin folder', 'skip', 'no [runtime]');
const SKIP_HTTP_RUNTIME = check(
  ERROR_CODES.PATH_ESCAPE,
  '[runtime] paths stay in the plugin folder',
  'skip',
  'an http runtime has no paths',
);
const PASS_RUNTIME_PATHS = check(
  ERROR_CODES.PATH_ESCAPE,
  '[runtime] paths stay in the plugin folder',
  'pass',
  'relative command and args resolve inside the plugin folder',
);

/**
 * Admits or rejects one candidate. Pure: it reads only the facts discovery gathered and the
 * policy. Every check is recorded with its result (pass, fail, warn, skip) so `explain` can show
 * them; every failing check becomes a reason, the first one the headline. Bundled candidates skip
 * admission (they were checked when the build linked them).
 */
export function admitCandidate(facts: CandidateFacts, policy: AdmissionPolicy): AdmittedCandidate {
  return admitWith(facts, policy, new Map());
}

/**
 * Admits the candidates of one run, pausable after each (see `Steps`); their clean check lists are
 * shared within the run (see `shared`). `cache` is a host's `RegistryBuildCache`: its `parse`
 * replaces `parseManifest`, and its `admit` may answer with the last build's admission of the same
 * facts.
 */
export function* admitCandidatesSteps(
  candidates: readonly CandidateFacts[],
  policy: AdmissionPolicy,
  cache?: {
    readonly parse: ParseManifest;
    readonly admit: (facts: CandidateFacts, admit: () => AdmittedCandidate) => AdmittedCandidate;
  },
): Steps<AdmittedCandidate[]> {
  const lists: SharedLists = new Map();
  const admitted = new Array<AdmittedCandidate>(candidates.length);
  for (let i = 0; i < candidates.length; i += 1) {
    if (i > 0) yield;
    const facts = candidates[i]!;
    admitted[i] =
      cache === undefined ? admitWith(facts, policy, lists) : cache.admit(facts, () => admitWith(facts, policy, lists, cache.parse));
  }
  return admitted;
}

type ParseManifest = (bytes: Uint8Array) => ParsedManifest;

function admitWith(facts: CandidateFacts, policy: AdmissionPolicy, lists: SharedLists, parse?: ParseManifest): AdmittedCandidate {
  if (facts.bundled) {
    const manifest = facts.descriptor.manifest;
    return Object.freeze({ facts, id: manifest.id, kind: manifest.kind, manifest, rejected: false, reasons: [], warnings: [], checks: [] });
  }
  const checks: AdmissionCheck[] = [];
  const where = facts.manifestPath;

  checks.push(checkLocation(facts));
  checks.push(checkFile(facts));
  checks.push(checkWorldWritable(facts));
  checks.push(checkOwner(facts, policy.uid));
  checks.push(
    facts.symlinks.length === 0
      ? PASS_SYMLINK
      : {
          code: ERROR_CODES.SYMLINK,
          title: 'no symlink on the way',
          result: 'warn',
          message: `followed symlink${facts.symlinks.length > 1 ? 's' : ''} ${facts.symlinks.join(', ')}; the plugin is what ${facts.symlinks.length > 1 ? 'they point' : 'it points'} to now (${facts.pluginDirReal ?? 'unresolved'}). Replace the link with the folder itself to silence this`,
        },
  );

  let manifest: PluginManifest | null = null;
  let id = facts.folderName;
  if (facts.bytes === null) {
    checks.push({
      code: ERROR_CODES.MANIFEST_INVALID,
      title: 'valid plugin.toml',
      result: 'skip',
      message: 'not read (see the file check)',
    });
  } else {
    // Looked up only here: a run with bundled candidates alone never loads the parser.
    const parsed = (parse ?? registryDependency('parseManifest'))(facts.bytes);
    manifest = parsed.manifest;
    if (manifest !== null) id = manifest.id;
    checks.push(
      manifest !== null
        ? PASS_MANIFEST
        : {
            code: ERROR_CODES.MANIFEST_INVALID,
            title: 'valid plugin.toml',
            result: 'fail',
            message: `${where}: ${parsed.errors.join('; ')}`,
          },
    );
  }

  if (manifest === null) {
    for (const [code, title] of [
      [ERROR_CODES.RESERVED_ID, 'id not reserved by a required bundled plugin'],
      [ERROR_CODES.BUNDLED_ID_WITHOUT_RUNTIME, 'a bundled id only with its own [runtime]'],
      [ERROR_CODES.SIDE_EFFECTS_NOT_ALLOWED, 'side effects allowed'],
      [ERROR_CODES.PATH_ESCAPE, '[runtime] paths stay in the plugin folder'],
    ] as const) {
      checks.push({ code, title, result: 'skip', message: 'needs a valid manifest' });
    }
  } else {
    checks.push(...checkManifest(facts, manifest, policy));
  }

  let reasons: Reason[] = NONE;
  let warnings: Reason[] = NONE;
  for (const check of checks) {
    if (check.result === 'fail') (reasons === NONE ? (reasons = []) : reasons).push({ code: check.code, message: check.message });
    else if (check.result === 'warn') (warnings === NONE ? (warnings = []) : warnings).push({ code: check.code, message: check.message });
  }
  return Object.freeze({
    facts,
    id,
    kind: manifest?.kind ?? 'unknown',
    manifest,
    rejected: reasons.length > 0,
    reasons,
    warnings,
    checks: shared(checks, lists),
  });
}

/** The empty reason list every clean candidate shares (frozen). */
const NONE = Object.freeze([]) as unknown as Reason[];

// Check lists made only of the shared constants above are shared within a run: a clean candidate's ten
// checks are one of a handful of combinations, so 10,000 candidates need a few frozen lists, not
// 10,000 (which the collector would copy twice each while the pipeline runs).
const SHARED_CHECKS: ReadonlyMap<AdmissionCheck, number> = new Map(
  [
    PASS_LOCATION,
    PASS_FILE,
    PASS_WORLD_WRITABLE,
    PASS_OWNER,
    PASS_SYMLINK,
    PASS_MANIFEST,
    PASS_RESERVED,
    SKIP_NOT_BUNDLED,
    PASS_NO_SIDE_EFFECTS,
    SKIP_NO_RUNTIME,
    SKIP_HTTP_RUNTIME,
    PASS_RUNTIME_PATHS,
  ].map((check, index) => [check, index + 1]),
);
/** One run's shared check lists, by the list's key (see `shared`). */
type SharedLists = Map<number, readonly AdmissionCheck[]>;

function shared(checks: AdmissionCheck[], lists: SharedLists): readonly AdmissionCheck[] {
  // Up to 12 checks of 4 bits each: the key stays an exact integer.
  if (checks.length > 12) return checks;
  let key = 0;
  for (let i = 0; i < checks.length; i += 1) {
    const index = SHARED_CHECKS.get(checks[i]!);
    if (index === undefined) return checks;
    key = key * 16 + index;
  }
  let list = lists.get(key);
  if (list === undefined) {
    list = Object.freeze(checks);
    lists.set(key, list);
  }
  return list;
}

function checkLocation(facts: ExternalCandidateFacts): AdmissionCheck {
  const base = { code: ERROR_CODES.PATH_ESCAPE, title: 'inside its discovery root' } as const;
  const outside: string[] = [];
  if (facts.pluginDirReal !== null && !containsPath(facts.rootReal, facts.pluginDirReal))
    outside.push(`the plugin folder resolves to ${facts.pluginDirReal}`);
  if (facts.manifestReal !== null && !containsPath(facts.rootReal, facts.manifestReal))
    outside.push(`the manifest resolves to ${facts.manifestReal}`);
  if (outside.length > 0) {
    return {
      ...base,
      result: 'fail',
      message: `${facts.manifestPath}: ${outside.join(' and ')}, outside the ${facts.source.root} root ${facts.rootReal}; move the plugin into the root (a symlink may point only inside it) or add its real folder as a plugin path`,
    };
  }
  if (facts.manifestReal === null && facts.pluginDirReal === null) return { ...base, result: 'skip', message: 'the path does not resolve' };
  return PASS_LOCATION;
}

function checkFile(facts: ExternalCandidateFacts): AdmissionCheck {
  const base = { code: ERROR_CODES.UNSAFE_FILE, title: 'a regular, single-linked file of at most 256 KiB' } as const;
  if (facts.readRefusal !== null) {
    const fix =
      facts.readRefusal.kind === 'TOO_LARGE'
        ? `shrink it below ${MAX_MANIFEST_BYTES} bytes`
        : facts.readRefusal.kind === 'NOT_REGULAR' || facts.readRefusal.kind === 'DANGLING'
          ? 'replace it with a regular file'
          : 'make it readable by the user running trellis';
    return { ...base, result: 'fail', message: `${facts.manifestPath} was not read: ${facts.readRefusal.message}; ${fix}` };
  }
  const stat = facts.manifestStat;
  if (stat === null)
    return { ...base, result: 'fail', message: `${facts.manifestPath} could not be examined; check that it exists and is readable` };
  if (stat.nlink > 1) {
    return {
      ...base,
      result: 'fail',
      message: `${facts.manifestPath} has ${stat.nlink} hard links, so it can be changed through a path outside this folder; copy it (cp, not ln) so it has one link`,
    };
  }
  return PASS_FILE;
}

function folderLabel(folder: FolderFacts): string {
  return folder.role === 'plugin' ? 'plugin folder' : folder.role === 'root' ? 'root folder' : 'folder';
}

function checkWorldWritable(facts: ExternalCandidateFacts): AdmissionCheck {
  const base = { code: ERROR_CODES.WORLD_WRITABLE, title: 'not writable by every user' } as const;
  const problems: string[] = [];
  const fixes: string[] = [];
  const stat = facts.manifestStat;
  if (stat !== null && isWorldWritable(stat.mode)) {
    problems.push(`the manifest ${facts.manifestReal ?? facts.manifestPath} (mode ${formatMode(stat.mode)})`);
    fixes.push(`chmod o-w ${facts.manifestReal ?? facts.manifestPath}`);
  }
  for (const folder of facts.folders) {
    if (folder.stat === null) {
      problems.push(`the ${folderLabel(folder)} ${folder.path} (cannot be examined)`);
      continue;
    }
    if (isUnsafeFolderMode(folder.stat.mode, folder.stat.uid)) {
      const sticky = (folder.stat.mode & STICKY) !== 0 ? ', sticky but not owned by root' : '';
      problems.push(`the ${folderLabel(folder)} ${folder.path} (mode ${formatMode(folder.stat.mode)}${sticky})`);
      fixes.push(`chmod o-w ${folder.path}`);
    }
  }
  if (problems.length === 0) {
    if (stat === null && facts.folders.length === 0) return { ...base, result: 'skip', message: 'nothing could be examined' };
    return PASS_WORLD_WRITABLE;
  }
  return {
    ...base,
    result: 'fail',
    message: `any user can change ${problems.join(', ')}; ${fixes.length > 0 ? `run ${fixes.join(' && ')}` : 'fix the permissions'}`,
  };
}

function checkOwner(facts: ExternalCandidateFacts, uid: number): AdmissionCheck {
  const base = { code: ERROR_CODES.UNSAFE_OWNER, title: 'owned by you or root' } as const;
  const foreign: string[] = [];
  const stat = facts.manifestStat;
  if (stat !== null && stat.uid !== uid && stat.uid !== 0)
    foreign.push(`the manifest ${facts.manifestReal ?? facts.manifestPath} (uid ${stat.uid})`);
  for (const folder of facts.folders) {
    if (folder.stat !== null && folder.stat.uid !== uid && folder.stat.uid !== 0) {
      foreign.push(`the ${folderLabel(folder)} ${folder.path} (uid ${folder.stat.uid})`);
    }
  }
  if (foreign.length === 0)
    return stat === null && facts.folders.length === 0 ? { ...base, result: 'skip', message: 'nothing could be examined' } : PASS_OWNER;
  return {
    ...base,
    result: 'fail',
    message: `${foreign.join(', ')} ${foreign.length > 1 ? 'belong' : 'belongs'} to another user than you (uid ${uid}) or root, who could change it; chown it to yourself or install the plugin in a folder you own`,
  };
}

/** Whether a command or argument is a relative path that resolves outside the plugin folder. */
/** `[runtime] cwd`: relative to the plugin folder, or under `${WORKSPACE}`; never absolute, never climbing out. */
function workingFolderEscapes(pluginDir: string, cwd: string): boolean {
  const inWorkspace = /^\$\{WORKSPACE\}(\/|$)/.exec(cwd);
  const rest = inWorkspace ? cwd.slice(inWorkspace[0].length) : cwd;
  if (isAbsolute(rest) || rest.includes('${')) return true;
  const base = inWorkspace ? '/workspace' : pluginDir;
  return !containsPath(base, resolve(base, rest === '' ? '.' : rest));
}

function escapesFolder(pluginDir: string, value: string, isCommand: boolean): boolean {
  if (value === '' || isAbsolute(value)) return false;
  // A bare command name is looked up on PATH; an option is not a path.
  if (isCommand && !value.includes('/')) return false;
  if (!isCommand && value.startsWith('-')) return false;
  // A relative path with no `..` segment cannot climb out: the common case costs no resolve().
  if (!PARENT_SEGMENT.test(value)) return false;
  return !containsPath(pluginDir, resolve(pluginDir, value));
}

function checkManifest(facts: ExternalCandidateFacts, manifest: PluginManifest, policy: AdmissionPolicy): AdmissionCheck[] {
  const checks: AdmissionCheck[] = [];
  const bundled = policy.bundledIds.get(manifest.id);
  checks.push(
    bundled?.required === true
      ? {
          code: ERROR_CODES.RESERVED_ID,
          title: 'id not reserved by a required bundled plugin',
          result: 'fail',
          message: `${facts.manifestPath}: id "${manifest.id}" belongs to a required bundled plugin and cannot be taken by an external one; choose another id`,
        }
      : PASS_RESERVED,
  );
  checks.push(
    bundled !== undefined && bundled.required === false && manifest.runtime === undefined
      ? {
          code: ERROR_CODES.BUNDLED_ID_WITHOUT_RUNTIME,
          title: 'a bundled id only with its own [runtime]',
          result: 'fail',
          message: `${facts.manifestPath}: id "${manifest.id}" is a bundled plugin's id and this manifest has no [runtime]; it would shadow the bundled plugin with nothing to run. Add a [runtime] table to replace the bundled plugin, configure the bundled one with [plugins.entries.${manifest.id}] instead, or choose another id`,
        }
      : bundled === undefined
        ? SKIP_NOT_BUNDLED
        : {
            code: ERROR_CODES.BUNDLED_ID_WITHOUT_RUNTIME,
            title: 'a bundled id only with its own [runtime]',
            result: 'pass',
            message: `has its own [runtime] (${manifest.runtime?.type}); it replaces the bundled plugin`,
          },
  );
  let sideEffectTools: string[] | null = null;
  for (const tool of manifest.tools) if (tool.side_effects === true) (sideEffectTools ??= []).push(tool.name);
  const hasSideEffects = manifest.side_effects || sideEffectTools !== null;
  if (!hasSideEffects) {
    checks.push(PASS_NO_SIDE_EFFECTS);
  } else if (policy.allow.includes(manifest.id)) {
    checks.push({
      code: ERROR_CODES.SIDE_EFFECTS_NOT_ALLOWED,
      title: 'side effects allowed',
      result: 'pass',
      message: `declares side effects; "${manifest.id}" is in [plugins] allow`,
    });
  } else {
    const what = manifest.side_effects ? 'side_effects = true' : `tools with side effects (${(sideEffectTools ?? []).join(', ')})`;
    checks.push({
      code: ERROR_CODES.SIDE_EFFECTS_NOT_ALLOWED,
      title: 'side effects allowed',
      result: 'fail',
      message: `${facts.manifestPath}: declares ${what} but "${manifest.id}" is not in [plugins] allow; add it to allow in runtime.toml if you trust it`,
    });
  }
  const runtime = manifest.runtime;
  const pluginDir = facts.pluginDirReal ?? facts.pluginDir;
  if (runtime === undefined || runtime.type === 'http') {
    checks.push(runtime === undefined ? SKIP_NO_RUNTIME : SKIP_HTTP_RUNTIME);
  } else {
    const bad: string[] = [];
    if (escapesFolder(pluginDir, runtime.command, true)) bad.push(`runtime.command "${runtime.command}"`);
    const args = runtime.args;
    for (let i = 0; i < args.length; i += 1) {
      if (escapesFolder(pluginDir, args[i]!, false)) bad.push(`runtime.args[${i}] "${args[i]}"`);
    }
    if (runtime.cwd !== undefined && workingFolderEscapes(pluginDir, runtime.cwd))
      bad.push(
        `runtime.cwd "${runtime.cwd}" (use a folder inside the plugin folder, or \${WORKSPACE} or \${WORKSPACE}/sub for the workspace)`,
      );
    checks.push(
      bad.length === 0
        ? PASS_RUNTIME_PATHS
        : {
            code: ERROR_CODES.PATH_ESCAPE,
            title: '[runtime] paths stay in the plugin folder',
            result: 'fail',
            message: `${facts.manifestPath}: ${bad.join(', ')} ${bad.length > 1 ? 'leave' : 'leaves'} the plugin folder ${pluginDir}; keep the plugin's files inside its folder or use an absolute path to an installed program`,
          },
    );
  }
  if (manifest.required) {
    checks.push({
      code: ERROR_CODES.REQUIRED_NOT_ALLOWED,
      title: 'required only for bundled plugins',
      result: 'warn',
      message: `${facts.manifestPath}: required = true is ignored for an external plugin; only bundled plugins can be required. Remove the line`,
    });
  }
  return checks;
}
