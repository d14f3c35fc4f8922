import type { VersionPolicy } from './policy.js';

/**
 * The policy in force, as the routes that only describe it (`GET /versions`, the migration guides, the status
 * page) see it. A reload replaces `current` whole, so a reader takes it once per request.
 */
export interface PolicyInForce {
  readonly current: {
    readonly policy: VersionPolicy;
    /** Which file content this is (policy-file.ts `policyDigest`). */
    readonly sha256: string;
  };
}
