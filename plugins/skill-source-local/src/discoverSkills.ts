import { constants, type Stats } from 'node:fs';
import { lstat, open, readdir, realpath } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { ERROR_CODES } from '@trellis/sdk';
import { isPathInside } from '@trellis/sdk/internal';
import { compileInputSchema, type CompiledInputSchema } from './compileInputSchema.ts';
import { parseSkillMarkdown } from './parseSkillMarkdown.ts';
import type { Reason } from './Reason.ts';
import { resolveInterpreter } from './resolveInterpreter.ts';
import type { SkillRoot, SkillRootSource } from './resolveSkillRoots.ts';
import { fileProblems, folderProblems, MAX_SKILL_FILE_BYTES, type PathFacts } from './skillAdmission.ts';

/** Skill folders looked at per root; the rest are reported, not read. */
export const MAX_SKILLS_PER_ROOT = 1000;

/** A script of an admitted skill, ready to run. */
export interface SkillScript {
  /** The name `run { script }` takes. */
  readonly name: string;
  /** As declared, relative to the skill folder. */
  readonly path: string;
  /** The resolved file, inside the skill folder. */
  readonly realPath: string;
  /** argv prefix placed before `realPath`; `[]` runs the file directly. */
  readonly interpreter: readonly string[];
}

/** One skill folder found under a root, whatever became of it. */
export interface SkillCandidate {
  /** From the front matter; the folder name when the front matter could not be read. */
  readonly name: string;
  readonly state: 'admitted' | 'rejected' | 'shadowed';
  readonly source: SkillRootSource;
  /** Realpath of the root the skill was found in. */
  readonly root: string;
  /** The skill folder as found (`<root>/<folder>`). */
  readonly dir: string;
  /** Realpath of the skill folder; scripts run here. Null when it could not be resolved safely. */
  readonly realDir: string | null;
  readonly description: string | null;
  readonly body: string | null;
  readonly scripts: readonly SkillScript[];
  readonly inputSchema: Readonly<Record<string, unknown>> | null;
  readonly validator: CompiledInputSchema | null;
  /** Why rejected or shadowed (first is the headline). Empty when admitted. */
  readonly reasons: readonly Reason[];
  readonly warnings: readonly Reason[];
}

/** Every skill found, in a stable order. */
export interface SkillLibrary {
  /** Admitted skills, by name. */
  readonly skills: readonly SkillCandidate[];
  /** Rejected and shadowed candidates, by name then root order. */
  readonly others: readonly SkillCandidate[];
  /** Root-level notes (a configured root that does not exist, too many folders). */
  readonly warnings: readonly Reason[];
}

/** What `discoverSkills` needs. */
export interface DiscoverSkillsOptions {
  readonly roots: readonly SkillRoot[];
  /** `[runtime.tools.skills] interpreters`. */
  readonly interpreters: Readonly<Record<string, string | readonly string[]>>;
  /** The uid allowed to own skill files besides root; default the current process's. */
  readonly currentUid?: number;
  /** `[runtime.tools.skills] in_process`: names trusted to run in the host, honoured only by location. */
  readonly inProcess?: readonly string[];
  /** Whether the workspace skill root counts as trusted (the workspace was trusted by the user). Default false. */
  readonly trustWorkspace?: boolean;
}

/**
 * Whether a skill may run in the host (a worker thread): its name is in `in_process` *and* it was
 * found, after realpath, under a trusted skill root — your user root or a configured path, and the
 * workspace root only when the workspace is trusted. A name alone is never enough.
 */
export function isTrustedInProcess(
  skill: Pick<SkillCandidate, 'name' | 'source'>,
  inProcess: readonly string[],
  trustWorkspace = false,
): boolean {
  return inProcess.includes(skill.name) && (skill.source !== 'workspace' || trustWorkspace);
}

