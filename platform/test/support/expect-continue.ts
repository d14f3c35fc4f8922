import { request } from 'node:http';

export interface ContinuedAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The server answered `100 Continue` before the body was sent. */
  sawContinue: boolean;
}

/**
 * A POST with `Expect: 100-continue` that sends its body only after the server's 100, as curl does for
 * larger bodies (`curl -d @big.json`). app.inject cannot do this: it needs a real socket.
 */
export function postExpectingContinue(
  url: string,
  body: Buffer,
  headers: Record<string, string> = {},
): Promise<ContinuedAnswer> {
  return new Promise((resolve, reject) => {
    let sawContinue = false;
    const req = request(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': String(body.length), expect: '100-continue' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
            sawContinue,
          }),
        );
      },
    );
    req.on('error', reject);
    req.on('continue', () => {
      sawContinue = true;
      req.end(body);
    });
  });
}
