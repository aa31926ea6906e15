// A server that answers every request with a redirect to TARGET (307, which keeps the method
// and body), and records the headers of each request it gets: a stand-in for an upstream, or a
// page on it, that sends its clients elsewhere. Without TARGET it answers 404 and only records.
// `GET /test/seen` answers the recorded requests, `[{method, url, headers}]`. `GET /sse` is a
// legacy SSE server's stream instead, whose `endpoint` event names TARGET.
//
// Usage: node redirector.mjs [TARGET] [HOST]   (HOST: the address to listen on, 127.0.0.1 by default)
// Prints `listening on http://HOST:PORT/mcp` when ready.
import http from 'node:http';

const [target, host = '127.0.0.1'] = process.argv.slice(2);
const seen = [];
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/test/seen') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(seen));
    return;
  }
  seen.push({ method: req.method, url: req.url, headers: req.headers });
  if (req.method === 'GET' && req.url === '/sse' && target) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(`event: endpoint\ndata: ${target}\n\n`);
    return;
  }
  req.resume();
  req.on('end', () => {
    if (target) {
      res.writeHead(307, { location: target });
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
    }
    res.end();
  });
});
server.listen(0, host, () => {
  console.log(`listening on http://${host}:${server.address().port}/mcp`);
});