/**
 * Reads every skill root and admits or rejects each `<root>/<folder>/SKILL.md`. Nothing here
 * throws for a bad skill: it is returned with its reasons. The first root wins a name clash; two
 * admitted skills with one name in the same root are both rejected (`AMBIGUOUS_ID`).
 */
export async function discoverSkills(options: DiscoverSkillsOptions): Promise<SkillLibrary> {
  const uid = options.currentUid ?? process.getuid?.() ?? 0;
  const warnings: Reason[] = [];
  const found: SkillCandidate[][] = [];
  const seenRoots = new Set<string>();
  for (const root of options.roots) {
    let rootReal: string;
    try {
      rootReal = await realpath(root.path);
      if (!(await lstat(rootReal)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    } catch (error) {
      if (root.source === 'configured') {
        warnings.push({
          code: ERROR_CODES.ROOT_MISSING,
          message: `skill root ${root.path} (from [runtime.tools.skills] paths) ${errnoText(error)}; create it or remove it from paths`,
        });
      }
      continue;
    }
    if (seenRoots.has(rootReal)) continue;
    seenRoots.add(rootReal);
    found.push(await scanRoot({ source: root.source, rootReal, uid, interpreters: options.interpreters, warnings }));
  }
  return settleClashes(found, warnings, { inProcess: options.inProcess ?? [], trustWorkspace: options.trustWorkspace ?? false });
}

interface ScanContext {
  readonly source: SkillRootSource;
  readonly rootReal: string;
  readonly uid: number;
  readonly interpreters: DiscoverSkillsOptions['interpreters'];
  readonly warnings: Reason[];
}

async function scanRoot(ctx: ScanContext): Promise<SkillCandidate[]> {
  let entries: string[];
  try {
    entries = (await readdir(ctx.rootReal)).filter((n) => !n.startsWith('.')).sort();
  } catch (error) {
    ctx.warnings.push({ code: ERROR_CODES.ROOT_MISSING, message: `skill root ${ctx.rootReal} cannot be read (${errnoText(error)})` });
    return [];
  }
  if (entries.length > MAX_SKILLS_PER_ROOT) {
    ctx.warnings.push({
      code: ERROR_CODES.TOO_LARGE,
      message: `skill root ${ctx.rootReal} holds ${entries.length} entries; only the first ${MAX_SKILLS_PER_ROOT} (by name) were read`,
    });
    entries = entries.slice(0, MAX_SKILLS_PER_ROOT);
  }
  const out: SkillCandidate[] = [];
  for (const entry of entries) {
    let candidate: SkillCandidate | undefined;
    try {
      candidate = await inspectSkillFolder(ctx, entry);
    } catch (error) {
      // One skill, one verdict: whatever its files do to a reader, only this skill is refused.
      const dir = join(ctx.rootReal, entry);
      candidate = {
        ...emptyCandidate(ctx, entry, dir, null),
        state: 'rejected',
        reasons: [
          {
            code: ERROR_CODES.MANIFEST_INVALID,
            message: `${join(dir, 'SKILL.md')}: could not be read (${errnoText(error)}); fix or remove this skill folder`,
          },
        ],
        warnings: [],
      };
    }
    if (candidate) out.push(candidate);
  }
  return out;
}

/** One folder of a root; undefined when it is not a skill at all (a plain file, no SKILL.md). */
async function inspectSkillFolder(ctx: ScanContext, entry: string): Promise<SkillCandidate | undefined> {
  const dir = join(ctx.rootReal, entry);
  const warnings: Reason[] = [];
  const reject = (reasons: Reason[], realDir: string | null): SkillCandidate => ({
    ...emptyCandidate(ctx, entry, dir, realDir),
    state: 'rejected',
    reasons,
    warnings,
  });

  let dirStat: Stats;
  try {
    dirStat = await lstat(dir);
  } catch {
    return undefined;
  }
  let realDir = dir;
  if (dirStat.isSymbolicLink()) {
    try {
      realDir = await realpath(dir);
      dirStat = await lstat(realDir);
    } catch {
      return undefined; // A dangling link is not a skill.
    }
    if (!dirStat.isDirectory()) return undefined;
    warnings.push({ code: ERROR_CODES.SYMLINK, message: `${dir} is a symbolic link to ${realDir}` });
    if (!isPathInside(ctx.rootReal, realDir)) {
      return reject(
        [
          {
            code: ERROR_CODES.PATH_ESCAPE,
            message: `${dir} resolves to ${realDir}, outside its skill root ${ctx.rootReal}; move the skill into the root`,
          },
        ],
        null,
      );
    }
  } else if (!dirStat.isDirectory()) {
    return undefined;
  }

  const manifestPath = join(realDir, 'SKILL.md');
  let manifestStat: Stats;
  try {
    manifestStat = await lstat(manifestPath);
  } catch {
    return undefined; // No SKILL.md: an ordinary folder.
  }
  let manifestReal = manifestPath;
  if (manifestStat.isSymbolicLink()) {
    try {
      manifestReal = await realpath(manifestPath);
    } catch (error) {
      return reject(
        [
          {
            code: ERROR_CODES.UNSAFE_FILE,
            message: `${manifestPath} is a symbolic link that cannot be followed (${errnoText(error)}); replace it with a regular file`,
          },
        ],
        realDir,
      );
    }
    warnings.push({ code: ERROR_CODES.SYMLINK, message: `${manifestPath} is a symbolic link to ${manifestReal}` });
    if (!isPathInside(ctx.rootReal, manifestReal)) {
      return reject(
        [
          {
            code: ERROR_CODES.PATH_ESCAPE,
            message: `${manifestPath} resolves to ${manifestReal}, outside its skill root ${ctx.rootReal}; copy the file into the skill folder`,
          },
        ],
        realDir,
      );
    }
  }

  const read = await readManifest(manifestReal, ctx.uid);
  const reasons = [...read.reasons];
  reasons.push(...(await folderChainProblems(ctx.rootReal, realDir, ctx.uid)));
  if (dirname(manifestReal) !== realDir) reasons.push(...(await folderChainProblems(ctx.rootReal, dirname(manifestReal), ctx.uid)));
  if (reasons.length > 0 || read.text === undefined) return reject(dedupe(reasons), realDir);

  const parsed = parseSkillMarkdown({ text: read.text, file: manifestPath });
  if (!parsed.ok) return reject([...parsed.errors], realDir);
  const fm = parsed.value;
  const named = (c: SkillCandidate): SkillCandidate => ({ ...c, name: fm.name, description: fm.description });

  let validator: CompiledInputSchema | null = null;
  if (fm.inputSchema !== undefined) {
    const compiled = compileInputSchema(fm.inputSchema);
    if (typeof compiled === 'string') {
      return named(
        reject(
          [{ code: ERROR_CODES.MANIFEST_INVALID, message: `${manifestPath}: front matter key \`input_schema\`: ${compiled}` }],
          realDir,
        ),
      );
    }
    validator = compiled;
  }

  const scripts: SkillScript[] = [];
  const scriptReasons: Reason[] = [];
  for (const declared of fm.scripts) {
    const result = await admitScript({ ctx, realDir, manifestPath, declared });
    if ('reasons' in result) scriptReasons.push(...result.reasons);
    else scripts.push(result.script);
  }
  if (scriptReasons.length > 0) return named(reject(scriptReasons, realDir));

  return {
    ...emptyCandidate(ctx, fm.name, dir, realDir),
    state: 'admitted',
    description: fm.description,
    body: fm.body,
    scripts,
    inputSchema: fm.inputSchema ?? null,
    validator,
    warnings,
  };
}

/** Opens SKILL.md without following a final symlink and without blocking on a FIFO, then checks the handle. */
async function readManifest(path: string, uid: number): Promise<{ reasons: Reason[]; text?: string }> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message =
      code === 'ELOOP'
        ? `${path} is a symbolic link that changed while it was being read; replace it with a regular file`
        : `${path} cannot be opened (${errnoText(error)}); make it readable by the current user`;
    return { reasons: [{ code: ERROR_CODES.UNSAFE_FILE, message }] };
  }
  try {
    const facts = toFacts(path, await handle.stat());
    const reasons = fileProblems(facts, uid, { manifest: true });
    if (reasons.length > 0) return { reasons };
    const buffer = Buffer.alloc(MAX_SKILL_FILE_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_SKILL_FILE_BYTES) {
        return {
          reasons: [
            {
              code: ERROR_CODES.UNSAFE_FILE,
              message: `${path} grew past ${MAX_SKILL_FILE_BYTES} bytes while it was read; keep SKILL.md under the limit`,
            },
          ],
        };
      }
    }
    return { reasons: [], text: buffer.subarray(0, length).toString('utf8') };
  } finally {
    await handle.close();
  }
}

