import { Schema } from "effect"
import { BROADENED_WORDS, TEXT_MATCHES } from "../Domain/Discover.ts"
import { Preview } from "../Domain/Preview.ts"
import { LISTING_MAX_BYTES } from "./ListingBudget.ts"
import { TAG_LISTING_MAX } from "./TagsInUse.ts"

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
  page: Schema.NullOr(Schema.Int).annotations({ description: "The page asked for; null when unset (see page)" }),
  limit: Schema.NullOr(Schema.Int).annotations({ description: "The limit asked for; null when unset (see limit)" })
}).annotations({
  description: "The parameters as read: unset text values are empty strings, other unset values null"
})

/** How `q` matched (src/Catalog/Search.ts): null without one. */
export const TextMatchField = Schema.NullOr(Schema.Literal(...TEXT_MATCHES)).annotations({
  description: "How the text query q matched; null without q. `exact`: every word as written (stemmed: " +
    "\"caches\" finds \"cache\"), with websearch syntax (\"a phrase\", or, -word). A query that matches nothing " +
    "that way, and uses no such syntax, is broadened: `prefix`, every one of its first " +
    `${BROADENED_WORDS} words (stop words left out) as the start of a word ("postgres slow" finds "PostgreSQL ... ` +
    "slower\"); then `any`, at least one of them, those holding more of them first. Numbers and words of one or " +
    "two characters are matched whole, never as word starts."
})

/** Present only on a page cut short; see fitListing. */
export const ItemsOmitted = Schema.optional(Schema.Int.annotations({
  description:
    `Items at the end of this page left out to keep the answer under ${LISTING_MAX_BYTES / 1024 / 1024} MiB; ` +
    "absent when none were. Ask for the same page with a smaller limit to read them."
}))

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
  total: Schema.Int.annotations({
    description: "Matches: exact up to 1,000; above, not counted but the larger of PostgreSQL's estimate and the " +
      "matches this page's read has seen, so a deeper page may show more. Follow next for every match"
  }),
  page: Schema.Int,
  limit: Schema.Int,
  pages: Schema.Int,
  match: TextMatchField,
  query: QueryEcho,
  reconstructNote: Schema.String,
  next: Schema.NullOr(Schema.String).annotations({ description: "Path of the following page; null on the last page" }),
  nextActions: NextActions,
  items: Schema.Array(Preview),
  itemsOmitted: ItemsOmitted
}).annotations({ identifier: "DiscoverResponse" })

export const CatalogResponse = Schema.Struct({
  total: Schema.Int,
  page: Schema.Int,
  limit: Schema.Int,
  pages: Schema.Int,
  match: TextMatchField,
  tags: Schema.Array(Schema.String).annotations({
    description: `The tags in use, most used first: at most ${TAG_LISTING_MAX} (tagCount says how many there ` +
      "are); with include=demo the demo packet's tags count too"
  }),
  tagCount: Schema.Int.annotations({ description: "How many distinct tags are in use" }),
  sort: Schema.String,
  items: Schema.Array(Preview),
  itemsOmitted: ItemsOmitted
}).annotations({ identifier: "CatalogResponse" })
