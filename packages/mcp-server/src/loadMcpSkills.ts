import {
  SkillsExtension,
  type SkillCatalog,
  type SkillFileEntry,
  type SkillFiles,
  type SkillWarning,
} from '@modelcontextprotocol/server/ext/skills';
import { nodeSkillFiles } from '@modelcontextprotocol/server/ext/skills/node';

/** Options of {@link loadMcpSkills}. */
export interface LoadMcpSkillsOptions {
  /** Admitted skills: name → the skill's folder (holding its SKILL.md), as a skill source found them. */
  readonly skills: ReadonlyMap<string, string>;
  /** A skill the SDK refuses (bad front matter, a symlink inside) is skipped and reported here. */
  readonly onWarning?: (warning: SkillWarning) => void;
}

/**
 * The SEP-2640 skills catalog (`@modelcontextprotocol/server/ext/skills`) over skills another part of
 * the host already found and admitted: each skill's own folder is mounted under its name, so the
 * SDK lists them, serves `SKILL.md` and the files beside it, and refuses symlinks and special files
 * itself. Attach the result with `createTrellisMcpServer({ skills })`.
 */
export function loadMcpSkills(options: LoadMcpSkillsOptions): Promise<SkillCatalog> {
  return SkillsExtension.load(mountSkillFolders(options.skills), {
    ...(options.onWarning !== undefined ? { onWarning: options.onWarning } : {}),
  });
}

/** One `SkillFiles` tree whose top level is the skills' names, each backed by its own folder. */
export function mountSkillFolders(skills: ReadonlyMap<string, string>): SkillFiles {
  const mounts = new Map<string, SkillFiles>();
  for (const [name, dir] of [...skills].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (name === '' || name.includes('/') || name === '.' || name === '..') continue;
    mounts.set(name, nodeSkillFiles(dir));
  }
  const split = (path: string): [SkillFiles, string] => {
    const clean = path.replace(/^\/+/, '');
    const slash = clean.indexOf('/');
    const head = slash === -1 ? clean : clean.slice(0, slash);
    const files = mounts.get(head);
    if (files === undefined) throw Object.assign(new Error(`no such skill folder: ${head}`), { code: 'ENOENT' });
    return [files, slash === -1 ? '' : clean.slice(slash + 1)];
  };
  return {
    async list(dir: string): Promise<SkillFileEntry[]> {
      if (dir === '' || dir === '/' || dir === '.') return [...mounts.keys()].map((name) => ({ name, kind: 'directory' }));
      const [files, rest] = split(dir);
      return files.list(rest);
    },
    async read(path: string): Promise<Uint8Array> {
      const [files, rest] = split(path);
      return files.read(rest);
    },
  };
}
