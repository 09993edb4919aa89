// Preload for the e2e tests (node --require): the servers under test call
// server.listen(PORT), which binds every interface. Bind loopback only:
// the tests talk to 127.0.0.1 and nothing else may reach the server.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  const isPort = typeof port === 'number' || (typeof port === 'string' && /^\d+$/.test(port));
  if (isPort && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  return listen.apply(this, args);
};
