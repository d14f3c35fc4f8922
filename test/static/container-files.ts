/**
 * Readers for the container definitions (Dockerfile, docker-compose.yml and its test overlay),
 * used by the static checks in containers.test.ts. The Dockerfile is parsed by dockerfile-ast; the
 * compose readers understand the syntax these files use and fail loudly on anything else.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DockerfileParser, JSONInstruction, type Instruction, type Keyword } from 'dockerfile-ast';
import { parse, type CollectionTag } from 'yaml';
import { repoRoot } from '../../scripts/paths.mjs';

export const paths = {
  dockerfile: join(repoRoot, 'Dockerfile'),
  dockerignore: join(repoRoot, '.dockerignore'),
  compose: join(repoRoot, 'docker-compose.yml'),
  composeTest: join(repoRoot, 'test', 'containers', 'compose.test.yml'),
  composeStandin: join(repoRoot, 'test', 'containers', 'compose.standin.yml'),
  composePostgres: join(repoRoot, 'docker-compose.postgres.yml'),
  composeFleet: join(repoRoot, 'docker-compose.fleet.yml'),
  composeFleetTest: join(repoRoot, 'test', 'containers', 'compose.fleet.test.yml'),
  composeStandinPostgres: join(repoRoot, 'test', 'containers', 'compose.standin.postgres.yml'),
  composeStandinHaproxy: join(repoRoot, 'test', 'containers', 'compose.standin.haproxy.yml'),
  composeSchema: join(repoRoot, 'node_modules', 'dclint', 'schemas', 'compose.schema.json'),
};

// ---------------------------------------------------------------------------------------------
// Dockerfile (read by dockerfile-ast: continuations, comments, flags, variables and exec-form JSON
// are its business)

export interface Stage {
  name: string | undefined;
  /** The image FROM names, with build arguments substituted. */
  from: string;
  /** The stage this one builds on, when FROM names an earlier stage. */
  parent: Stage | undefined;
  /** The stage's instructions after its FROM. */
  instructions: Instruction[];
}

/** The Dockerfile's build stages, in order. */
export function readStages(text: string): Stage[] {
  const dockerfile = DockerfileParser.parse(text);
  const stages: Stage[] = [];
  for (const from of dockerfile.getFROMs()) {
    const line = from.getRange().start.line + 1;
    const image = from.getExpandedArguments()[0]?.getValue();
    if (image === undefined || image.includes('$'))
      throw new Error(`FROM on line ${line} names no image (an ARG without a default?)`);
    const template = dockerfile.getContainingImage(from.getRange().start);
    if (template === null) throw new Error(`FROM on line ${line} starts no stage`);
    const name = from.getBuildStage() ?? undefined;
    const parent = stages.find((stage) => stage.name !== undefined && stage.name === image);
    stages.push({
      name,
      from: image,
      parent,
      instructions: template.getInstructions().filter((instruction) => instruction !== from),
    });
  }
  return stages;
}

/** The instructions that apply to a stage: its ancestors' first, then its own. */
export function effectiveInstructions(stage: Stage): Instruction[] {
  return stage.parent === undefined
    ? stage.instructions
    : [...effectiveInstructions(stage.parent), ...stage.instructions];
}

/** The last instruction with this keyword that applies to the stage (USER, CMD, HEALTHCHECK…). */
export function lastInstruction(stage: Stage, keyword: `${Keyword}`): Instruction | undefined {
  return effectiveInstructions(stage)
    .filter((instruction) => instruction.getKeyword() === keyword)
    .at(-1);
}

/** The external base image a stage starts from, following earlier stages. */
export function baseImage(stage: Stage): string {
  return stage.parent === undefined ? stage.from : baseImage(stage.parent);
}

/** The argv of an exec-form (JSON array) CMD or ENTRYPOINT; undefined for the shell form. */
export function execForm(instruction: Instruction): string[] | undefined {
  if (
    !(instruction instanceof JSONInstruction) ||
    instruction.getOpeningBracket() === null ||
    instruction.getClosingBracket() === null
  )
    return undefined;
  return instruction.getJSONStrings().map((argument) => argument.getJSONValue());
}