/** Checks `folder` and every folder above it up to and including `root` (all realpath'd). */
async function folderChainProblems(root: string, folder: string, uid: number): Promise<Reason[]> {
  const problems: Reason[] = [];
  let current = folder;
  for (;;) {
    try {
      problems.push(...folderProblems(toFacts(current, await lstat(current)), uid));
    } catch (error) {
      problems.push({ code: ERROR_CODES.UNSAFE_FILE, message: `${current} cannot be inspected (${errnoText(error)})` });
    }
    if (current === root || !isPathInside(root, current)) break;
    current = dirname(current);
  }
  return problems;
}

async function admitScript(options: {
  ctx: ScanContext;
  realDir: string;
  manifestPath: string;
  declared: { name: string; path: string };
}): Promise<{ script: SkillScript } | { reasons: Reason[] }> {
  const { ctx, realDir, manifestPath, declared } = options;
  const key = `scripts${/^[A-Za-z0-9_-]+$/.test(declared.name) && declared.name !== declared.path ? `.${declared.name}` : `[${JSON.stringify(declared.name)}]`}`;
  const where = `${manifestPath}: front matter key \`${key}\``;
  const joined = join(realDir, declared.path);
  if (!isPathInside(realDir, joined)) {
    return {
      reasons: [
        {
          code: ERROR_CODES.PATH_ESCAPE,
          message: `${where}: ${JSON.stringify(declared.path)} leaves the skill folder ${realDir}; scripts must live inside it`,
        },
      ],
    };
  }
  let real: string;
  try {
    real = await realpath(joined);
  } catch (error) {
    return { reasons: [{ code: ERROR_CODES.NOT_FOUND, message: `${where}: ${joined} ${errnoText(error)}; add the file or fix the path` }] };
  }
  if (!isPathInside(realDir, real)) {
    return {
      reasons: [
        {
          code: ERROR_CODES.PATH_ESCAPE,
          message: `${where}: ${joined} resolves to ${real}, outside the skill folder ${realDir}; copy the script into the skill folder`,
        },
      ],
    };
  }
  const facts = toFacts(real, await lstat(real));
  const reasons = fileProblems(facts, ctx.uid, { manifest: false });
  if (dirname(real) !== realDir) reasons.push(...(await folderChainProblems(realDir, dirname(real), ctx.uid)));
  if (reasons.length > 0) return { reasons: reasons.map((r) => ({ code: r.code, message: `${where}: ${r.message}` })) };
  const interpreter = resolveInterpreter({ scriptPath: real, mode: facts.mode, overrides: ctx.interpreters });
  if (interpreter === undefined) {
    return {
      reasons: [
        {
          code: ERROR_CODES.MANIFEST_INVALID,
          message: `${where}: no interpreter for ${JSON.stringify(declared.path)}; name one in [runtime.tools.skills] interpreters (e.g. { ".rb" = "ruby" }) or make the file executable with a #! line`,
        },
      ],
    };
  }
  return { script: { name: declared.name, path: declared.path, realPath: real, interpreter } };
}

