import { Schema } from "effect"
import { Preview } from "../Domain/Preview.ts"

export const QueryEcho = Schema.Struct({
  q: Schema.String,
  tag: Schema.String,
  sort: Schema.String,
  maxPrice: Schema.NullOr(Schema.Number),
  minSavings: Schema.NullOr(Schema.Number),
  minReconstruct: Schema.NullOr(Schema.Number),
  since: Schema.NullOr(Schema.String),
  vendor: Schema.String,
  vendorNote: Schema.String,
  page: Schema.Int,
  limit: Schema.Int
})

export const NextActions = Schema.Struct({
  preview: Schema.String,
  buy: Schema.String,
  fetch: Schema.String,
  file: Schema.String
})

export const DiscoverResponse = Schema.Struct({
  name: Schema.String,
  site: Schema.String,
  identityHeader: Schema.String,
  total: Schema.Int,
  page: Schema.Int,
  limit: Schema.Int,
  pages: Schema.Int,
  query: QueryEcho,
  reconstructNote: Schema.String,
  next: Schema.NullOr(Schema.String).annotations({ description: "Path of the following page; null on the last page" }),
  nextActions: NextActions,
  items: Schema.Array(Preview)
}).annotations({ identifier: "DiscoverResponse" })

export const CatalogResponse = Schema.Struct({
  total: Schema.Int,
  page: Schema.Int,
  limit: Schema.Int,
  pages: Schema.Int,
  tags: Schema.Array(Schema.String),
  sort: Schema.String,
  items: Schema.Array(Preview)
}).annotations({ identifier: "CatalogResponse" })