// ---------------------------------------------------------------------------------------------
// Compose

/** Compose's merge tags (`!override`, `!reset`) in overlay files; for checking, the value as written. */
const composeTags: CollectionTag[] = (['!override', '!reset'] as const).flatMap((tag) =>
  (['seq', 'map'] as const).map((collection): CollectionTag => ({ tag, collection, resolve: (value) => value })),
);

export function readYaml(file: string): unknown {
  // `merge: true`: compose files use YAML merge keys (`<<: *anchor`).
  return parse(readFileSync(file, 'utf8'), { merge: true, customTags: composeTags });
}

export interface ComposeService {
  image?: string;
  build?: string | { context?: string; target?: string; dockerfile?: string };
  ports?: (string | number | { target: number | string; published?: number | string; host_ip?: string })[];
  expose?: (string | number)[];
  networks?: string[] | Record<string, unknown>;
  volumes?: (string | { type: string; source?: string; target: string; read_only?: boolean })[];
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: string[] | Record<string, { condition: string }>;
  healthcheck?: { test?: string | string[]; disable?: boolean };
  stop_grace_period?: string;
  init?: boolean;
  user?: string;
  command?: string | string[];
  read_only?: boolean;
  cap_drop?: string[];
  security_opt?: string[];
  tmpfs?: string[];
  deploy?: { replicas?: number };
  extends?: { file?: string; service: string };
  profiles?: string[];
}

export interface ComposeFile {
  name?: string;
  services: Record<string, ComposeService>;
  networks?: Record<string, { internal?: boolean } | null>;
  volumes?: Record<string, unknown>;
}

export function readCompose(file: string): ComposeFile {
  const value = readYaml(file);
  if (typeof value !== 'object' || value === null || !('services' in value)) throw new Error(`${file}: no services`);
  return value as ComposeFile;
}

export function serviceNetworks(service: ComposeService): string[] {
  if (service.networks === undefined) return ['default'];
  return Array.isArray(service.networks) ? service.networks : Object.keys(service.networks);
}

export function environment(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(env.map((entry) => [entry.split('=')[0]!, entry.split('=').slice(1).join('=')]));
  }
  return Object.fromEntries(Object.entries(env).map(([key, value]) => [key, String(value)]));
}

export interface Mount {
  source: string;
  target: string;
  readOnly: boolean;
  /** A path on the host (bind mount), as opposed to a named volume or tmpfs. */
  bind: boolean;
}

export function mounts(service: ComposeService): Mount[] {
  return (service.volumes ?? []).map((volume): Mount => {
    if (typeof volume === 'string') {
      const [source = '', target = '', mode = ''] = volume.split(':');
      return { source, target, readOnly: mode.split(',').includes('ro'), bind: /^[./~]/.test(source) };
    }
    return {
      source: volume.source ?? '',
      target: volume.target,
      readOnly: volume.read_only === true,
      bind: volume.type === 'bind',
    };
  });
}

export interface PublishedPort {
  target: number;
  hostIp: string | undefined;
  published: string | undefined;
}

/** Reads the short (`[ip:]host:container`, `container`) and long port syntaxes. */
export function publishedPorts(service: ComposeService): PublishedPort[] {
  return (service.ports ?? []).map((port): PublishedPort => {
    if (typeof port === 'object') {
      return {
        target: Number(port.target),
        published: port.published === undefined ? undefined : String(port.published),
        hostIp: port.host_ip,
      };
    }
    const parts = String(port)
      .replace(/\/(tcp|udp)$/, '')
      .split(':');
    const target = Number(parts.at(-1));
    if (!Number.isInteger(target)) throw new Error(`cannot read port ${String(port)}`);
    if (parts.length === 1) return { target, published: undefined, hostIp: undefined };
    if (parts.length === 2) return { target, published: parts[0], hostIp: undefined };
    return { target, published: parts.at(-2), hostIp: parts.slice(0, -2).join(':') };
  });
}

export function exists(relativeToRoot: string): boolean {
  return existsSync(join(repoRoot, relativeToRoot));
}
