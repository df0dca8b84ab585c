import type { Engine, Root } from './index.js';
export * from './index.js';
/** A root over a directory, listed as the native host lists one (the engine's walk policy). */
export declare function fromDirectory(dir: string, options?: { name?: string; engine?: Engine }): Promise<Root>;
