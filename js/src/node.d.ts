import type { Engine, FileReport, Root } from './index.js';
export * from './index.js';
/**
 * A root over a directory, listed as the native host lists one (the engine's walk); `findings`
 * says what the walk left out and why.
 */
export declare function fromDirectory(dir: string, options?: { name?: string; engine?: Engine }): Promise<Root & { findings: FileReport[] }>;
