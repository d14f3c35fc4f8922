export declare const repoRoot: string;
export declare const entries: Readonly<{
  backend: 'dist/services/users-orders/src/main.js';
  gateway: 'dist/gateway/src/main.js';
}>;
