import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath, pathToFileURL } from "node:url"
import solc from "solc"

export interface TestUsdcArtifact {
  readonly contractName: "TestUsdc"
  readonly abi: ReadonlyArray<unknown>
  readonly bytecode: `0x${string}`
}

interface SolcOutput {
  readonly errors?: ReadonlyArray<{ readonly severity: string; readonly formattedMessage: string }>
  readonly contracts?: Record<
    string,
    Record<string, { abi: ReadonlyArray<unknown>; evm: { bytecode: { object: string } } }>
  >
}

// Source key is repository-relative: it is hashed into the bytecode's metadata, so an absolute
// path would make the artifact differ between checkouts.
const sourceKey = "contracts/TestUsdc.sol"
const sourcePath = fileURLToPath(new URL("../contracts/TestUsdc.sol", import.meta.url))
export const artifactPath = fileURLToPath(new URL("../adapters/chain/TestUsdc.json", import.meta.url))

export const compileTestUsdc = (): TestUsdcArtifact => {
  const input = {
    language: "Solidity",
    sources: { [sourceKey]: { content: readFileSync(sourcePath, "utf8") } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      // Cancun runs on anvil's default hardfork and on every chain x402 settles on today.
      evmVersion: "cancun",
      outputSelection: { [sourceKey]: { TestUsdc: ["abi", "evm.bytecode.object"] } }
    }
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput
  const errors = (output.errors ?? []).filter((error) => error.severity === "error")
  if (errors.length > 0) {
    throw new Error(`solc ${solc.version()} failed:\n${errors.map((error) => error.formattedMessage).join("\n")}`)
  }
  const contract = output.contracts?.[sourceKey]?.["TestUsdc"]
  if (contract === undefined) throw new Error("solc produced no TestUsdc contract")
  return { contractName: "TestUsdc", abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` }
}

export const serializeArtifact = (artifact: TestUsdcArtifact): string => `${JSON.stringify(artifact, null, 2)}\n`

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  writeFileSync(artifactPath, serializeArtifact(compileTestUsdc()))
  console.log(`wrote ${artifactPath} with solc ${solc.version()}`)
}
