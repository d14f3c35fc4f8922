import swagger, { type SwaggerTransform } from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createJsonSchemaTransform } from 'fastify-type-provider-zod';
import type { OpenAPIV3_1 } from 'openapi-types';
import { withGatewayParts } from './gateway-parts.js';

/** `/v{n}/…` or `/api/v{n}/…`: a route of one API major version. Every other route is in every version. */
const VERSIONED_PATH = /^(?:\/api)?\/v([0-9]+)\//;

/** Where the backend publishes version n's document; the /api form mirrors the /api order routes. */
export function documentPaths(version: number): [string, string] {
  return [`/v${version}/openapi.json`, `/api/v${version}/openapi.json`];
}

const decoratorOf = (version: number): string => `openapiV${version}`;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** "a", "a and b", "a, b and c". */
function listed(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/**
 * The document's description and tags, from the routes it documents (every route registered after the plugin
 * that is unversioned or of this version): a resource added to the backend names itself here by its routes'
 * tag, with no edit of this file. A tag whose paths carry the version is that version's representation;
 * the others are the same in every version.
 */
function describeRegistered(version: number, document: OpenAPIV3_1.Document): OpenAPIV3_1.Document {
  const tagged = new Map<string, { paths: string[]; versioned: boolean; readOnly: boolean }>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      for (const name of item?.[method]?.tags ?? []) {
        const tag = tagged.get(name) ?? { paths: [], versioned: false, readOnly: true };
        if (!tag.paths.includes(path)) tag.paths.push(path);
        tag.versioned ||= VERSIONED_PATH.test(path);
        tag.readOnly &&= method === 'get' || method === 'head';
        tagged.set(name, tag);
      }
    }
  }
  const capitalized = (name: string) => `${name.charAt(0).toUpperCase()}${name.slice(1)}`;
  const unversioned = [...tagged].filter(([, { versioned }]) => !versioned).map(([name]) => name);
  const versioned = [...tagged]
    .filter(([, { versioned }]) => versioned)
    .map(([name, { paths }]) => `${name} at ${listed(paths)}`);
  const parts = [
    ...(unversioned.length > 0 ? [`${listed(unversioned)} (unversioned, the same in every version)`] : []),
    ...(versioned.length > 0 ? [`the version ${version} representation of ${listed(versioned)}`] : []),
  ];
  document.info.description = `Major version ${version}: ${listed(parts)}.`;
  document.tags = [...tagged].map(([name, { versioned, readOnly }]) => ({
    name,
    description: versioned
      ? `${readOnly ? `Read-only ${name}` : capitalized(name)}, version ${version} representation.`
      : `${capitalized(name)}; not versioned.`,
  }));
  return document;
}

/**
 * Response objects are documented open (no `additionalProperties: false`): clients must ignore fields they
 * do not know, which is what makes adding an optional response field a compatible change. Request bodies
 * are `z.strictObject`s and stay closed, since unknown request fields are rejected. A `z.undefined()`
 * response (204) becomes `type: null`, which @fastify/swagger documents as a response without content.
 */
const describe = createJsonSchemaTransform({
  zodToJsonConfig: {
    override: ({ zodSchema, jsonSchema }) => {
      const { def } = zodSchema._zod;
      if (def.type === 'object' && def.catchall === undefined) delete jsonSchema.additionalProperties;
      if (def.type === 'undefined') jsonSchema.type = 'null';
    },
  },
});

/**
 * The routes' zod schemas describe the API and generate one OpenAPI 3.1 document per major version the backend
 * serves (its newest; the gateway derives an older version's from it): the unversioned routes (users) and that
 * version's own routes. They never validate or serialize: the handlers decode bodies themselves (exact 400/422
 * texts, any Content-Type) and responses are written by JSON.stringify exactly as without schemas, so no status,
 * header or byte of a body depends on them.
 * Register before the routes, so every route is seen.
 */
async function apiContractPlugin(app: FastifyInstance, { versions }: { versions: readonly number[] }): Promise<void> {
  app.setValidatorCompiler(() => (value: unknown) => ({ value }));
  app.setSerializerCompiler(() => (data: unknown) => JSON.stringify(data));

  for (const version of versions) {
    const onlyThisVersion: SwaggerTransform = (route) => {
      const routeVersion = VERSIONED_PATH.exec(route.url)?.[1];
      return routeVersion === undefined || Number(routeVersion) === version
        ? describe(route)
        : { schema: { hide: true }, url: route.url };
    };
    await app.register(swagger, {
      decorator: decoratorOf(version),
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Users and orders API', version: String(version) },
        // Filled in from the document's operations by describeRegistered, here so the key keeps its place.
        tags: [],
      },
      transform: onlyThisVersion,
      // Only an `openapi` document is generated here, never a Swagger 2 one.
      transformObject: (generated) =>
        withGatewayParts(
          describeRegistered(version, (generated as { openapiObject: OpenAPIV3_1.Document }).openapiObject),
        ),
    });

    // Generated on first request, not at start: it costs a few hundred ms per app, and tests build many
    // apps that never ask for it. The snapshot test generates every document, so a schema that cannot
    // be documented fails `npm test`, not a client's request.
    let document: string | undefined;
    for (const path of documentPaths(version)) {
      app.get(path, { schema: { hide: true } }, async (_request, reply) => {
        document ??= JSON.stringify(app.getDecorator<() => OpenAPIV3_1.Document>(decoratorOf(version))());
        return reply.type('application/json; charset=utf-8').send(document);
      });
    }
  }
}

export const apiContract = fp(apiContractPlugin, { name: 'api-contract' });
