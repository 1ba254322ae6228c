import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { TestDesk } from "./Desk.ts"

/** The official MCP client connected to the test desk's /mcp, with `headers` on every request; closed with the scope. */
export const connectMcp = (headers: Record<string, string> = {}) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.acquireRelease(
      Effect.promise(async () => {
        const client = new Client({ name: "desk-test", version: "1.0.0" })
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${desk.url}/mcp`), { requestInit: { headers } })
        )
        return client
      }),
      (client) => Effect.promise(() => client.close())
    ))
