// A fault a test injects into a built process it starts, loaded with `node --import` (NODE_OPTIONS), never shipped:
// a request with `X-Test-Fault: uncaught` is held, never answered, and an uncaught exception is thrown on the next
// turn of the event loop, as a bug would throw it. The held request is one the drain cannot finish, so the process
// runner's grace period runs out: the exit code a supervisor sees after a fatal error is what is under test.
import { Server } from 'node:http';

const FAULT_HEADER = 'x-test-fault';

const emit = Server.prototype.emit;
Server.prototype.emit = function emitUnlessFaulted(event, ...args) {
  if (event === 'request' && args[0].headers[FAULT_HEADER] === 'uncaught') {
    setImmediate(() => {
      throw new Error('a fault injected by the test (X-Test-Fault: uncaught)');
    });
    return true;
  }
  return emit.call(this, event, ...args);
};
