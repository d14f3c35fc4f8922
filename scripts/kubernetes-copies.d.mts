// Types of kubernetes-copies.mjs for the TypeScript tests that import it; the values live there only.
export declare const syncCommand: string;
export declare function kubernetesCopies(): { target: string; source: string; content: string }[];
