/**
 * What every file of the container suite asks first: is a Docker engine reachable (looked up the
 * way testcontainers and run.mjs look it up), and does it run on the stand-in images that
 * engine.sh builds where no image registry is reachable.
 */
import { getContainerRuntimeClient } from 'testcontainers';
import { hasImage } from './docker.js';

/** Built by engine.sh where no registry is reachable; its presence selects the compose.standin*.yml overlays. */
export const STANDIN_NODE_IMAGE = 'version-router-standin/node:24-trixie-slim';

export interface Engine {
  reachable: boolean;
  /** Why not, when it is not. */
  reason: string;
  /** The stand-in images are there: add the stand-in overlays. */
  standin: boolean;
}

export async function findEngine(): Promise<Engine> {
  const found = await getContainerRuntimeClient().then(
    () => ({ reachable: true, reason: '' }),
    (err: unknown) => ({ reachable: false, reason: err instanceof Error ? err.message : String(err) }),
  );
  return { ...found, standin: found.reachable && (await hasImage(STANDIN_NODE_IMAGE)) };
}
