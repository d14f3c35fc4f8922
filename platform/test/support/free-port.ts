import { createServer } from 'node:net';

/**
 * A loopback port nothing listens on right now, for a process the test starts and that takes its port from
 * the environment. The port is released before the process binds it, so another socket can take it meanwhile.
 */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
