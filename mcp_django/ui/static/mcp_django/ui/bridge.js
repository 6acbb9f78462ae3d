/* mcp_django's MCP Apps bridge (SEP-1865, 2026-01-26): the view's side of the host's postMessage JSON-RPC.
 *
 * window.mcpApp.onToolInput(fn), .onToolResult(fn), .onToolCancelled(fn), .onHostContext(fn) register
 * handlers; .callTool(name, args) and .readResource(uri) go through the host to the server; .ready is
 * the promise of the ui/initialize result. No dependency; messages from anyone but the parent window
 * are ignored. Each tools/call carries _meta["mcp_django/origin"] = "app": the server's audit trail
 * records the call as the view's, and app-only tools take only such calls (a claim, not a proof).
 */
(function () {
  "use strict";
  var PROTOCOL = "2026-01-26";
  var host = window.parent;
  var nextId = 1;
  var pending = {};
  var handlers = {input: [], result: [], cancelled: [], context: []};
  var last = {};
  var MARKER = {"mcp_django/origin": "app"};

  function post(message) {
    message.jsonrpc = "2.0";
    // The host's origin is not known to a sandboxed view (its own origin is opaque).
    host.postMessage(message, "*");
  }

  function request(method, params) {
    var id = nextId++;
    return new Promise(function (resolve, reject) {
      pending[id] = {resolve: resolve, reject: reject};
      post({id: id, method: method, params: params || {}});
    });
  }

  function notify(method, params) {
    post({method: method, params: params || {}});
  }

  function emit(kind, params) {
    last[kind] = params;
    handlers[kind].forEach(function (handler) { handler(params); });
  }

  function on(kind) {
    return function (handler) {
      handlers[kind].push(handler);
      if (kind in last) handler(last[kind]);  // a handler registered late still sees what came
    };
  }

  var NOTIFICATIONS = {
    "ui/notifications/tool-input": "input",
    "ui/notifications/tool-result": "result",
    "ui/notifications/tool-cancelled": "cancelled",
    "ui/notifications/host-context-changed": "context"
  };

  window.addEventListener("message", function (event) {
    var message = event.data;
    if (event.source !== host || !message || message.jsonrpc !== "2.0") return;
    if (message.method === undefined && message.id in pending) {
      var waiting = pending[message.id];
      delete pending[message.id];
      if (message.error) {
        var error = new Error(message.error.message || "JSON-RPC error");
        error.code = message.error.code;
        error.data = message.error.data;
        waiting.reject(error);
      } else {
        waiting.resolve(message.result);
      }
    } else if (message.method in NOTIFICATIONS && message.id === undefined) {
      emit(NOTIFICATIONS[message.method], message.params || {});
    } else if (message.id !== undefined && (message.method === "ping" || message.method === "ui/resource-teardown")) {
      post({id: message.id, result: {}});
    } else if (message.id !== undefined && message.method !== undefined) {
      post({id: message.id, error: {code: -32601, message: "Method not found: " + message.method}});
    }
  });

  function reportSize() {
    var root = document.documentElement;
    notify("ui/notifications/size-changed", {width: root.scrollWidth, height: root.scrollHeight});
  }

  var app = {
    hostContext: {},
    onToolInput: on("input"),
    onToolResult: on("result"),
    onToolCancelled: on("cancelled"),
    onHostContext: on("context"),
    request: request,
    notify: notify,
    callTool: function (name, args) {
      return request("tools/call", {name: name, arguments: args || {}, _meta: MARKER});
    },
    readResource: function (uri) { return request("resources/read", {uri: uri}); },
    log: function (level, data) { notify("notifications/message", {level: level, data: data}); }
  };
  app.onHostContext(function (context) {
    for (var key in context) app.hostContext[key] = context[key];
  });
  app.ready = request("ui/initialize", {
    protocolVersion: PROTOCOL,
    appInfo: {name: document.title || "mcp_django app", version: "1"},
    appCapabilities: {}
  }).then(function (result) {
    emit("context", (result && result.hostContext) || {});
    notify("ui/notifications/initialized");
    if (window.ResizeObserver) new ResizeObserver(reportSize).observe(document.documentElement);
    return result;
  });
  window.mcpApp = app;
})();
