import { type Address, type Hex, toHex } from "viem"
import { mnemonicToAccount } from "viem/accounts"

export interface ChainAccount {
  readonly address: Address
  readonly privateKey: Hex
}

// Anvil's and Hardhat's public development mnemonic: these keys must never hold real funds.
export const anvilMnemonic = "test test test test test test test test test test test junk"

export const anvilAccount = (index: number): ChainAccount => {
  const account = mnemonicToAccount(anvilMnemonic, { addressIndex: index })
  const privateKey = account.getHdKey().privateKey
  if (privateKey === null) throw new Error(`no private key derived for anvil account ${index}`)
  return { address: account.address, privateKey: toHex(privateKey) }
}
