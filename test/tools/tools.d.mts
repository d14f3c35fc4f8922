// Types of tools.mjs for the TypeScript tests that import it; the values live there only.
export type ToolName = 'prometheus' | 'jq' | 'kubectl';
export interface Tool {
  binaries: string[];
  debianPackage: string;
  neededBy: string;
  /** Why the executable found at `path` cannot serve the tests (too old), or undefined. */
  tooOld?: (path: string) => string | undefined;
}
export type ToolStatus = { available: true } | { available: false; reason: string; mustFail: boolean };
export declare const tools: Readonly<Record<ToolName, Tool>>;
export declare function installCommand(name: ToolName): string;
export declare function findOnPath(binary: string, path?: string): string | undefined;
export declare function toolStatus(name: ToolName, env?: NodeJS.ProcessEnv): ToolStatus;
