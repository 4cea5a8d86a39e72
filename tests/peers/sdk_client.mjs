// The official TypeScript MCP client against toolcost's reference server.
// usage: node sdk_client.mjs <sdk dir> <url> <token> <tool> <arguments JSON>
// Prints one JSON line: the tool names listed, the call's result and the protocol version.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [sdkDir, url, token, tool, args] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(sdkDir, "dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "toolcost-test", version: "1" }, { capabilities: {} });
await client.connect(transport);
const listed = await client.listTools();
const result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
console.log(JSON.stringify({ tools: listed.tools.map((t) => t.name), result, protocol: transport.protocolVersion }));
await client.close();