function settleClashes(
  found: SkillCandidate[][],
  warnings: Reason[],
  trust: { inProcess: readonly string[]; trustWorkspace: boolean },
): SkillLibrary {
  const winners = new Map<string, SkillCandidate>();
  const others: SkillCandidate[] = [];
  for (const rootCandidates of found) {
    const byName = new Map<string, SkillCandidate[]>();
    for (const c of rootCandidates) {
      if (c.state !== 'admitted') {
        others.push(c);
        continue;
      }
      if (trust.inProcess.includes(c.name) && !isTrustedInProcess(c, trust.inProcess, trust.trustWorkspace)) {
        // An imposter: a skill that takes the name of one you trust to run in the host, from a
        // place you did not trust. Refused, so it neither runs in the host nor hides the real one.
        others.push({
          ...c,
          state: 'rejected',
          reasons: [
            {
              code: ERROR_CODES.SKILL_NOT_TRUSTED,
              message: `${c.dir} is named ${JSON.stringify(c.name)}, which [runtime.tools.skills] in_process trusts to run inside Trellis, but it is in the ${c.source} skill root, which is not trusted; in_process trusts skills by location (your user skill root or a configured path), never by name. Move the skill there, trust this workspace, or remove the name from in_process`,
            },
          ],
        });
        continue;
      }
      byName.set(c.name, [...(byName.get(c.name) ?? []), c]);
    }
    for (const [name, group] of byName) {
      if (group.length > 1) {
        const dirs = group.map((c) => c.dir).join(', ');
        for (const c of group) {
          others.push({
            ...c,
            state: 'rejected',
            reasons: [
              {
                code: ERROR_CODES.AMBIGUOUS_ID,
                message: `${group.length} skills in one root are named ${JSON.stringify(name)} (${dirs}); rename all but one`,
              },
            ],
          });
        }
        continue;
      }
      const only = group[0]!;
      const winner = winners.get(name);
      if (winner) {
        others.push({
          ...only,
          state: 'shadowed',
          reasons: [
            {
              code: ERROR_CODES.SHADOWED,
              message: `${only.dir} is shadowed by ${winner.dir} (${winner.source} root), which has the same name and comes first`,
            },
          ],
        });
      } else {
        winners.set(name, only);
      }
    }
  }
  const byNameThenOrder = (a: SkillCandidate, b: SkillCandidate) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return {
    skills: [...winners.values()].sort(byNameThenOrder),
    others: others.sort(byNameThenOrder),
    warnings,
  };
}

