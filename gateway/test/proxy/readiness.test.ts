import { describe, expect, it } from 'vitest';
import { backendAccepts } from '../../src/proxy/readiness.js';
import { startStubBackend } from '../stub-backend.js';

describe('backend readiness probe', () => {
  it('is true while the backend accepts connections and false once it stopped', async () => {
    const stub = await startStubBackend();
    expect(await backendAccepts(stub.url)).toBe(true);
    await stub.close();
    expect(await backendAccepts(stub.url)).toBe(false);
    expect(stub.seen).toHaveLength(0);
  });
});
