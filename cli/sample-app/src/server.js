// A tiny orders service: GET /orders?customer=...&discount=...
const http = require('node:http');
const { findOrders, applyDiscount } = require('./orders');

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  if (url.pathname !== '/orders') {
    res.writeHead(404).end();
    return;
  }
  const sql = findOrders(url.searchParams.get('customer'));
  const total = applyDiscount(100, url.searchParams.get('discount') || '0');
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ sql, total }));
});

if (require.main === module) server.listen(3000);
module.exports = { server };
