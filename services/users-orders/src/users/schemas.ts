import { z } from 'zod';
import { pageLimits } from '../pagination/query.js';
import { USER_ID_PATTERN } from './user-id.js';

const timestamp = z.string().meta({
  format: 'date-time',
  description: 'RFC 3339 in UTC with millisecond precision.',
  examples: ['2026-11-22T10:00:00.000Z'],
});

/** A user as every user route answers it. */
export const userSchema = z
  .object({
    id: z
      .string()
      .regex(USER_ID_PATTERN)
      .meta({ description: 'Assigned by the service: `user-` and a sequence number, never reused.' }),
    name: z.string(),
    email: z.string(),
    created_at: timestamp.meta({ description: 'Set once at creation.' }),
    updated_at: timestamp.meta({
      description: 'Equals created_at at creation; the time of the last update after that.',
    }),
  })
  .meta({
    title: 'User',
    examples: [
      {
        id: 'user-1',
        name: 'Ada',
        email: 'ada@example.com',
        created_at: '2026-11-22T10:00:00.000Z',
        updated_at: '2026-11-22T10:00:00.000Z',
      },
    ],
  });

export type User = z.output<typeof userSchema>;

/** What a client chooses of a user: the rest is assigned by the service. */
export interface UserFields {
  name: string;
  email: string;
}

/**
 * Request bodies as a valid request sends them. The handlers decode bodies themselves (any Content-Type,
 * exact 400/422 texts), so these describe the contract and never run as validators.
 */
export const createUserRequestSchema = z
  .strictObject({
    name: z.string().min(1),
    email: z.string().min(1),
  })
  .meta({
    title: 'CreateUserRequest',
    description: 'Unknown fields are rejected (400). Validation checks name first, then email (422).',
    examples: [{ name: 'Ada', email: 'ada@example.com' }],
  });

export const createUserHeadersSchema = z.object({
  'idempotency-key': z
    .string()
    .optional()
    .meta({
      description:
        'Makes a retry safe: 1 to 255 visible ASCII characters other than `"` and `\\` (a UUID is a good key), bare ' +
        'or in double quotes. ' +
        'Remembered for 24 h with the name and email it was first sent with.',
      examples: ['8e03978e-40d5-43e8-bc93-6894a57f9324'],
    }),
});

export const updateUserRequestSchema = z
  .strictObject({
    name: z.string().optional(),
    email: z.string().optional(),
  })
  .meta({
    title: 'UpdateUserRequest',
    description: 'A partial update: an absent field keeps its value. Unknown fields are rejected (400).',
    examples: [{ email: 'ada@example.org' }],
  });

export const userIdParamsSchema = z.object({ id: z.string().meta({ examples: ['user-1'] }) });

export const pageQuerySchema = z.object({
  cursor: z
    .string()
    .optional()
    .meta({ description: 'Opaque: the `next_cursor` of the previous page. Absent or empty: the first page.' }),
  limit: z
    .int()
    .min(pageLimits.min)
    .max(pageLimits.max)
    .default(pageLimits.default)
    .meta({
      description:
        `Page size. A value that is not an integer in ${pageLimits.min}..${pageLimits.max} is replaced ` +
        `by ${pageLimits.default}.`,
    }),
});

/** The envelope of a paginated list: `next_cursor` is omitted on the last page, `has_more` is always present. */
export const userPageSchema = z
  .object({
    items: z.array(userSchema),
    next_cursor: z.string().optional().meta({ description: 'Omitted when there is no next page.' }),
    has_more: z.boolean(),
  })
  .meta({
    title: 'PageResponse',
    examples: [
      {
        items: [
          {
            id: 'user-1',
            name: 'Ada',
            email: 'ada@example.com',
            created_at: '2026-11-22T10:00:00.000Z',
            updated_at: '2026-11-22T10:00:00.000Z',
          },
        ],
        next_cursor: 'dXNlci0x',
        has_more: true,
      },
    ],
  });
