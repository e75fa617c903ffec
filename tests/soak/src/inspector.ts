import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import CDP from 'chrome-remote-interface';

/** The inspector URL a process started with `--inspect=127.0.0.1:0` prints on stderr. */
export function inspectorUrl(output: string): string | undefined {
  return /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1];
}

/**
 * A daemon seen through its inspector (Chrome DevTools protocol): its heap after a full
 * collection, and heap snapshots. A forced collection is the one way to read what the process
 * holds rather than what its last collection happened to leave, without starting it with
 * `--expose-gc` (which would change the daemon's code path).
 */
export class Inspector {
  readonly #client: CDP.Client;

  private constructor(client: CDP.Client) {
    this.#client = client;
  }

  /** Connects to the inspector at `url` (a `ws://` URL), with the protocol bundled in the client. */
  static async connect(url: string): Promise<Inspector> {
    return new Inspector(await CDP({ target: url, local: true }));
  }

  /** Bytes of the V8 heap in use right after a full, synchronous collection. */
  async heapAfterGc(): Promise<number> {
    await this.#client.HeapProfiler.collectGarbage();
    const { usedSize } = await this.#client.Runtime.getHeapUsage();
    return usedSize;
  }

  /** Writes a heap snapshot (`.heapsnapshot`, as DevTools reads it) to `file`. */
  async snapshot(file: string): Promise<void> {
    const out = createWriteStream(file);
    const onChunk = ({ chunk }: { chunk: string }): void => {
      out.write(chunk);
    };
    const off = this.#client.HeapProfiler.addHeapSnapshotChunk(onChunk);
    try {
      await this.#client.HeapProfiler.takeHeapSnapshot({ reportProgress: false });
    } finally {
      off();
      out.end();
      await finished(out);
    }
  }

  async close(): Promise<void> {
    await this.#client.close();
  }
}
