// The official MCP TypeScript SDK client against the built vaultgate binary,
// over stdio and over Streamable HTTP. interop/ts_test.go builds the binary,
// lays out one fresh vault per transport, starts the HTTP server, and passes
// everything in through the environment:
//
//   VAULTGATE_BIN           the built binary
//   VAULTGATE_STDIO_CONFIG  config of the vault served over stdio
//   VAULTGATE_STDIO_VAULT   that vault's folder
//   VAULTGATE_HTTP_URL      http://127.0.0.1:PORT/mcp of a running `serve --http`
//   VAULTGATE_HTTP_TOKEN    its bearer token
//   VAULTGATE_HTTP_VAULT    that vault's folder
//   VAULTGATE_INTEROP_OUT   optional: a file to write the negotiated versions to
//
// Run it through `go test ./interop` (after `npm ci --prefix interop/ts`).

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

const env = process.env;
const missing = ['VAULTGATE_BIN', 'VAULTGATE_STDIO_CONFIG', 'VAULTGATE_STDIO_VAULT',
  'VAULTGATE_HTTP_URL', 'VAULTGATE_HTTP_TOKEN', 'VAULTGATE_HTTP_VAULT'].filter(k => !env[k]);
const skip = missing.length ? `run through go test ./interop (unset: ${missing.join(', ')})` : false;

const TOOLS = ['bash', 'delete', 'edit', 'list', 'move', 'read', 'search', 'write'];
const READ_ONLY = new Set(['read', 'list', 'search']);

// The SDK keeps the version it negotiated to itself; watch the initialize
// answer go by on the transport instead.
function recordVersion(transport, seen) {
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => handler,
    set: h => {
      handler = (msg, extra) => {
        if (msg?.result?.protocolVersion && !seen.version) seen.version = msg.result.protocolVersion;
        return h?.(msg, extra);
      };
    },
  });
}

function text(res) {
  return res.content.filter(c => c.type === 'text').map(c => c.text).join('');
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  return { text: text(res), isError: res.isError === true };
}

// scenario runs every tool once and a denied call against a fresh copy of
// testdata/vault, checking each answer and the file it touched. The Go side
// checks the same end state on disk afterwards.
function scenario(label, vault, connect) {
  describe(label, { skip }, () => {
    let client;
    const seen = {};
    before(async () => {
      ({ client } = await connect(seen));
    });
    after(async () => {
      await client?.close();
    });
    const disk = p => readFileSync(join(vault(), p), 'utf8');

    test('initialize', t => {
      assert.equal(client.getServerVersion().name, 'vaultgate');
      assert.match(client.getInstructions() ?? '', /мета\/бобер: write/);
      assert.ok(seen.version, 'no protocolVersion seen in the initialize result');
      t.diagnostic(`negotiated protocol ${seen.version} (client offered ${LATEST_PROTOCOL_VERSION})`);
      if (env.VAULTGATE_INTEROP_OUT) {
        appendFileSync(env.VAULTGATE_INTEROP_OUT, `typescript-sdk ${label}: offered ${LATEST_PROTOCOL_VERSION}, negotiated ${seen.version}\n`);
      }
    });

    test('tools/list: the eight tools and truthful annotations', async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map(t => t.name).sort(), TOOLS);
      for (const tool of tools) {
        const a = tool.annotations ?? {};
        if (READ_ONLY.has(tool.name)) {
          assert.equal(a.readOnlyHint, true, `${tool.name} readOnlyHint`);
          assert.equal(a.destructiveHint, false, `${tool.name} destructiveHint`);
        } else {
          assert.equal(a.readOnlyHint, false, `${tool.name} readOnlyHint`);
          assert.equal(a.destructiveHint, true, `${tool.name} destructiveHint`);
        }
        assert.equal(tool.inputSchema.type, 'object', `${tool.name} inputSchema`);
      }
    });

    test('read returns the text exactly', async () => {
      const r = await call(client, 'read', { path: 'Welcome.md' });
      assert.equal(r.isError, false, r.text);
      assert.equal(r.text, disk('Welcome.md'));
      const cyr = await call(client, 'read', { path: 'мета/x.md' });
      assert.deepEqual(cyr, { text: 'protected note\n', isError: false });
    });

    test('write creates the file', async () => {
      const r = await call(client, 'write', { path: 'notes/new.md', content: 'привет, 💬\n' });
      assert.equal(r.isError, false, r.text);
      assert.equal(disk('notes/new.md'), 'привет, 💬\n');
    });

    test('edit after read', async () => {
      const r = await call(client, 'edit', { path: 'Welcome.md', old_string: 'todo: read the README', new_string: 'done: read the README' });
      assert.equal(r.isError, false, r.text);
      assert.match(disk('Welcome.md'), /- \[ \] done: read the README\n$/);
    });

    test('edit of an unread file is refused', async () => {
      const r = await call(client, 'edit', { path: 'notes/ideas.md', old_string: 'Ideas', new_string: 'Thoughts' });
      assert.equal(r.isError, true);
      assert.equal(disk('notes/ideas.md'), '# Ideas\n\nA note about #ideas and [[Welcome]].\n');
    });

    test('move', async () => {
      const r = await call(client, 'move', { source: 'notes/new.md', destination: 'notes/moved.md' });
      assert.equal(r.isError, false, r.text);
      assert.equal(existsSync(join(vault(), 'notes/new.md')), false);
      assert.equal(disk('notes/moved.md'), 'привет, 💬\n');
    });

    test('delete in мета/бобер', async () => {
      const r = await call(client, 'delete', { path: 'мета/бобер/x.md' });
      assert.equal(r.isError, false, r.text);
      assert.equal(existsSync(join(vault(), 'мета/бобер/x.md')), false);
    });

    test('list labels zones', async () => {
      const r = await call(client, 'list', {});
      assert.equal(r.isError, false, r.text);
      for (const name of ['Welcome.md', 'notes', 'мета', '💬 чаты', '[protected]', '[create]', '[edit']) {
        assert.ok(r.text.includes(name), `list lacks ${name}:\n${r.text}`);
      }
      const sub = await call(client, 'list', { path: 'мета' });
      assert.ok(sub.text.includes('бобер') && sub.text.includes('[write'), sub.text);
    });

    test('search', async () => {
      const r = await call(client, 'search', { query: 'ship vaultgate' });
      assert.equal(r.isError, false, r.text);
      assert.ok(r.text.includes('notes/projects/2026/plan.md'), r.text);
      const none = await call(client, 'search', { query: 'no such words anywhere 4242' });
      assert.equal(none.isError, false, none.text);
      assert.ok(!none.text.includes('.md:'), none.text);
    });

    test('bash runs on the analysis (wall off)', async () => {
      const r = await call(client, 'bash', { command: 'echo hi > notes/x.md && cat notes/x.md' });
      assert.equal(r.isError, false, r.text);
      assert.match(r.text, /\bhi\b/);
      assert.equal(disk('notes/x.md'), 'hi\n');
    });

    test('a denied delete names the zone and leaves the file', async () => {
      const r = await call(client, 'delete', { path: 'мета/x.md' });
      assert.equal(r.isError, true, r.text);
      assert.match(r.text, /zone protected/);
      assert.match(r.text, /Deleting is allowed in: мета\/бобер/);
      assert.equal(disk('мета/x.md'), 'protected note\n');
    });

    test('denied bash changes nothing', async () => {
      const r = await call(client, 'bash', { command: 'rm мета/план.md' });
      assert.equal(r.isError, true, r.text);
      assert.match(r.text, /protected/);
      assert.ok(existsSync(join(vault(), 'мета/план.md')));
    });

    test('a malformed call is refused', async () => {
      const r = await client.callTool({ name: 'read', arguments: { path: 'Welcome.md', nope: 1 } }).then(
        res => ({ isError: res.isError === true, text: text(res) }),
        err => ({ isError: true, text: String(err) }));
      assert.equal(r.isError, true, r.text);
    });
  });
}

