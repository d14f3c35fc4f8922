import { setTimeout as sleep } from 'node:timers/promises';
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ConfigError } from './config.js';
import { serverLimits } from './server-limits.js';

export interface RunningProcess {
  app: FastifyInstance;
  admin: FastifyInstance;
  logger: Logger;
  host: string;
  port: number;
  /**
   * The admin listener's address, apart from the API's: metrics, health, and on the gateway the
   * consumers and the reload, are for the operator's network only.
   */
  adminHost: string;
  adminPort: number;
  /**
   * What SIGHUP does instead of shutting down (the gateway re-reads its version policy). Without it,
   * SIGHUP stops the process like SIGTERM, as a hang-up of its terminal should.
   */
  onHangup?: () => void;
  /**
   * SHUTDOWN_DELAY_MS: on SIGTERM/SIGINT, /readyz fails at once but the API serves on this long (answers
   * carry Connection: close) before the listener closes, so a load balancer takes the process out first.
   */
  shutdownDelayMs?: number;
}

/**
 * The only place that exits: builds the process, listens, and on SIGINT/SIGTERM reports not ready,
 * serves on for the shutdown delay, stops accepting, lets in-flight requests finish for at most 10 s,
 * then exits 0.
 * A bad configuration or a failed listen is one line on stderr and exit 1.
 */
export async function runProcess(build: () => Promise<RunningProcess>): Promise<void> {
  let parts: RunningProcess;
  try {
    parts = await build();
    await parts.app.listen({ host: parts.host, port: parts.port });
    await parts.admin.listen({ host: parts.adminHost, port: parts.adminPort });
  } catch (err) {
    const message = err instanceof ConfigError ? `invalid configuration: ${err.message}` : `cannot start: ${(err as Error).message}`;
    process.stderr.write(`${message}\n`);
    process.exit(1);
  }
  const { app, admin, logger, onHangup, shutdownDelayMs = 0 } = parts;
  if (onHangup !== undefined) process.on('SIGHUP', onHangup);
  logger.info({ api: listeningUrl(app), admin: listeningUrl(admin) }, 'listening');

  closeWithGrace(
    {
      delay: shutdownDelayMs + serverLimits.shutdownGraceMs,
      logger: false,
      skip: onHangup === undefined ? [] : ['SIGHUP'],
      onTimeout: () => {
        // The drain is bounded at 10 s, and the process still exits 0 after it: stopping was asked for.
        logger.warn('in-flight requests still running after the grace period; exiting');
        process.exit(0);
      },
    },
    async ({ signal, err }) => {
      if (err !== undefined) logger.error({ err }, 'fatal error, shutting down');
      else logger.info({ signal }, 'shutting down');
      // After a fatal error the process is in no state to serve on: it closes at once.
      if (err === undefined && shutdownDelayMs > 0) {
        app.lifecycle.leaving = true;
        logger.info({ shutdownDelayMs }, 'not ready; serving on before closing the listener');
        await sleep(shutdownDelayMs);
      }
      await app.close();
      await admin.close();
      logger.info('stopped');
    },
  );
}

function listeningUrl(app: FastifyInstance): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return String(address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
