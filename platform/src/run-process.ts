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

/** The signals that stop a process (or, with an onHangup, reload it), held back while it starts. */
const DEFERRED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * The only place that exits: builds the process, listens, and on SIGINT/SIGTERM reports not ready,
 * serves on for the shutdown delay, stops accepting, lets in-flight requests finish for at most 10 s,
 * then exits 0; likewise when the launcher that started it with an IPC channel is gone. An uncaught exception or
 * an unhandled rejection closes it the same way (without the delay) and exits 1, whether the drain finished or not.
 * A bad configuration or a failed listen is one line on stderr and exit 1.
 *
 * A signal that arrives while the process starts is held until the start is complete (or has failed), then
 * acted on: killed mid-start, a process would leave what it had started behind (the gateway's embedded store
 * is a process of its own, and its first creation one more).
 */
export async function runProcess(build: () => Promise<RunningProcess>): Promise<void> {
  const startedByLauncher = process.channel !== undefined;
  const heldSignals = holdSignalsWhileStarting();
  let parts: RunningProcess | undefined;
  try {
    parts = await build();
    await parts.app.listen({ host: parts.host, port: parts.port });
    await parts.admin.listen({ host: parts.adminHost, port: parts.adminPort });
  } catch (err) {
    const message =
      err instanceof ConfigError ? `invalid configuration: ${err.message}` : `cannot start: ${(err as Error).message}`;
    process.stderr.write(`${message}\n`);
    // What was built holds resources that may be processes (the embedded store): they end before this one.
    if (parts !== undefined) await closeWithin(parts, serverLimits.shutdownGraceMs);
    process.exit(1);
  }
  const { app, admin, logger, onHangup, shutdownDelayMs = 0 } = parts;
  if (onHangup !== undefined) process.on('SIGHUP', onHangup);
  logger.info({ api: listeningUrl(app), admin: listeningUrl(admin) }, 'listening');

  // Set by an uncaught exception or unhandled rejection: however the close then ends, the exit says it failed.
  let fatal = false;
  const graceful = closeWithGrace(
    {
      delay: shutdownDelayMs + serverLimits.shutdownGraceMs,
      logger: false,
      skip: onHangup === undefined ? [] : ['SIGHUP'],
      onTimeout: () => {
        // The drain is bounded at 10 s. After it, a stop that was asked for still exits 0; one a fatal error forced
        // exits 1, so a supervisor that restarts on failure (Docker, systemd, Kubernetes) brings the process back.
        logger.warn('in-flight requests still running after the grace period; exiting');
        process.exit(fatal ? 1 : 0);
      },
    },
    async ({ signal, err }) => {
      fatal = err !== undefined;
      if (err !== undefined) logger.error({ err }, 'fatal error, shutting down');
      else logger.info(signal === undefined ? { launcher: 'gone' } : { signal }, 'shutting down');
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
  // Started by `npm start` (scripts/start.mjs), the process has an IPC channel to its launcher. The channel
  // closes when the launcher is gone, however it died (SIGKILL included, which it cannot forward), so the
  // process drains and stops as on SIGTERM instead of running on as an orphan in a process group of its own.
  // A launcher gone during the start-up is seen here, where the event was missed.
  if (startedByLauncher && !process.connected) void graceful.close();
  else if (startedByLauncher) process.once('disconnect', () => void graceful.close());
  // Now that the handlers are in place, the signals held during the start are delivered again.
  for (const signal of heldSignals.release()) process.kill(process.pid, signal);
}

/**
 * Until `release`, SIGINT, SIGTERM and SIGHUP are noted instead of ending the process. Answers the signals
 * noted. A start is bounded by its own timeouts (the database's connect and migration timeouts), and an
 * orchestrator that will not wait sends SIGKILL.
 */
function holdSignalsWhileStarting(): { release: () => NodeJS.Signals[] } {
  const held = new Set<NodeJS.Signals>();
  const hold = (signal: NodeJS.Signals): void => {
    if (held.size === 0) process.stderr.write(`${signal} while starting: acted on once the start is complete\n`);
    held.add(signal);
  };
  for (const signal of DEFERRED_SIGNALS) process.on(signal, hold);
  // `npm start`'s launcher (scripts/start.mjs) signals a service only after this message: earlier, a signal
  // would end it outright.
  if (process.connected) process.send?.('signals held');
  return {
    release() {
      for (const signal of DEFERRED_SIGNALS) process.removeListener(signal, hold);
      return [...held];
    },
  };
}

/** Closes both listeners' apps (their onClose hooks release what the build opened), waiting at most `ms`. */
async function closeWithin({ app, admin }: RunningProcess, ms: number): Promise<void> {
  const closed = Promise.all([app.close(), admin.close()]).catch(() => undefined);
  await Promise.race([closed, sleep(ms, undefined, { ref: false })]);
}

function listeningUrl(app: FastifyInstance): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return String(address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
