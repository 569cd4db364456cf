import type { Logger } from '@trellis/sdk';
import {
  comparePin,
  emptyPinFile,
  pinTool,
  readPinFile,
  writePinFile,
  type McpToolSnapshot,
  type PinChange,
  type PinFile,
  type PinParts,
  type PinProblem,
} from './pinStore.ts';

/** `its description and input schema changed`: the parts of a tool that differ from its pin. */
export function describeChanges(changes: readonly PinChange[]): string {
  if (changes.length === 1) return `its ${changes[0]} changed`;
  return `its ${changes.slice(0, -1).join(', ')} and ${changes[changes.length - 1]} changed`;
}

/**
 * One server's pins as this process knows them: read from its pin file once, updated as lists
 * arrive, written back atomically one write after the other. Kept per pin file (through the
 * bridge's keep-alive store), so while a reload drains the old connection of a changed server and
 * the new one is listing, both update the same pins and neither write undoes the other's.
 */
export class ServerPins {
  pins: PinFile;
  problem: PinProblem | undefined;
  private reading: Promise<void> | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    readonly server: string,
    readonly path: string,
    private readonly logger: Logger,
  ) {
    this.pins = emptyPinFile(server);
  }

  /** Reads the pin file, once; a problem (unsafe or damaged file) is kept in `problem`. */
  read(): Promise<void> {
    this.reading ??= readPinFile(this.path, this.server).then((read) => {
      if (read.problem !== undefined) this.problem = read.problem;
      else if (read.value !== undefined) this.pins = read.value;
    });
    return this.reading;
  }

  /** Resolves when the writes asked for so far are done. */
  written(): Promise<void> {
    return this.writing;
  }

  /**
   * Pins first-seen tools and records changed ones as pending (warning once per change); writes
   * the file when anything changed. Call after `read()`; `fingerprints` are the listed tools' own.
   */
  record(
    tools: readonly McpToolSnapshot[],
    fingerprints: ReadonlyMap<string, { readonly fingerprint: { hash: string; parts: PinParts } }>,
  ): void {
    if (this.problem !== undefined) return;
    const pinned = { ...this.pins.tools };
    const pending = { ...this.pins.pending };
    let dirty = false;
    for (const tool of tools) {
      const current = fingerprints.get(tool.name)?.fingerprint;
      if (current === undefined) continue;
      const pin = pinned[tool.name];
      if (pin === undefined) {
        pinned[tool.name] = pinTool(tool);
        dirty = true;
        continue;
      }
      if (comparePin(pin, current).length === 0) {
        if (pending[tool.name] !== undefined) {
          delete pending[tool.name];
          dirty = true;
        }
      } else if (pending[tool.name]?.hash !== current.hash) {
        pending[tool.name] = pinTool(tool);
        dirty = true;
        this.logger.warn(
          `mcp.${this.server}.${tool.name} is withheld: ${describeChanges(comparePin(pin, current))} since it was pinned; run trellis mcp approve ${this.server} ${tool.name}`,
        );
      }
    }
    if (!dirty) return;
    this.pins = { version: 1, server: this.server, tools: pinned, pending };
    const snapshot = this.pins;
    this.writing = this.writing
      .then(() => writePinFile(this.path, snapshot))
      .catch((error: unknown) => {
        this.logger.error(
          `mcp server ${this.server}: cannot write its pin file ${this.path}: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
  }
}
