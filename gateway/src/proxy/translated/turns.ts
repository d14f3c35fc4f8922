/**
 * Large bodies are translated one per turn of the event loop (docs/declared-versions.md "Translation that fails closed"):
 * parsing, changing and writing a mebibyte takes milliseconds of one core, and bodies that arrive together would
 * otherwise be translated back to back while every other request waits. Between two of them the loop reads and
 * writes sockets, so an untranslated request waits for at most one. A small body is translated at once: its cost is
 * below a turn's.
 */

/** From this size on a body waits for its turn. */
export const TURN_BYTES = 64 * 1024;

export type Turns = (translate: () => void) => void;

/** A queue of translations, each run in its own turn (setImmediate), in the order they came. */
export function createTurns(): Turns {
  const queue: (() => void)[] = [];
  let head = 0;
  const runOne = () => {
    const translate = queue[head++] as () => void;
    if (head === queue.length) {
      queue.length = 0;
      head = 0;
    } else setImmediate(runOne);
    translate();
  };
  return (translate) => {
    queue.push(translate);
    if (queue.length - head === 1) setImmediate(runOne);
  };
}
