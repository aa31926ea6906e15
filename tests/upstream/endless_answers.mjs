// An upstream whose protected resource metadata never ends: at its well-known URLs it streams
// `{"resource": "aaaa…` up to LIMIT bytes (64 MiB by default), as a compromised server could to
// exhaust its clients' memory; every other request gets 401. `GET /test/sent` answers
// `[{"sent", "closed", "ended"}]`, one per metadata request: the bytes written so far, whether
// the reader went away before the end, and whether it was all written (neither: still going).
//
// Usage: node endless_answers.mjs [LIMIT]
// Prints `listening on http://127.0.0.1:PORT/mcp` when ready.
import http from 'node:http';

const limit = Number(process.argv[2] ?? 64 * 1024 * 1024);
const piece = Buffer.alloc(64 * 1024, 'a');
const answers = [];
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/test/sent') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(answers));
    return;
  }
  if (req.url.startsWith('/.well-known/oauth-protected-resource')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"resource": "');
    const answer = { sent: 0, closed: false, ended: false };
    answers.push(answer);
    res.on('close', () => { if (!answer.ended) answer.closed = true; });
    const more = () => {
      while (answer.sent < limit && !answer.closed) {
        answer.sent += piece.length;
        if (!res.write(piece)) return res.once('drain', more);
      }
      answer.ended = true;
      res.end('"}');
    };
    more();
    return;
  }
  req.resume();
  res.writeHead(401, { 'www-authenticate': 'Bearer' });
  res.end();
});
server.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/mcp`);
});
