// The WASI imports the engine component needs, as minimal stubs (no preview2-shim needed).
//
// The world says `import files; export engine`, but Rust's standard library makes the component
// import 15 WASI interfaces. During index builds and queries only `wasi:random/insecure-seed` is
// called (once, to seed hash tables): it is real (crypto.getRandomValues). Standard error is
// written only when the engine panics: it goes to `onStderr` (console.error by default). There
// is no environment, no standard input, no terminal; `exit` throws.

/** @param {(text: string) => void} onStderr */
export function wasiImports(onStderr = (text) => console.error(text)) {
  class Pollable {
    ready() { return true; }
    block() {}
  }
  class IoError {
    toDebugString() { return 'io error'; }
  }
  const decoder = new TextDecoder();
  class OutputStream {
    constructor(sink) { this.sink = sink; }
    checkWrite() { return 1n << 20n; }
    write(bytes) { this.sink(bytes); }
    blockingWriteAndFlush(bytes) { this.sink(bytes); }
    flush() {}
    blockingFlush() {}
    subscribe() { return new Pollable(); }
  }
  class InputStream {
    read() { return new Uint8Array(0); }
    blockingRead() { return new Uint8Array(0); }
    subscribe() { return new Pollable(); }
  }
  class TerminalInput {}
  class TerminalOutput {}
  let pending = '';
  const stderr = new OutputStream((bytes) => {
    pending += decoder.decode(bytes, { stream: true });
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      onStderr(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
    }
  });
  const stdout = new OutputStream((bytes) => onStderr(decoder.decode(bytes)));
  const stdin = new InputStream();
  const seed = () => {
    const words = new BigUint64Array(2);
    globalThis.crypto.getRandomValues(words);
    return [words[0], words[1]];
  };
  const ifaces = {
    'wasi:cli/environment': { getEnvironment: () => [], getArguments: () => [], initialCwd: () => undefined },
    'wasi:cli/exit': {
      exit: (status) => { throw new Error(`the engine called exit (${JSON.stringify(status)})`); },
    },
    'wasi:cli/stderr': { getStderr: () => stderr },
    'wasi:cli/stdin': { getStdin: () => stdin },
    'wasi:cli/stdout': { getStdout: () => stdout },
    'wasi:cli/terminal-input': { TerminalInput },
    'wasi:cli/terminal-output': { TerminalOutput },
    'wasi:cli/terminal-stderr': { getTerminalStderr: () => undefined },
    'wasi:cli/terminal-stdin': { getTerminalStdin: () => undefined },
    'wasi:cli/terminal-stdout': { getTerminalStdout: () => undefined },
    'wasi:io/error': { Error: IoError },
    'wasi:io/poll': { Pollable, poll: (list) => Uint32Array.from(list.map((_, i) => i)) },
    'wasi:io/streams': { InputStream, OutputStream },
    'wasi:random/insecure-seed': { insecureSeed: seed },
  };
  // The generated code looks imports up without their version; its .d.ts names them with it:
  // both are given.
  const out = {};
  for (const [name, value] of Object.entries(ifaces)) {
    out[name] = value;
    out[`${name}@0.2.6`] = value;
  }
  return out;
}
