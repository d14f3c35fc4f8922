import {
  API_KEY_SCHEME,
  KEY_OPTIONAL,
  UNAUTHORIZED_RESPONSE,
  apiKeySecurityScheme,
  servers,
  unauthorizedResponse,
} from '@version-router/platform/api-document';
import { pinDocumentParts } from '@version-router/platform/pin-document';
import type { OpenAPIV3_1 } from 'openapi-types';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * What every route of the API is behind: clients reach it through the gateway, which reads an `API-Key` on
 * every request and answers 401 for one that is no valid key. The document says so once, in `components`
 * (the scheme, optional on the whole document; the 401), and every operation refers to the 401. A version
 * whose policy requires a key is the gateway's to mark when it serves the document. The gateway's own operations
 * on the API port (the consumer's pin, which requires the key) are in every version's document.
 */
export function withGatewayParts(document: OpenAPIV3_1.Document): OpenAPIV3_1.Document {
  const unauthorized = { $ref: `#/components/responses/${UNAUTHORIZED_RESPONSE}` };
  for (const item of Object.values(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item?.[method];
      if (operation !== undefined) operation.responses = { ...operation.responses, 401: unauthorized };
    }
  }
  const pins = structuredClone(pinDocumentParts) as unknown as {
    paths: OpenAPIV3_1.PathsObject;
    tag: OpenAPIV3_1.TagObject;
    components: Required<Pick<OpenAPIV3_1.ComponentsObject, 'schemas' | 'headers' | 'responses'>>;
  };
  document.paths = { ...document.paths, ...pins.paths };
  document.tags = [...(document.tags ?? []), pins.tag];
  const components = document.components ?? {};
  document.servers = structuredClone(servers) as unknown as OpenAPIV3_1.ServerObject[];
  document.security = structuredClone(KEY_OPTIONAL) as unknown as OpenAPIV3_1.SecurityRequirementObject[];
  document.components = {
    ...components,
    schemas: { ...components.schemas, ...pins.components.schemas },
    headers: { ...components.headers, ...pins.components.headers },
    securitySchemes: {
      ...components.securitySchemes,
      [API_KEY_SCHEME]: structuredClone(apiKeySecurityScheme) as OpenAPIV3_1.SecuritySchemeObject,
    },
    responses: {
      ...components.responses,
      [UNAUTHORIZED_RESPONSE]: structuredClone(unauthorizedResponse) as unknown as OpenAPIV3_1.ResponseObject,
      ...pins.components.responses,
    },
  };
  return document;
}
