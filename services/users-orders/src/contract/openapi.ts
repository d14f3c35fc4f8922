import swagger, { type SwaggerTransform } from '@fastify/swagger';
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { createJsonSchemaTransform } from 'fastify-type-provider-zod';
import type { OpenAPIV3_1 } from 'openapi-types';

/** `/v{n}/…` or `/api/v{n}/…`: a route of one API major version. Every other route is in every version. */
const VERSIONED_PATH = /^(?:\/api)?\/v([0-9]+)\//;

/** Where the backend publishes version n's document; the /api form mirrors the /api order routes. */
export function documentPaths(version: number): [string, string] {
  return [`/v${version}/openapi.json`, `/api/v${version}/openapi.json`];
}

const decoratorOf = (version: number): string => `openapiV${version}`;

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
 * The routes' zod schemas describe the API and generate one OpenAPI 3.1 document per major version: the
 * unversioned routes (users) and that version's own routes. They never validate or serialize: the
 * handlers decode bodies themselves (exact 400/422 texts, any Content-Type) and responses are written by
 * JSON.stringify exactly as without schemas, so no status, header or byte of a body depends on them.
 * Register before the routes, so every route is seen.
 */
const apiContractPlugin: FastifyPluginAsync<{ versions: readonly number[] }> = async (app, { versions }) => {
  app.setValidatorCompiler(() => (value: unknown) => ({ value }));
  app.setSerializerCompiler(() => (data: unknown) => JSON.stringify(data));

  for (const version of versions) {
    const onlyThisVersion: SwaggerTransform = (route) => {
      const routeVersion = VERSIONED_PATH.exec(route.url)?.[1];
      return routeVersion === undefined || Number(routeVersion) === version ? describe(route) : { schema: { hide: true }, url: route.url };
    };
    await app.register(swagger, {
      decorator: decoratorOf(version),
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Users and orders API',
          version: String(version),
          description: `Major version ${version}: the users API (unversioned, the same in every version) and the version ${version} order representation, at /v${version}/orders/{id} and /api/v${version}/orders/{id}.`,
        },
        tags: [
          { name: 'users', description: 'User records; not versioned.' },
          { name: 'orders', description: `Read-only orders, version ${version} representation.` },
        ],
      },
      transform: onlyThisVersion,
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
};

export const apiContract = fp(apiContractPlugin, { name: 'api-contract' });