function emptyCandidate(ctx: ScanContext, name: string, dir: string, realDir: string | null): SkillCandidate {
  return {
    name,
    state: 'rejected',
    source: ctx.source,
    root: ctx.rootReal,
    dir,
    realDir,
    description: null,
    body: null,
    scripts: [],
    inputSchema: null,
    validator: null,
    reasons: [],
    warnings: [],
  };
}

function toFacts(path: string, stat: Stats): PathFacts {
  const type = stat.isFile()
    ? 'file'
    : stat.isDirectory()
      ? 'directory'
      : stat.isSymbolicLink()
        ? 'symlink'
        : stat.isFIFO()
          ? 'fifo'
          : stat.isSocket()
            ? 'socket'
            : 'device';
  return { path, mode: stat.mode, uid: stat.uid, nlink: stat.nlink, size: stat.size, type };
}

function dedupe(reasons: Reason[]): Reason[] {
  const seen = new Set<string>();
  return reasons.filter((r) => {
    const key = `${r.code}\0${r.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function errnoText(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'does not exist';
    case 'ENOTDIR':
      return 'is not a directory';
    case 'EACCES':
    case 'EPERM':
      return 'is not readable by the current user';
    default:
      return code ?? (error instanceof Error ? error.message : String(error));
  }
}

/** The path of `file` relative to `dir`, with `/` separators, for reports. */
export function relativeForReport(dir: string, file: string): string {
  return relative(dir, file).split(sep).join('/');
}