scenario('stdio', () => env.VAULTGATE_STDIO_VAULT, async seen => {
  const transport = new StdioClientTransport({
    command: env.VAULTGATE_BIN,
    args: ['serve', '--config', env.VAULTGATE_STDIO_CONFIG],
    env: { PATH: env.PATH ?? '/usr/bin:/bin', HOME: env.HOME ?? '/tmp', LANG: 'C.UTF-8' },
    stderr: 'inherit',
  });
  recordVersion(transport, seen);
  const client = new Client({ name: 'vaultgate-interop-ts', version: '1' });
  await client.connect(transport);
  return { client };
});

scenario('http', () => env.VAULTGATE_HTTP_VAULT, async seen => {
  const transport = new StreamableHTTPClientTransport(new URL(env.VAULTGATE_HTTP_URL), {
    requestInit: { headers: { Authorization: `Bearer ${env.VAULTGATE_HTTP_TOKEN}` } },
  });
  recordVersion(transport, seen);
  const client = new Client({ name: 'vaultgate-interop-ts', version: '1' });
  await client.connect(transport);
  // the HTTP transport sends the negotiated version in every later request
  assert.equal(transport.protocolVersion, seen.version);
  return { client };
});

describe('http auth', { skip }, () => {
  test('a wrong token is a 401, through the SDK and on the wire', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(env.VAULTGATE_HTTP_URL), {
      requestInit: { headers: { Authorization: 'Bearer wrong-token-0123456789abcdef' } },
    });
    const client = new Client({ name: 'vaultgate-interop-ts', version: '1' });
    await assert.rejects(client.connect(transport), err => {
      assert.ok(err instanceof StreamableHTTPError, String(err));
      assert.equal(err.code, 401);
      return true;
    });
    await client.close();

    for (const auth of [undefined, 'Bearer wrong-token-0123456789abcdef', `Basic ${env.VAULTGATE_HTTP_TOKEN}`]) {
      const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
      if (auth) headers.Authorization = auth;
      const res = await fetch(env.VAULTGATE_HTTP_URL, {
        method: 'POST', headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'delete', arguments: { path: 'Welcome.md' } } }),
      });
      assert.equal(res.status, 401, `${auth}: ${res.status}`);
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
      await res.body?.cancel();
    }
    assert.ok(existsSync(join(env.VAULTGATE_HTTP_VAULT, 'Welcome.md')));
  });
});
