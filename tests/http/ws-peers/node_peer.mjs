// The WebSocket interop tests' npm `ws` peer (see py_peer.py for the modes):
//   node node_peer.mjs server [--plain] [--port P]
//   node node_peer.mjs client URL [--plain]
import { randomBytes } from 'node:crypto';
import { WebSocket, WebSocketServer } from 'ws';

const [mode, ...rest] = process.argv.slice(2);
const plain = rest.includes('--plain');
const MAX = 1 << 24;

function check(cond, what) {
  if (!cond) {
    console.error(`check failed: ${what}`);
    process.exit(1);
  }
}

if (mode === 'server') {
  const at = rest.indexOf('--port');
  const port = at >= 0 ? Number(rest[at + 1]) : 0;
  const wss = new WebSocketServer({ host: '127.0.0.1', port, perMessageDeflate: !plain, maxPayload: MAX });
  wss.on('listening', () => console.log(`port ${wss.address().port}`));
  wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));
} else {
  const ws = new WebSocket(rest[0], { perMessageDeflate: !plain, maxPayload: MAX });
  const inbox = [];
  let waiting = null;
  ws.on('message', (data, isBinary) => {
    inbox.push({ data, isBinary });
    if (waiting) waiting();
  });
  const next = () => new Promise((resolve) => {
    const take = () => { waiting = null; resolve(inbox.shift()); };
    if (inbox.length) take(); else waiting = take;
  });
  ws.on('open', async () => {
    // ws.extensions: the agreed Sec-WebSocket-Extensions value.
    check(ws.extensions.includes('permessage-deflate') === !plain, `extensions ${ws.extensions}`);
    const messages = [
      [Buffer.from('h\u00e9llo'), false], [Buffer.from([0, 1, 2]), true], [Buffer.alloc(0), false],
      [Buffer.alloc(1 << 20, 'a'), false], [randomBytes(300000), true],
    ];
    for (const [data, binary] of messages) {
      ws.send(data, { binary });
      const got = await next();
      check(got.isBinary === binary && got.data.equals(data), `echo of ${data.length} bytes`);
    }
    ws.send('frag', { fin: false });
    ws.send('men', { fin: false });
    ws.send('ted', { fin: true });
    const frag = await next();
    check(!frag.isBinary && frag.data.toString() === 'fragmented', 'a fragmented text message');
    ws.once('pong', (data) => {
      check(data.toString() === 'hi', 'the pong payload');
      ws.close(4000, 'done');
    });
    ws.ping('hi');
  });
  ws.on('close', (code) => {
    check(code === 4000, `close code ${code}`);
    console.log('ok');
    process.exit(0);
  });
  ws.on('error', (e) => check(false, `error ${e.message}`));
}
