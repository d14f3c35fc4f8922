// Types of paths.mjs for the TypeScript tests that import it; the values live there only.
export declare const repoRoot: string;
export declare const entries: Readonly<Record<'backend' | 'gateway', string>>;
export declare const migrationEntries: Readonly<Record<'backend' | 'gateway', string>>;
export declare const nodeFlags: Readonly<Record<'backend' | 'gateway', readonly string[]>>;
