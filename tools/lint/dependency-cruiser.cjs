/**
 * The dependency rule of the desk (`npm run lint:deps`, part of `npm test`): domain at the centre, ports in src/,
 * adapters that implement a port and import nothing else of the desk, adapters chosen only by the entrypoints,
 * and no import cycles.
 * @type {import("dependency-cruiser").IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "An import cycle makes initialisation order matter and couples both sides.",
      severity: "error",
      from: {},
      to: { circular: true }
    },
    {
      name: "adapters-chosen-by-entrypoints",
      comment: "Adapters are chosen from configuration in src/Adapters.ts, for the entrypoints (src/main.ts and the " +
        "command-line scripts), so the desk's code depends on ports only.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/Adapters\\.ts$" },
      to: { path: "^adapters/" }
    },
    {
      name: "adapters-import-ports",
      comment: "An adapter implements a port: it may import the ports and the domain, never services, repositories, " +
        "the HTTP layer or another kind of adapter.",
      severity: "error",
      from: { path: "^adapters/([^/]+)/" },
      to: {
        path: "^(src/|adapters/)",
        pathNot: ["^src/(Settlement|SignIn|ReceiptSigning|Payouts/Rail|RateLimiter|Storage)\\.ts$", "^src/Domain/", "^adapters/$1/"]
      }
    },
    {
      name: "domain-is-pure",
      comment: "src/Domain holds schemas, errors and pure rules: it depends on nothing else of the desk.",
      severity: "error",
      from: { path: "^src/Domain/" },
      to: { path: "^(src/|adapters/)", pathNot: "^src/Domain/" }
    },
    {
      name: "contract-knows-no-edge",
      comment: "The HttpApi contract (the Api.ts modules) describes the routes; the edge middleware, the failure " +
        "mapping and the handlers depend on it, not the other way round.",
      severity: "error",
      from: { path: "(^src/Api\\.ts$|^src/[^/]+/Api\\.ts$)" },
      // src/Mcp/Api.ts is contract too: the /mcp endpoint's description, which the MCP handler implements.
      to: { path: "(^src/Http/|^src/[^/]+/Http\\.ts$|^src/Mcp/(?!Api\\.ts$))", reachable: true }
    },
    {
      name: "mcp-beside-http",
      comment: "MCP tools call the services as REST handlers do; neither front door imports the other's internals.",
      severity: "error",
      from: { path: "^src/Mcp/" },
      to: { path: "(^src/Http/(?!Respond)|^src/[^/]+/Http\\.ts$)" }
    },
    {
      name: "services-know-no-front-door",
      comment: "Services and repositories answer both front doors (REST and MCP) and know neither.",
      severity: "error",
      from: {
        path: "^src/(Catalog|Ledger|Identity|Payouts|Settlement|RateLimiter)(\\.ts$|/)",
        pathNot: "^src/[^/]+/(Http|Api)\\.ts$"
      },
      to: { path: "(^src/(Http|Mcp|Pages)/|^src/[^/]+/(Http|Api)\\.ts$)" }
    },
    {
      name: "no-test-code-in-the-desk",
      severity: "error",
      from: { path: "^(src|adapters|scripts)/" },
      to: { path: "^test/" }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|\\.build|bench/results)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".mts", ".mjs", ".js"] }
  }
}
