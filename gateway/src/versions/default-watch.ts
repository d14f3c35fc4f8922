import type { Logger } from 'pino';
import type { Clock } from '@version-router/platform/clock';
import type { PolicyInForce } from './in-force.js';
import { defaultInstead } from './load-rules.js';

/** setTimeout's longest delay; a later instant is reached in several steps. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export interface DefaultVersionWatch {
  /** Logs the default's phase when it is not current: always after a load or reload, else only when it changed. */
  check(loaded: boolean): void;
  close(): void;
}

/**
 * Says in the log when the requests that name no version are on a deprecated or removed version: a warn line while it
 * is deprecated, an error line naming the rule `default_version_removed` once it is removed (a start on such a
 * policy serves it as written), at load and reload, and again when the default's phase changes while the gateway
 * runs (its announcement or sunset passes, or a scheduled move of the default comes), checked by a timer set for
 * that instant (docs/runbook.md#move-the-default).
 */
export function watchDefaultVersion({
  policies,
  clock,
  logger,
}: {
  policies: PolicyInForce;
  clock: Clock;
  logger: Logger;
}): DefaultVersionWatch {
  let logged = '';
  let timer: NodeJS.Timeout | undefined;

  const check = (loaded: boolean): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const { policy } = policies.current;
    const nowMs = clock();
    const defaultVersion = policy.defaultAt(nowMs);
    const entry = policy.versions.find(({ version }) => version === defaultVersion);
    if (entry === undefined) return;
    const phase = policy.phaseOf(entry, nowMs);
    const state = `${entry.version} ${phase}`;
    if (!loaded && logged !== '' && !logged.startsWith(`${entry.version} `))
      logger.info({ defaultVersion: entry.version }, 'default_version moved as scheduled (default_version_changes)');
    if (phase !== 'current' && (loaded || state !== logged)) {
      const sunset = new Date(entry.sunset ?? 0).toISOString();
      const fields = { defaultVersion: entry.version, phase, sunset, successor: entry.successor };
      if (phase === 'removed')
        logger.error(
          { rule: 'default_version_removed', ...fields },
          `version policy problem default_version_removed: default_version ${entry.version} was removed on ` +
            `${sunset}: every request that names no version gets 410; set default_version to ` +
            `${defaultInstead(entry)} and reload the policy (docs/runbook.md#move-the-default)`,
        );
      else
        logger.warn(
          fields,
          'default_version is deprecated: requests that name no version get a version that will be removed; move ' +
            'default_version before its sunset',
        );
    }
    logged = state;
    const instants = [entry.announced, entry.sunset, ...policy.defaultChanges.map(({ at }) => at)];
    const next = Math.min(...instants.filter((instant): instant is number => instant !== undefined && instant > nowMs));
    if (!Number.isFinite(next)) return;
    timer = setTimeout(() => check(false), Math.min(next - nowMs, MAX_DELAY_MS));
    timer.unref();
  };

  return {
    check,
    close() {
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
