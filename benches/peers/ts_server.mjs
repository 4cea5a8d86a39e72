// The official TypeScript MCP SDK serving the same definitions as toolcost's reference server,
// over Streamable HTTP with sessions and JSON answers (as toolcost answers), for the
// side-by-side bench. `node ts_server.mjs TOOLS.json` prints the URL it listens on.
import fs from "node:fs";
import http from "node:http";
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  isInitializeRequest,
} from "@modelcontextprotocol/sdk/types.js";

const tools = JSON.parse(fs.readFileSync(process.argv[2], "utf8")).tools;
const names = new Set(tools.map((t) => t.name));

function server() {
  const s = new Server({ name: "peer", version: "1" }, { capabilities: { tools: {} } });
  s.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  // The cheapest honest call: a known name answers a small result, an unknown one an error.
  s.setRequestHandler(CallToolRequestSchema, async (req) => {
    const known = names.has(req.params.name);
    return {
      content: [{ type: "text", text: known ? `called ${req.params.name}` : "unknown tool" }],
      isError: !known,
    };
  });
  return s;
}

const sessions = new Map();
const httpServer = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  let msg;
  try {
    msg = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    res.writeHead(400).end();
    return;
  }
  const sid = req.headers["mcp-session-id"];
  let transport = sid ? sessions.get(sid) : undefined;
  if (!transport) {
    if (!isInitializeRequest(msg)) {
      res.writeHead(400).end();
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => sessions.set(id, transport),
    });
    await server().connect(transport);
  }
  await transport.handleRequest(req, res, msg);
});
httpServer.listen(0, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${httpServer.address().port}/mcp`);
});
